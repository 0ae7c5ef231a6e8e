-- GET / on the constant-JSON floor app; only counts statuses.
dofile(os.getenv("BENCH_DIR") .. "/status.lua")
