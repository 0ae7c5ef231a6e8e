"""The benchmark's scenarios, in the order they run: set-up (databases, servers, smoke checks),
verify against the floor and at saturation, login against the argon2 bound, the other endpoints,
scaling from the small to the large database, fastapi-users, and the floor again at the end."""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import subprocess
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib import parse as urlparse

from log import progress
from report import peer_hashers, peer_versions
from servers import (
    BENCH,
    PEER_CONF,
    ROOT,
    Background,
    BenchServer,
    Instance,
    clean_env,
    create_fastapi_users_venv,
    migrate_template,
    prepare_instance,
    start_all,
    start_server,
)
from wrk import Result, Scenario, measure, measure_abba

from tests.support.http import bearer, call

SIGNUP_PASSWORD = "bench signup passphrase 9031"
JSON_POST = {"BENCH_METHOD": "POST", "BENCH_CONTENT_TYPE": "application/json"}


@dataclass
class Bench:
    """What the set-up made: the seeded instances, the running servers, the smoke-checked
    credentials, and where results and notes go."""

    args: argparse.Namespace
    workdir: Path
    main: Instance
    small: Instance
    large: Instance
    floor: BenchServer
    bound: BenchServer
    service: BenchServer
    service_small: BenchServer
    service_large: BenchServer
    servers: list[BenchServer]
    stack: ExitStack
    peer_python: Path | None
    password: str
    emails: list[str]
    token: str
    results: dict[str, Result]
    notes: dict[str, Any]

    def start(self, *server_args: Any, **server_kwargs: Any) -> BenchServer:
        """Another server, stopped when the run ends."""
        server = start_server(*server_args, **server_kwargs)
        self.stack.callback(server.stop)
        self.servers.append(server)
        return server


def pool(file: Path, **extra: str) -> dict[str, str]:
    return {"BENCH_POOL_FILE": str(file), **extra}


def verify_pool(instance: Instance) -> dict[str, str]:
    return pool(instance.pools / "access.txt", BENCH_POOL_BEARER="1")


def login_pool(instance: Instance, password: str) -> dict[str, str]:
    login_body = '{"email":"%s","password":"' + password + '"}'
    return {**JSON_POST, **pool(instance.pools / "emails.txt", BENCH_POOL_BODY=login_body)}


# Set-up ----------------------------------------------------------------------------------------

def set_up(args: argparse.Namespace, stack: ExitStack, workdir: Path,
           argon2: dict[str, int]) -> Bench:
    """Seed the databases (fastapi-users' environment installs meanwhile), start our servers,
    and check that each kind of request answers as the scenarios expect."""
    progress("set-up: migrating a template database, creating fastapi-users' venv")
    peer_venv = None if args.skip_peer else Background(
        lambda: create_fastapi_users_venv(workdir))
    if peer_venv is not None:
        peer_venv.start()
    template = migrate_template(workdir)
    large_setup = Background(lambda: prepare_instance("large", workdir, template,
                                                      args.large_accounts, 0))
    large_setup.start()
    small_setup = Background(lambda: prepare_instance("small", workdir, template,
                                                      args.accounts, 0))
    small_setup.start()
    progress("set-up: seeding the databases, opening sessions")
    main = prepare_instance("main", workdir, template, args.accounts, args.refresh_tokens)
    small: Instance = small_setup.result()
    large: Instance = large_setup.result()
    notes: dict[str, Any] = {"seed": {i.name: i.seed for i in (main, small, large)}}
    progress(f"set-up: {args.large_accounts:,} accounts seeded in "
             f"{large.seed['seed_seconds']:.1f} s")

    bound_env = {**clean_env(), "BENCH_ARGON2_MEMORY_COST": str(argon2["m"]),
                 "BENCH_ARGON2_TIME_COST": str(argon2["t"]),
                 "BENCH_ARGON2_PARALLELISM": str(argon2["p"]),
                 "BENCH_ARGON2_PASSWORD": main.seed["password"]}
    servers = start_all(stack, [
        ("floor", "floor_app:app", BENCH, clean_env(), workdir, args.workers),
        ("argon2", "argon2_app:app", BENCH, bound_env, workdir, args.workers),
        ("service", "wsgi:app", ROOT, main.env, workdir, args.workers),
        ("service-small", "wsgi:app", ROOT, small.env, workdir, args.workers),
        ("service-large", "wsgi:app", ROOT, large.env, workdir, args.workers),
    ], [{"path": "/"}, {"path": "/", "expect": 405}, {}, {}, {}])
    floor, bound, service, service_small, service_large = servers
    peer_python = peer_venv.result() if peer_venv is not None else None
    progress("set-up done: servers up")

    # Smoke checks: each kind of request answers as the scenarios expect.
    password = main.seed["password"]
    emails = (main.pools / "emails.txt").read_text().split()
    status, body = call("POST", service.url("/api/v2/auth/login"),
                        {"email": emails[0], "password": password}, timeout=30)
    if status != 200:
        raise SystemExit(f"login failed: {status} {body}")
    token = main.first_access_token()
    status, body = call("GET", service.url("/api/v2/auth/verify"), headers=bearer(token),
                        timeout=30)
    if status != 200:
        raise SystemExit(f"verify failed: {status} {body}")
    return Bench(args, workdir, main, small, large, floor, bound, service, service_small,
                 service_large, servers, stack, peer_python, password, emails, token, {}, notes)


