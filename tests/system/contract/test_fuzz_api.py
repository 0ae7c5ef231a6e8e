"""The running service against its published contract: schemathesis fuzzes every operation of
/api/openapi.json in-process (WSGI), with schema-valid (positive) and schema-invalid (negative)
requests, then walks the document's links statefully (signup -> login -> refresh -> refresh).

Every response goes through all of schemathesis's checks, but one, and ours:

- `not_a_server_error`: no 5xx;
- `status_code_conformance`, `content_type_conformance`, `response_schema_conformance`,
  `response_headers_conformance`: the status, media type, body and headers are documented;
- `negative_data_rejection`: a schema-invalid request is refused with a 4xx;
- `missing_required_header`, `ignored_auth`: the bearer operations refuse a missing or bad token;
- `unsupported_method`, `allow_header_conformance`: a method a path does not have is a 405 with
  `Allow`, and `Allow` lists the documented methods;
- `use_after_free`, `ensure_resource_availability`, `object_level_authorization` (stateful);
- `problem_details_for_4xx` (ours, below): every 4xx is an RFC 9457 problem body with our keys.

The one left out, `positive_data_acceptance`, expects every schema-valid request to succeed; here a
schema-valid request is routinely, and by contract, refused for reasons no JSON Schema states (an
unknown reset token: 400; a `state` this browser never sent: 400; a common password, or an email
address that is not one: 422).

Bounded and reproducible: `SVC_FUZZ_EXAMPLES` examples per operation (positive and negative
together; the stateful run gets half as many scenarios), a fixed seed (`SVC_FUZZ_SEED`),
derandomized when `CI` is set. How many cases ran is printed at the end of the run (section
"contract fuzzing") and checked by the last test. A longer run:

    SVC_FUZZ_EXAMPLES=2000 .venv/bin/pytest -q tests/system/contract/test_fuzz_api.py

schemathesis's pytest integration needs the schema when this module is imported (its fixture
loader does not work with pytest 9.2), so the app is built here, in a temporary directory.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from schemathesis import Case, CheckContext, GenerationMode, Response
from schemathesis.config import HealthCheck

from app.domain.accounts import accounts
from app.extensions import db
from tests.support.apps import dispose_app, drained
from tests.support.contract import IN_CI, build_contract_app, report_fuzz

EXAMPLES = int(os.environ.get("SVC_FUZZ_EXAMPLES", "150"))
SEED = int(os.environ.get("SVC_FUZZ_SEED", "20250808"))
STATEFUL_STEPS = 8  # at most, per scenario

# See the module's docstring.
EXCLUDED_CHECKS = ["positive_data_acceptance"]

WORKDIR = Path(tempfile.mkdtemp(prefix="svc-contract-fuzz-"))
atexit.register(shutil.rmtree, WORKDIR, ignore_errors=True)  # when no test of this module ran
APP = build_contract_app(WORKDIR)

# `too_slow` is about drawing the data, and the machine may be busy with other test runs: how
# fast examples are drawn is not under test.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", APP, config=schemathesis.Config(
    seed=SEED, suppress_health_check=[HealthCheck.too_slow]))
# The OpenID Connect endpoints answer RFC 6749 errors and HTML pages, not problem details: the
# relying parties of tests/unit/oidc and tests/system/e2e/test_oidc_relying_parties.py exercise
# them.
schema = schema.exclude(path_regex="^/oauth2/")
# The admin API takes a service client's token, not a person's: test_fuzz_admin.py fuzzes it.
schema = schema.exclude(path_regex="^/api/admin/")
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=EXAMPLES,
    # No example database: a run is its seed, not what earlier runs left behind.
    deterministic=IN_CI, database="none")
schema.config.checks.update(excluded_check_names=EXCLUDED_CHECKS)
# The stateful run follows the document's own links, not links schemathesis guesses.
schema.config.phases.stateful.inference.algorithms = []


# What ran: every response the checks saw --------------------------------------------------------

CASES: Counter[tuple[str, str, str]] = Counter()  # (phase, operation, mode) -> responses
SECONDS: Counter[str] = Counter()  # stateless, stateful
WALKS: list[list[tuple[str, int]]] = []  # per stateful scenario: (operationId, status) per step
CHAIN = [("signup", 201), ("login", 200), ("refresh", 200), ("refresh", 200)]


@pytest.fixture(scope="module", autouse=True)
def _close_app() -> Iterator[None]:
    yield
    dispose_app(APP)
    shutil.rmtree(WORKDIR, ignore_errors=True)


PROBLEM_KEYS = {"type": str, "title": str, "status": int, "code": str, "detail": str}


@schemathesis.check
def problem_details_for_4xx(ctx: CheckContext, response: Response, case: Case) -> None:
    """Every 4xx answer is `application/problem+json` with `type`, `title`, `status`, `code` and
    `detail`, and its `status` is the HTTP status. (Also counts what the fuzzers ran.)"""
    phase = case.meta.phase.name.value if case.meta else "explicit"
    mode = case.meta.generation.mode.value if case.meta else "positive"
    CASES[phase, case.operation.label, mode] += 1
    if not 400 <= response.status_code < 500:
        return
    content_type = (response.headers.get("content-type") or [""])[0]
    media_type = content_type.split(";")[0].strip().lower()
    assert media_type == "application/problem+json", (
        f"{response.status_code} answered as {content_type or 'no content type'!r}, "
        "not application/problem+json")
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"{response.status_code} body is not JSON") from None
    assert isinstance(body, dict), f"{response.status_code} body is not a JSON object"
    for key, kind in PROBLEM_KEYS.items():
        assert isinstance(body.get(key), kind), (
            f"{response.status_code} problem body has no {kind.__name__} {key!r}: {body}")
    assert body["status"] == response.status_code, (
        f"problem status {body['status']} on an HTTP {response.status_code}")


_accounts = itertools.count(1)


@schema.auth(refresh_interval=None)
class FreshAccount:
    """Each case of an operation with bearer security gets the access token of an account of its
    own: a fuzzed `logout?scope=global` then ends no other case's session. (schemathesis builds
    the coverage cases, tokens included, when it collects the tests.) Cases that negate the
    security scheme keep their missing or garbled Authorization header."""

    def get(self, case: Case, context: schemathesis.AuthContext) -> str | None:
        if not case.operation.definition.raw.get("security"):
            return None
        credentials = {"email": f"bearer-{next(_accounts)}@example.com",
                       "password": "a passphrase for the fuzzer"}
        with APP.app_context():  # straight into the database: no confirmation mail
            accounts.create_user(credentials["email"], credentials["password"], "Fuzz")
            db.session.commit()
        answer = context.app.test_client().post("/api/v2/auth/login", json=credentials)
        assert answer.status_code == 200, answer.get_json()
        token: str = answer.get_json()["access_token"]
        return token

    def set(self, case: Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers["Authorization"] = f"Bearer {data}"


# Stateless: every operation, positive and negative --------------------------------------------

def settle() -> None:
    """Wait for the mail a request queued: the outbox's thread draws on `random` (Message-ID),
    and Hypothesis fails a test when something else touches `random` while it draws."""
    drained(APP.extensions["svc-outbox"])


@schema.parametrize()
def test_every_operation_keeps_the_contract(case: Case) -> None:
    started = time.monotonic()
    try:
        case.call_and_validate()
    finally:
        settle()
        SECONDS["stateless"] += time.monotonic() - started


# Stateful: along the document's links ---------------------------------------------------------

_addresses = itertools.count(1)


@hypothesis.seed(SEED)
class Workflows(schema.as_state_machine()):  # type: ignore[misc]
    def setup(self) -> None:
        WALKS.append([])

    def before_call(self, case: Case) -> None:
        """A positive sign-up gets a fresh address and an acceptable password, so the links have
        an account to follow (a random string seldom passes the password policy)."""
        positive = case.meta is not None and case.meta.generation.mode is GenerationMode.POSITIVE
        if _operation_id(case) == "signup" and positive and isinstance(case.body, dict):
            case.body = {**case.body, "email": f"walker-{next(_addresses)}@example.com",
                         "password": "a walk along the links"}

    def after_call(self, response: Response, case: Case) -> None:
        super().after_call(response, case)
        settle()
        WALKS[-1].append((_operation_id(case), response.status_code))


def _operation_id(case: Case) -> str:
    return str(case.operation.definition.raw.get("operationId"))


def test_workflows_along_the_links_keep_the_contract() -> None:
    # As the stateless run: no deadline, no example database, `too_slow` off.
    started = time.monotonic()
    try:
        Workflows.run(settings=hypothesis.settings(
            max_examples=max(1, EXAMPLES // 2), stateful_step_count=STATEFUL_STEPS, deadline=None,
            database=None, derandomize=IN_CI,
            suppress_health_check=[hypothesis.HealthCheck.too_slow]))
    finally:
        SECONDS["stateful"] += time.monotonic() - started


# How much ran ---------------------------------------------------------------------------------

def _walked(walk: list[tuple[str, int]], chain: list[tuple[str, int]]) -> bool:
    """Whether the scenario made these steps in this order (others may come in between)."""
    steps = iter(walk)
    return all(step in steps for step in chain)


def test_the_fuzzers_ran_enough_cases(request: pytest.FixtureRequest,
                                      record_property: Any) -> None:
    """Prints (and records, for junit) how many cases ran, and fails when a fuzzer that ran
    tested too little to mean anything."""
    here = request.node.path
    ran = {getattr(item, "originalname", item.name) for item in request.session.items
           if item.path == here and item is not request.node}
    if not ran:
        pytest.skip("no fuzzer of this module ran in this session")
    by_operation: Counter[str] = Counter()
    by_mode: Counter[str] = Counter()
    by_phase: Counter[str] = Counter()
    for (phase, label, mode), n in CASES.items():
        if phase != "stateful":
            by_operation[label] += n
            by_mode[mode] += n
            by_phase[phase] += n
    stateless = sum(by_operation.values())
    steps = sum(n for (phase, _, _), n in CASES.items() if phase == "stateful")
    chains = sum(_walked(walk, CHAIN) for walk in WALKS)

    lines = [
        f"schemathesis {schemathesis.__version__}, hypothesis {hypothesis.__version__}; "
        f"seed {SEED}{', derandomized (CI)' if IN_CI else ''}; max_examples {EXAMPLES} "
        "(SVC_FUZZ_EXAMPLES)",
        f"stateless: {stateless} cases over {len(by_operation)} operations in "
        f"{SECONDS['stateless']:.0f} s ({_listed(by_mode)}; {_listed(by_phase)})",
        f"stateful: {len(WALKS)} scenarios, {steps} steps in {SECONDS['stateful']:.0f} s; "
        f"{chains} walked signup 201 -> login 200 -> refresh 200 -> refresh 200",
        *(f"  {n:6d}  {label}" for label, n in sorted(by_operation.items())),
    ]
    report_fuzz(request.node, lines)
    record_property("fuzz_stateless_cases", stateless)
    record_property("fuzz_stateful_steps", steps)

    if "test_every_operation_keeps_the_contract" in ran:
        operations = {result.ok().label for result in schema.get_all_operations()}
        assert not operations - set(by_operation), (
            f"never fuzzed: {sorted(operations - set(by_operation))}")
        assert stateless >= 10 * len(operations), lines[1]
        assert by_mode["positive"] and by_mode["negative"], lines[1]
    if "test_workflows_along_the_links_keep_the_contract" in ran:
        assert len(WALKS) >= max(1, EXAMPLES // 10) and steps >= len(WALKS), lines[2]
        # The links carried real credentials and tokens: an account signed up, logged in with the
        # linked credentials and refreshed with the linked token (a run of a handful of
        # scenarios may not get that far).
        assert EXAMPLES < 100 or any(_walked(walk, CHAIN[:3]) for walk in WALKS), lines[2]


def _listed(counts: Counter[str]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
