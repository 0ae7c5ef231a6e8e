-- POST /api/v2/auth/signup, each request with a new email:
-- b<BENCH_RUN_ID>-<thread>-<n>@bench.example.com, password BENCH_PASSWORD. Expects 201.
dofile(os.getenv("BENCH_DIR") .. "/status.lua")

local status_init = init

function init(args)
  status_init(args)
  run_id = os.getenv("BENCH_RUN_ID")
  password = os.getenv("BENCH_PASSWORD")
  sent = 0
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"email":"b%s-%d-%d@bench.example.com","password":"%s","full_name":"Bench Signup"}',
    run_id, id, sent, password)
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