# The scenarios ---------------------------------------------------------------------------------

def verify_against_the_floor(bench: Bench) -> None:
    """The floor, the service's own constant JSON, verify with one token and with a pool."""
    args, service, results = bench.args, bench.service, bench.results
    results["floor"] = measure(
        Scenario("floor", "floor: Flask, constant JSON (GET /)", bench.floor, "/", "static.lua"),
        args)
    for scenario in (
        Scenario("service_const", "svc-auth's own constant JSON (GET /.well-known/openid-"
                 "configuration)", service, "/.well-known/openid-configuration", "static.lua"),
        Scenario("verify", "GET /api/v2/auth/verify, one token", service, "/api/v2/auth/verify",
                 "static.lua", {"BENCH_AUTHORIZATION": f"Bearer {bench.token}"}),
        Scenario("verify_pool", "GET /api/v2/auth/verify, 200 tokens of 200 sessions", service,
                 "/api/v2/auth/verify", "pool.lua", verify_pool(bench.main)),
    ):
        results[scenario.key] = measure(scenario, args)


def saturation(bench: Bench) -> None:
    """Verify long enough for workers to be recycled (gunicorn.conf.py's max_requests): the
    slowest request of the run, and how many workers started during it."""
    args, service = bench.args, bench.service
    booted = service.log().count("Booting worker")
    bench.results["saturation"] = measure(
        Scenario("saturation", f"GET /api/v2/auth/verify, 200 tokens, {args.saturation} s at "
                 "saturation", service, "/api/v2/auth/verify", "pool.lua",
                 verify_pool(bench.main)), args, warmup=False, duration=args.saturation)
    bench.notes["recycled"] = service.log().count("Booting worker") - booted
    service.wait_idle(args.drain_cap)


def login_against_the_bound(bench: Bench) -> None:
    """Login and the argon2 bound, ABBA."""
    bound_run = Scenario("bound", "bound: Flask, one argon2id verify (POST /)", bench.bound, "/",
                         "static.lua", {**JSON_POST, "BENCH_BODY": json.dumps(
                             {"email": bench.emails[0], "password": bench.password})})
    login_run = Scenario("login", "POST /api/v2/auth/login, 200 accounts", bench.service,
                         "/api/v2/auth/login", "pool.lua",
                         login_pool(bench.main, bench.password))
    bench.results["bound"], bench.results["login"] = measure_abba(bound_run, login_run,
                                                                  bench.args)


def other_endpoints(bench: Bench) -> None:
    """Refresh (each token once), signup, the hosted login page, forgot-password; then the main
    service stops (its outbox may still be busy; the rest of the run must not share a CPU)."""
    args, service, main = bench.args, bench.service, bench.main
    unknown = bench.workdir / "unknown-emails.txt"
    unknown.write_text("".join(f"nobody{n:04d}@bench.example.com\n" for n in range(200)))
    mail = {"mail_dir": main.mail}
    refresh = Scenario(
        "refresh", "POST /api/v2/auth/refresh, each token once", service,
        "/api/v2/auth/refresh", "pool.lua",
        {**JSON_POST, **pool(main.pools / "refresh.txt",
                             BENCH_POOL_BODY='{"refresh_token":"%s"}')}, pool_once=True)
    for scenario in (
        refresh,
        Scenario("signup", "POST /api/v2/auth/signup, a new email each", service,
                 "/api/v2/auth/signup", "signup.lua", {"BENCH_PASSWORD": SIGNUP_PASSWORD},
                 expect=201, background=True, **mail),
        Scenario("login_page", "GET /login (hosted page)", service, "/login", "static.lua"),
        Scenario("forgot_unknown", "POST /api/v2/auth/forgot-password, unknown emails", service,
                 "/api/v2/auth/forgot-password", "pool.lua",
                 {**JSON_POST, **pool(unknown, BENCH_POOL_BODY='{"email":"%s"}')}, expect=202,
                 background=True, **mail),
        Scenario("forgot_known", "POST /api/v2/auth/forgot-password, existing emails", service,
                 "/api/v2/auth/forgot-password", "pool.lua",
                 {**JSON_POST, **pool(main.pools / "emails.txt",
                                      BENCH_POOL_BODY='{"email":"%s"}')}, expect=202,
                 background=True, **mail),
    ):
        service.wait_idle(args.drain_cap)
        bench.results[scenario.key] = measure(scenario, args)
    bench.notes["refresh_pool"] = (refresh.offset, args.refresh_tokens)
    service.stop()


