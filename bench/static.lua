-- One fixed request, built once by wrk: BENCH_METHOD (GET), BENCH_BODY, BENCH_CONTENT_TYPE,
-- BENCH_AUTHORIZATION (a whole header value, e.g. "Bearer ey..."). The floor, verify with one
-- token, the argon2 bound, GET /login and fastapi-users' two endpoints use it.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
wrk.body = os.getenv("BENCH_BODY")
if os.getenv("BENCH_CONTENT_TYPE") then
  wrk.headers["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE")
end
if os.getenv("BENCH_AUTHORIZATION") then
  wrk.headers["Authorization"] = os.getenv("BENCH_AUTHORIZATION")
end
dofile(os.getenv("BENCH_DIR") .. "/status.lua")
