-- Shared by every wrk script: count responses with the expected status (BENCH_EXPECT, 200 unless
-- set) and the others, per thread, and print the totals on one line that bench/run.py parses:
--   bench-status ok=<n> bad=<n> last_bad=<status or 0>
-- Every scenario, the floor included, pays for this callback, so the ratios stay fair.
-- Each thread also gets an id (1, 2, ...) that the pool scripts use to share out their lines.

bench_threads = {}
local expected = tonumber(os.getenv("BENCH_EXPECT") or "200")

function setup(thread)
  table.insert(bench_threads, thread)
  thread:set("id", #bench_threads)
end

function init(args)
  ok, bad, last_bad = 0, 0, 0
end

function response(status, headers, body)
  if status == expected then
    ok = ok + 1
  else
    bad = bad + 1
    last_bad = status
  end
end

function done(summary, latency, requests)
  local total_ok, total_bad, seen_bad = 0, 0, 0
  for _, thread in ipairs(bench_threads) do
    total_ok = total_ok + thread:get("ok")
    total_bad = total_bad + thread:get("bad")
    if thread:get("last_bad") ~= 0 then
      seen_bad = thread:get("last_bad")
    end
  end
  io.write(string.format("bench-status ok=%d bad=%d last_bad=%d\n", total_ok, total_bad, seen_bad))
end