def scaling(bench: Bench) -> None:
    """The same requests on the small and the large database, ABBA."""
    args, small, large = bench.args, bench.small, bench.large
    for what, small_env, large_env in (
        ("verify", verify_pool(small), verify_pool(large)),
        ("login", login_pool(small, bench.password), login_pool(large, bench.password)),
    ):
        path = f"/api/v2/auth/{what}"
        bench.service_small.wait_idle(args.drain_cap)
        bench.service_large.wait_idle(args.drain_cap)
        bench.results[f"{what}_small"], bench.results[f"{what}_large"] = measure_abba(
            Scenario(f"{what}_small", f"{what}, {args.accounts:,} accounts",
                     bench.service_small, path, "pool.lua", small_env),
            Scenario(f"{what}_large", f"{what}, {args.large_accounts:,} accounts",
                     bench.service_large, path, "pool.lua", large_env),
            args)
    bench.service_small.stop()
    bench.service_large.stop()


def fastapi_users(bench: Bench, peer_python: Path) -> None:
    """fastapi-users on the same machine, with the same wrk settings: its login and /users/me."""
    args, password = bench.args, bench.password
    peer_db = bench.workdir / "fastapi-users.db"
    peer_env = {**clean_env(), "BENCH_FASTAPI_USERS_DB": str(peer_db),
                "BENCH_FASTAPI_USERS_SECRET": secrets.token_urlsafe(32)}
    subprocess.run([str(peer_python), str(BENCH / "fastapi_users_app.py")], cwd=BENCH,
                   env=peer_env, check=True, timeout=120)
    peer = bench.start("fastapi-users", "fastapi_users_app:app", BENCH, peer_env, bench.workdir,
                       args.workers, python=str(peer_python),
                       worker_class="uvicorn_worker.UvicornWorker", config=PEER_CONF,
                       path="/docs")
    peer_email = "peer@bench.example.com"
    status, body = call("POST", peer.url("/auth/register"),
                        {"email": peer_email, "password": password}, timeout=30)
    if status != 201:
        raise SystemExit(f"fastapi-users register failed: {status} {body}")
    login_form = {"username": peer_email, "password": password}
    status, body = call("POST", peer.url("/auth/jwt/login"), form=login_form, timeout=30)
    if status != 200:
        raise SystemExit(f"fastapi-users login failed: {status} {body}")
    peer_token = body["access_token"]
    with closing(sqlite3.connect(peer_db)) as connection:
        peer_hash = connection.execute('SELECT hashed_password FROM "user"').fetchone()[0]
    bench.notes["peer"] = {"hash": peer_hash.rsplit("$", 2)[0], "hashers": peer_hashers(
        peer_python), "versions": peer_versions(peer_python)}
    for scenario in (
        Scenario("peer_login", "fastapi-users POST /auth/jwt/login (form)", peer,
                 "/auth/jwt/login", "static.lua",
                 {"BENCH_METHOD": "POST",
                  "BENCH_CONTENT_TYPE": "application/x-www-form-urlencoded",
                  "BENCH_BODY": urlparse.urlencode(login_form)}),
        Scenario("peer_me", "fastapi-users GET /users/me, one token", peer, "/users/me",
                 "static.lua", {"BENCH_AUTHORIZATION": f"Bearer {peer_token}"}),
    ):
        bench.results[scenario.key] = measure(scenario, args)
    peer.stop()


def the_floor_again(bench: Bench) -> None:
    """How much the machine drifted during the run; then every server's peak memory."""
    bench.results["floor_end"] = measure(
        Scenario("floor_end", "floor again, at the end", bench.floor, "/", "static.lua"),
        bench.args)
    for server in bench.servers:
        server.sample_rss()
    bench.notes["rss"] = {s.name: max(s.peak_rss_kib.values(), default=0)
                          for s in bench.servers}
