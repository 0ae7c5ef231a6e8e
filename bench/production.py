"""The production shape: what every real deployment runs, measured against a floor behind the same
front. PostgreSQL and Redis (tests/support's launchers, as tests/system/production starts them), two
instances of the service with the shipped gunicorn.conf.py and SVC_ENV=production (JSON logs, rate
limits on and counted in Redis, SVC_TRUSTED_PROXIES=1 for the proxy in front), and two instances of
the floor app, all behind one nginx (the guide's example, tests/support/nginx.py: one site for the
service's instances, one for the floor's). Then verify against that floor, in ABCCBA order, and a
py-spy profile of one worker under the same load."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from log import progress
from probes import (
    Profile,
    WorkerTime,
    descendants,
    process_cpu_seconds,
    pyspy_profile,
    redis_calls,
    schedstat,
)
from servers import BENCH, ROOT, BenchServer, Instance, clean_env, seed_instance, start_all
from wrk import Result, Scenario, measure_mirrored, run_wrk

from tests.support.deployment import migrate, shared_settings
from tests.support.http import bearer, call
from tests.support.nginx import Nginx, start_nginx
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.redis import RedisServer, start_redis


@dataclass
class Deployment:
    """Several gunicorn instances behind one nginx site, measured as one server: the service's
    CPU time is its instances'; the deployment's adds nginx, Redis and PostgreSQL."""

    name: str
    base_url: str
    instances: list[BenchServer]
    dependencies: list[int] = field(default_factory=list)  # pids: nginx, redis, postgres
    redis_client: redis.Redis | None = None

    def cpu_seconds(self) -> float:
        return sum(instance.cpu_seconds() for instance in self.instances)

    def wait_idle(self, cap: float, interval: float = 0.5) -> float:
        return max(instance.wait_idle(cap, interval) for instance in self.instances)

    def sample_rss(self) -> None:
        for instance in self.instances:
            instance.sample_rss()

    def worker_pids(self) -> list[int]:
        return [pid for instance in self.instances for pid in instance.worker_pids()]

    def counters(self) -> dict[str, Any]:
        dependencies = [pid for root in self.dependencies for pid in descendants(root)]
        return {
            "at": time.monotonic(),
            "others": process_cpu_seconds(dependencies, waited_children=True),
            "sched": schedstat(self.worker_pids()),
            "redis": redis_calls(self.redis_client) if self.redis_client is not None else 0,
        }

    def delta(self, before: dict[str, Any], requests: int, service_cpu_ms: float
              ) -> dict[str, float]:
        after = self.counters()
        per = max(requests, 1)
        shares = WorkerTime.between(before["sched"], after["sched"], after["at"] - before["at"])
        others_ms = (after["others"] - before["others"]) * 1000 / per
        return {"deployment_cpu_ms": service_cpu_ms + others_ms, "on_cpu": shares.on_cpu,
                "runnable": shares.runnable, "off_cpu": shares.off_cpu,
                # INFO itself and the probe's own calls are not the service's
                "redis_per_request": max(0, after["redis"] - before["redis"] - 1) / per}


@dataclass
class Shape:
    service: Deployment
    floor: Deployment
    instance: Instance  # the seeded pools (the first instance's folder)
    token: str
    postgres: PostgresServer
    redis: RedisServer
    nginx: Nginx
    settings: dict[str, str]
    workers: int | None
    baseline: Deployment | None = None  # --baseline-root / --baseline-env
    profile: Profile = field(default_factory=Profile)


def _dependency_folder(stack: ExitStack) -> Path:
    # PostgreSQL runs as its own user when we are root: its folder must be reachable (0711), which
    # the benchmark's private temporary folder is not.
    base = Path(tempfile.mkdtemp(prefix="svc-bench-prod-"))
    base.chmod(0o711)
    stack.callback(shutil.rmtree, base, ignore_errors=True)
    return base


def _service_env(folder: Path, settings: dict[str, str]) -> dict[str, str]:
    (folder / "instance").mkdir(parents=True, exist_ok=True)
    return {**clean_env(), **settings, "SVC_INSTANCE_PATH": str(folder / "instance")}


def set_up_production(args: argparse.Namespace, stack: ExitStack, workdir: Path) -> Shape:
    """PostgreSQL, Redis, a migrated and seeded database, two instances of the service and two of
    the floor, nginx in front; smoke-checked."""
    progress("production shape: starting PostgreSQL and Redis")
    base = _dependency_folder(stack)
    postgres = start_postgres(base)
    stack.callback(postgres.stop)
    redis_server = start_redis(base / "redis")
    stack.callback(redis_server.stop)
    database_url = postgres.create_database("svc_bench")
    migrate(workdir, database_url)
    settings = {
        **shared_settings(database_url, redis_server.url),
        "SVC_ENV": "production",
        "SVC_PUBLIC_URL": "https://auth.bench.invalid",
        "SVC_TRUSTED_PROXIES": "1",  # nginx in front sets X-Forwarded-For (the guide's example)
        "SVC_MAIL_URL": f"file://{workdir / 'prod-mail'}",
        **dict(item.split("=", 1) for item in args.prod_env),
    }
    progress("production shape: seeding the database, opening sessions")
    first = _service_env(workdir / "prod-a", settings)
    instance = seed_instance("prod", workdir / "prod-a", first, args.accounts, 0)
    root = Path(args.service_root).resolve() if args.service_root else ROOT
    workers = args.prod_workers or args.workers
    if workers is not None:
        # As an operator sets it: WEB_CONCURRENCY, which gunicorn.conf.py reads.
        settings["WEB_CONCURRENCY"] = str(workers)
    floor_env = {**clean_env(), **({"WEB_CONCURRENCY": str(workers)} if workers else {})}
    specs = [("prod-a", "wsgi:app", root, {**first, **settings}, workdir, None),
             ("prod-b", "wsgi:app", root, _service_env(workdir / "prod-b", settings), workdir,
              None),
             ("floor-a", "floor_app:app", BENCH, floor_env, workdir, None),
             ("floor-b", "floor_app:app", BENCH, floor_env, workdir, None)]
    baseline = bool(args.baseline_root or args.baseline_env)
    if baseline:  # the same deployment with other code or settings, measured in the same run
        base_root = Path(args.baseline_root).resolve() if args.baseline_root else root
        base_settings = {**settings, **dict(item.split("=", 1) for item in args.baseline_env)}
        specs += [(name, "wsgi:app", base_root,
                   _service_env(workdir / name, base_settings), workdir, None)
                  for name in ("base-a", "base-b")]
    started = start_all(stack, specs, [{}, {}, {"path": "/"}, {"path": "/"}, {}, {}][:len(specs)])
    pairs = [started[i:i + 2] for i in range(0, len(started), 2)]
    # One nginx worker per core, as Debian's own nginx.conf has it (worker_processes auto).
    nginx = start_nginx(workdir / "nginx", [[s.base_url.removeprefix("http://") for s in pair]
                                            for pair in pairs], path="/",
                        worker_processes="auto")
    stack.callback(nginx.stop)
    client = redis_server.client()
    stack.callback(client.close)
    others = [nginx.process.pid, *(p.process.pid for p in (redis_server, postgres)
                                   if p.process is not None)]
    service, floor, *rest = [Deployment(name, site.base_url, pair, others, client)
                             for name, site, pair in zip(("production", "floor", "baseline"),
                                                         nginx.sites, pairs, strict=False)]
    token = instance.first_access_token()
    for _ in range(4):  # both instances, through the front
        status, body = call("GET", service.base_url + "/api/v2/auth/verify",
                            headers=bearer(token), timeout=30)
        if status != 200:
            raise SystemExit(f"verify through nginx failed: {status} {body}")
    progress(f"production shape up: {len(service.worker_pids())} service workers, "
             f"nginx at {service.base_url}")
    return Shape(service, floor, instance, token, postgres, redis_server, nginx, settings,
                 workers, rest[0] if rest else None)


def production_scenarios(shape: Shape) -> dict[str, Scenario]:
    pool = {"BENCH_POOL_FILE": str(shape.instance.pools / "access.txt"), "BENCH_POOL_BEARER": "1"}
    one = {"BENCH_AUTHORIZATION": f"Bearer {shape.token}"}
    path = "/api/v2/auth/verify"
    runs = {"prod_floor": Scenario("prod_floor", "floor: Flask, constant JSON, 2 instances "
                                   "behind nginx", shape.floor, "/", "static.lua"),
            # The service's fixed cost per request: the same hooks and headers, no token.
            "prod_const": Scenario("prod_const", "svc-auth's own constant JSON (GET /.well-"
                                   "known/openid-configuration), behind nginx", shape.service,
                                   "/.well-known/openid-configuration", "static.lua")}
    for suffix, what, target in (("", "", shape.service), ("_base", " (baseline)",
                                                           shape.baseline)):
        if target is None:
            continue
        runs[f"prod_verify{suffix}"] = Scenario(
            f"prod_verify{suffix}", f"GET {path}, one token, 2 instances behind nginx{what}",
            target, path, "static.lua", one)
        runs[f"prod_verify_pool{suffix}"] = Scenario(
            f"prod_verify_pool{suffix}", f"GET {path}, 200 tokens of 200 sessions, behind "
            f"nginx{what}", target, path, "pool.lua", pool)
    return runs


def measure_production(shape: Shape, args: argparse.Namespace,
                       results: dict[str, Result]) -> None:
    """The floor, the service's constant JSON, verify with one token and with 200 (and the
    baseline's), each twice in mirrored order; then the profile."""
    runs = production_scenarios(shape)
    merged = measure_mirrored(list(runs.values()), args)
    results.update(zip(runs, merged, strict=True))
    if args.profile:
        shape.profile = profile_worker(shape, runs["prod_verify_pool"], args)


