-- POST /api/v2/auth/login with the JSON body bench/run.py built (BENCH_LOGIN_BODY).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_LOGIN_BODY")
wrk.headers["Content-Type"] = "application/json"
dofile(os.getenv("BENCH_DIR") .. "/status.lua")
