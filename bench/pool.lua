-- Requests built from the lines of a file (BENCH_POOL_FILE), shared out between wrk's threads:
-- thread t of n takes lines t, t+n, t+2n, ... starting after BENCH_POOL_OFFSET lines.
--   BENCH_POOL_BEARER=1      the line is a bearer token (Authorization: Bearer <line>)
--   BENCH_POOL_BODY=<fmt>    the body is string.format(fmt, line), e.g. {"email":"%s"}
--   BENCH_POOL_ONCE=1        each line is used at most once (refresh tokens): past the end of
--                            the file the script sends "exhausted" (an invalid token, so the
--                            run is flagged) instead of reusing a line
-- plus BENCH_METHOD and BENCH_CONTENT_TYPE as in static.lua, and BENCH_THREADS (wrk's --threads). done() prints
--   bench-pool next=<first unused line>
-- so that the next run of a BENCH_POOL_ONCE pool starts after every line this one sent.
dofile(os.getenv("BENCH_DIR") .. "/status.lua")

local status_init, status_done = init, done
local offset = tonumber(os.getenv("BENCH_POOL_OFFSET") or "0")

function init(args)
  status_init(args)
  lines = {}
  for line in io.lines(os.getenv("BENCH_POOL_FILE")) do
    if line ~= "" then
      table.insert(lines, line)
    end
  end
  nthreads = tonumber(os.getenv("BENCH_THREADS"))  -- bench_threads is only filled in setup's state
  once = os.getenv("BENCH_POOL_ONCE") == "1"
  method = os.getenv("BENCH_METHOD") or "GET"
  body_format = os.getenv("BENCH_POOL_BODY")
  base_headers = {}
  if os.getenv("BENCH_CONTENT_TYPE") then
    base_headers["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE")
  end
  bearer = os.getenv("BENCH_POOL_BEARER") == "1"
  sent = 0
end

function request()
  local index = offset + id + sent * nthreads
  sent = sent + 1
  local line
  if index <= #lines then
    line = lines[index]
  elseif once then
    line = "exhausted"
  else
    line = lines[(index - 1) % #lines + 1]
  end
  local headers = {}
  for name, value in pairs(base_headers) do
    headers[name] = value
  end
  if bearer then
    headers["Authorization"] = "Bearer " .. line
  end
  local body = nil
  if body_format then
    body = string.format(body_format, line)
  end
  return wrk.format(method, nil, headers, body)
end

function done(summary, latency, requests)
  status_done(summary, latency, requests)
  local most = 0
  for _, thread in ipairs(bench_threads) do
    most = math.max(most, thread:get("sent"))
  end
  io.write(string.format("bench-pool next=%d\n", offset + most * #bench_threads))
end