def profile_worker(shape: Shape, scenario: Scenario, args: argparse.Namespace) -> Profile:
    """py-spy on one worker of the first instance while wrk loads verify (not a measured run:
    sampling costs CPU on the same cores)."""
    workers = shape.service.instances[0].worker_pids()
    if not workers:
        return Profile(error="no worker to profile")
    progress(f"production shape: py-spy on worker {workers[0]} for {args.profile} s")
    out = Path(tempfile.mkdtemp(prefix="svc-bench-pyspy-")) / "profile.txt"
    from threading import Thread

    holder: dict[str, Profile] = {}
    spy = Thread(target=lambda: holder.update(p=pyspy_profile(workers[0], args.profile, out)))
    spy.start()
    run_wrk(scenario, args, args.profile + 2)
    spy.join()
    shutil.rmtree(out.parent, ignore_errors=True)
    return holder.get("p", Profile(error="py-spy did not finish"))


def run_production(args: argparse.Namespace, stack: ExitStack, workdir: Path,
                   results: dict[str, Result], notes: dict[str, Any]) -> None:
    """Set up the production shape, measure it, and note what the report says of it."""
    load = os.getloadavg()
    shape = set_up_production(args, stack, workdir)
    measure_production(shape, args, results)
    shape.service.sample_rss()
    notes["production"] = {
        "load": load, "load_after": os.getloadavg(), "postgres": shape.postgres.version,
        "redis": shape.service.redis_client.info("server")["redis_version"]
        if shape.service.redis_client is not None else "?",
        "workers": shape.workers or "its default (one per core)",
        "variant": ", ".join(args.prod_env), "profile": shape.profile,
        "code": f"the checkout at {args.service_root}" if args.service_root else "this checkout",
        "baseline": ", ".join([*([f"the checkout at {args.baseline_root}"]
                                 if args.baseline_root else []), *args.baseline_env]),
        "rss_kib": max((kib for s in shape.service.instances for kib in s.peak_rss_kib.values()),
                       default=0),
    }
