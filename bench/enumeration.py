"""Does an answer take the same time whether or not the account exists? (SECURITY.md 6-8.)

Failed logins (unknown email, wrong password, disabled account, production argon2id) and
forgot-password requests (known and unknown email), 100 interleaved samples each; compares the
medians. Run:

    .venv/bin/python bench/enumeration.py [--samples 100]

Exits 1 when a median is more than 10% away from the unknown-email median of its endpoint.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app  # noqa: E402
from app.domain import accounts  # noqa: E402
from app.extensions import db  # noqa: E402

PASSWORD = "correct horse battery staple"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    samples = parser.parse_args().samples
    folder = tempfile.mkdtemp(prefix="svc-enum-")
    app = create_app({"INSTANCE_PATH": folder, "SECRET_KEY": "bench", "RATELIMIT_ENABLED": False,
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.db",
                      "MAIL_URL": "memory://"})
    with app.app_context():
        db.create_all()
        accounts.create_user("known@example.com", PASSWORD)
        accounts.create_user("disabled@example.com", PASSWORD).disabled_at = datetime.now(UTC)
        db.session.commit()
    client = app.test_client()
    login = {
        "unknown email": {"email": "nobody@example.com", "password": PASSWORD},
        "wrong password": {"email": "known@example.com", "password": "wrong " + PASSWORD},
        "disabled account": {"email": "disabled@example.com", "password": PASSWORD},
    }
    forgot = {
        "unknown email": {"email": "nobody@example.com"},
        "known email": {"email": "known@example.com"},
    }
    worst = max(
        compare(client, "/api/v2/auth/login", 401, login, samples),
        compare(client, "/api/v2/auth/forgot-password", 202, forgot, samples),
    )
    app.extensions["svc-outbox"].drain(60)
    return 0 if worst <= 0.10 else 1


def compare(client: Any, path: str, expected: int, cases: dict[str, dict[str, str]],
            samples: int) -> float:
    """Print the medians of interleaved requests; return the largest gap to the first case."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(samples):
        for name, body in cases.items():
            started = time.perf_counter()
            status = client.post(path, json=body).status_code
            times[name].append(time.perf_counter() - started)
            assert status == expected, (path, name, status)
    baseline = statistics.median(next(iter(times.values())))
    print(f"\n| {path} ({samples} interleaved samples each) | median ms | vs unknown email |")
    print("|---|---:|---:|")
    worst = 0.0
    for name, observed in times.items():
        median = statistics.median(observed)
        worst = max(worst, abs(median / baseline - 1))
        print(f"| {name} | {median * 1000:.2f} | {median / baseline - 1:+.1%} |")
    return worst

if __name__ == "__main__":
    sys.exit(main())
