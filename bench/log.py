"""Progress lines on stderr, timed from the start of the run."""

from __future__ import annotations

import sys
import time

STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)
