"""The report's section on the production shape (bench/production.py): verify against the floor
behind the same nginx, with the CPU time of the whole deployment, where the workers' time goes,
Redis commands per request and the profile of one worker; and both shapes side by side."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from wrk import Result

if TYPE_CHECKING:
    from report import Report

PROD_VERIFY_RATIO_TARGET = 0.65  # issue 34 (0.60 before)
PROD_VERIFY_P99_TARGET_MS = 15.0
KEYS = ("prod_floor", "prod_const", "prod_verify", "prod_verify_pool", "prod_verify_base",
        "prod_verify_pool_base")


def _share(value: float) -> str:
    return f"{value:.0%}"


def production_section(rep: Report, results: dict[str, Result], notes: dict[str, Any],
                       args: argparse.Namespace) -> None:
    from report import fmt_row, rate

    shape = notes["production"]
    floor = results["prod_floor"]
    if "floor" in results:
        rep.add("## Both shapes, each against its floor",
                "",
                "| shape | floor req/s | verify req/s (one token / 200 tokens) | ratio | p99 ms |"
                " verify CPU ms / request (service) |",
                "|---|---:|---:|---:|---:|---:|")
        for label, f, v, p in (("embedded (SQLite, one server)", results["floor"],
                                results["verify"], results["verify_pool"]),
                               ("production (PostgreSQL + Redis, 2 instances behind nginx)",
                                floor, results["prod_verify"], results["prod_verify_pool"])):
            rep.add(fmt_row([label, rate(f.requests_per_s),
                             f"{rate(v.requests_per_s)} / {rate(p.requests_per_s)}",
                             f"{v.requests_per_s / f.requests_per_s:.2f} / "
                             f"{p.requests_per_s / f.requests_per_s:.2f}",
                             f"{v.p99_ms:.1f} / {p.p99_ms:.1f}",
                             f"{v.cpu_ms:.2f} / {p.cpu_ms:.2f}"]))
        rep.add("")
    load = shape["load"]
    rep.add("## The production shape: verify against the floor behind the same nginx",
            "",
            f"Target: at least {PROD_VERIFY_RATIO_TARGET:.2f} of the floor's requests per "
            f"second, p99 at most {PROD_VERIFY_P99_TARGET_MS:.0f} ms, at {args.connections} "
            "connections.",
            "",
            f"- PostgreSQL {shape['postgres']} and Redis {shape['redis']} (tests/support's "
            "launchers, on 127.0.0.1); two instances of svc-auth, each `gunicorn -c "
            f"gunicorn.conf.py wsgi:app` as it ships ({shape['workers']} workers each), "
            "SVC_ENV=production (JSON logs, rate limits on and counted in Redis), "
            "SVC_TRUSTED_PROXIES=1; two instances of the floor app with the same workers; one "
            "nginx (the guide's example; a worker process per core, as Debian's nginx.conf "
            "has it) with a site for each pair. "
            "Both answer through the same front, so the ratio compares like with like.",
            f"- Settings changed for this run: {shape['variant'] or 'none'}; the service's code: "
            f"{shape['code']}." + (f" Baseline (two more instances, a third site of the same "
                                   f"nginx): {shape['baseline']}." if shape["baseline"] else ""),
            f"- Load average (1/5/15 min) before this part {load[0]:.2f} / {load[1]:.2f} / "
            f"{load[2]:.2f}; after {shape['load_after'][0]:.2f}. Order: mirrored (A B C D D C "
            "B A), each figure the mean of its two runs. Peak RSS of one of the service's workers: "
            f"{shape['rss_kib'] / 1024:.0f} MiB.",
            "",
            "| scenario | req/s | p50 ms | p99 ms | service CPU ms / request | deployment CPU ms /"
            " request | workers: on a CPU / waiting for one / off CPU | Redis commands / request"
            " | bad / socket errors | ratio to floor | by CPU | target |",
            "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for key in [k for k in KEYS if k in results]:
        r = results[key]
        x = r.extra
        ratio = r.requests_per_s / floor.requests_per_s
        by_cpu = (floor.extra["deployment_cpu_ms"] / x["deployment_cpu_ms"]
                  if x.get("deployment_cpu_ms") else 0.0)
        verdict = ""
        if key not in ("prod_floor", "prod_const"):
            verdict = rep.check_against_floor(f"production {r.name}", ratio,
                                              PROD_VERIFY_RATIO_TARGET, r.p99_ms,
                                              PROD_VERIFY_P99_TARGET_MS)
        runs = " (" + " / ".join(rate(v) for v in r.runs) + ")" if len(r.runs) > 1 else ""
        rep.add(fmt_row([
            r.name, rate(r.requests_per_s) + runs, f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}",
            f"{r.cpu_ms:.2f}", f"{x.get('deployment_cpu_ms', 0.0):.2f}",
            f"{_share(x.get('on_cpu', 0))} / {_share(x.get('runnable', 0))} / "
            f"{_share(x.get('off_cpu', 0))}", f"{x.get('redis_per_request', 0.0):.2f}",
            f"{r.bad} / {r.socket_errors}", f"{ratio:.3f}", f"{by_cpu:.3f}", verdict]))
    rep.add("",
            "Service CPU: both instances' gunicorn processes. Deployment CPU adds nginx, Redis "
            "and PostgreSQL (every process of each); \"by CPU\" is the floor's deployment CPU "
            "per request over the endpoint's. The workers' time is from /proc/PID/schedstat over "
            "the measured run: on a CPU, ready but waiting for one (the machine is full), and "
            "off CPU (blocked on Redis, PostgreSQL or nginx's socket, or idle between requests).",
            "")
    profile = shape.get("profile")
    if profile is None:
        return
    if profile.error:
        rep.add(f"Profile: none ({profile.error}).", "")
        return
    rep.add(f"### Where one worker's time goes (py-spy --idle, {profile.samples:,} samples)",
            "",
            "One worker of the first instance while wrk loads verify (200 tokens) as above, in "
            "a run of its own (sampling costs CPU). Each sample sorted by its stack, the first "
            "rule that matches (bench/probes.py).",
            "",
            "| the worker was | share of samples |",
            "|---|---:|")
    for name, share in profile.shares.items():
        rep.add(fmt_row([name, f"{share:.1%}"]))
    rep.add("", "| innermost Python function | share of samples |", "|---|---:|")
    for name, share in profile.top:
        rep.add(fmt_row([f"`{name}`", f"{share:.1%}"]))
    rep.add("")
