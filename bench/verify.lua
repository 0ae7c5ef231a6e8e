-- GET /api/v2/auth/verify with the access token bench/run.py obtained (BENCH_ACCESS_TOKEN).
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_ACCESS_TOKEN")
dofile(os.getenv("BENCH_DIR") .. "/status.lua")
