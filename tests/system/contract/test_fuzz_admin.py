"""The admin API against its published contract: schemathesis fuzzes every /api/admin/v1
operation in-process, positive and negative, with a service client's token that holds every
admin scope (and, for the `ignored_auth` check, without one). The same checks as
test_fuzz_api.py, with fewer examples per operation: the paths are few and their bodies small.
Accounts exist for the fuzzer to find (a listing has pages, an id may be one of them)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from schemathesis import Case, GenerationMode
from schemathesis.config import HealthCheck

from app.domain.accounts import accounts
from app.domain.clients import service_clients
from app.extensions import db
from tests.support.apps import dispose_app, drained
from tests.support.contract import IN_CI, build_contract_app
from tests.system.contract.test_fuzz_api import EXCLUDED_CHECKS, SEED, problem_details_for_4xx

EXAMPLES = max(10, int(os.environ.get("SVC_FUZZ_EXAMPLES", "150")) // 3)

WORKDIR = Path(tempfile.mkdtemp(prefix="svc-admin-fuzz-"))
atexit.register(shutil.rmtree, WORKDIR, ignore_errors=True)
APP = build_contract_app(WORKDIR)
with APP.app_context():
    for n in range(5):
        accounts.create_user(f"listed-{n}@example.com", None, "Listed")
    CREDENTIALS = service_clients.add("fuzzer", [str(s) for s in service_clients.AdminScope])
    db.session.commit()

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", APP, config=schemathesis.Config(
    seed=SEED, suppress_health_check=[HealthCheck.too_slow]))
schema = schema.include(path_regex="^/api/admin/")
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=EXAMPLES,
    deterministic=IN_CI, database="none")
schema.config.checks.update(excluded_check_names=EXCLUDED_CHECKS)
assert problem_details_for_4xx  # registered by test_fuzz_api: every 4xx is a problem body


@schema.auth()
class ServiceToken:
    """A service client's own token, every admin scope."""

    def get(self, case: Case, context: schemathesis.AuthContext) -> str:
        answer = context.app.test_client().post(
            "/oauth2/token", data={"grant_type": "client_credentials"},
            auth=(CREDENTIALS.service.client_id, CREDENTIALS.client_secret))
        assert answer.status_code == 200, answer.get_json()
        token: str = answer.get_json()["access_token"]
        return token

    def set(self, case: Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers["Authorization"] = f"Bearer {data}"


@pytest.fixture(scope="module", autouse=True)
def _close_app() -> Iterator[None]:
    yield
    dispose_app(APP)
    shutil.rmtree(WORKDIR, ignore_errors=True)


@schema.parametrize()
def test_every_admin_operation_keeps_the_contract(case: Case) -> None:
    try:
        case.call_and_validate()
    finally:
        drained(APP.extensions["svc-outbox"])
