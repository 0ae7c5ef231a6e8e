"""Do failed logins take the same time whatever the reason? (SECURITY.md items 6-7.)

Signs in 100 times each, interleaved, with an unknown email, a wrong password and a disabled
account, using the production argon2id parameters, and compares the medians. Run:

    .venv/bin/python bench/enumeration.py [--samples 100]

Exits 1 when a median is more than 10% away from the unknown-email median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

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
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.db"})
    with app.app_context():
        db.create_all()
        accounts.create_user("known@example.com", PASSWORD)
        accounts.create_user("disabled@example.com", PASSWORD).disabled_at = datetime.now(UTC)
        db.session.commit()
    client = app.test_client()
    cases = {
        "unknown email": {"email": "nobody@example.com", "password": PASSWORD},
        "wrong password": {"email": "known@example.com", "password": "wrong " + PASSWORD},
        "disabled account": {"email": "disabled@example.com", "password": PASSWORD},
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(samples):
        for name, body in cases.items():
            started = time.perf_counter()
            status = client.post("/api/v2/auth/login", json=body).status_code
            times[name].append(time.perf_counter() - started)
            assert status == 401, (name, status)
    baseline = statistics.median(times["unknown email"])
    print(f"| failed login ({samples} interleaved samples each) | median ms | vs unknown email |")
    print("|---|---:|---:|")
    worst = 0.0
    for name, observed in times.items():
        median = statistics.median(observed)
        worst = max(worst, abs(median / baseline - 1))
        print(f"| {name} | {median * 1000:.1f} | {median / baseline - 1:+.1%} |")
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
