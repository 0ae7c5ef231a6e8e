"""How `make test` shares the tests between its pytest-xdist workers (`-n 2 --dist loadgroup`,
done by this scheduler in place of xdist's own: tests/conftest.py).

The unit a worker takes whole is a group of tests:

- a module, so that a module's tests run in one worker, in their order, and its module-scoped
  fixtures (a deployment, a fuzzer's app, a clean install) are set up once;
- or every module that uses one of the session-long servers of SHARED_SERVERS (Chromium, a 4-worker
  gunicorn, the client kit's sites), so that the server starts in one worker only. A module
  missing here still passes; its worker only starts that server once more.

Groups of the slow directories are handed out first: a worker that drew a long one at the end would
keep the run waiting while the other one idles.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling

# Node id prefixes of the modules that share a session-long server, and the group they make.
SHARED_SERVERS = {
    "tests/system/browser/": "browser",  # `site`, `browser` (tests/system/browser/conftest.py)
    # `kit`, `browser_thread` (tests/system/client_kit/conftest.py)
    "tests/system/client_kit/": "client-kit",
    # `server` (tests/system/e2e/conftest.py)
    "tests/system/e2e/test_server.py": "e2e-server",
    "tests/system/e2e/test_admin_api_server.py": "e2e-server",
    "tests/system/e2e/test_handoff_race.py": "e2e-server",
}

# Most of the time a run spends is in these, slowest first; the two workers start on different
# kinds of work (two production deployments starting at once took gunicorn past its 30 s).
SLOW_FIRST = ("tests/system/production/test_faults.py", "tests/system/browser/",
              "tests/system/production/test_outbox_faults.py", "tests/system/e2e/",
              "tests/system/production/", "tests/system/client_kit/", "tests/system/contract/",
              "tests/test_code_layers.py")


def group_of(nodeid: str) -> str:
    for prefix, group in SHARED_SERVERS.items():
        if nodeid.startswith(prefix):
            return group
    return nodeid.split("::", 1)[0]


def rank(nodeid: str) -> int:
    """The lower, the sooner a worker is given the test's group."""
    for position, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return position
    return len(SLOW_FIRST)


class GroupScheduling(LoadScheduling):  # type: ignore[misc]  # xdist is untyped here
    """xdist's `load`, which knows the tests by their index (schemathesis gives many tests one node
    id, which xdist's `loadscope` would run once), handing out whole groups, the slow ones first,
    one more to a worker when it has at most two tests left."""

    def schedule(self) -> None:
        super().schedule()
        for node in self.nodes:  # a first group of one or two tests: the next one at once
            self.check_schedule(node)

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if not self.pending:
            node.shutdown()
        elif len(self.node2pending[node]) <= 2:
            self._send_tests(node, 0)

    def _send_tests(self, node: Any, num: int) -> None:
        """Sends `node` the next group, whatever `num` says."""
        if not self.pending:
            return
        groups: dict[str, list[int]] = {}
        for index in self.pending:
            groups.setdefault(group_of(self.collection[index]), []).append(index)
        chosen = groups[min(groups, key=lambda group: rank(self.collection[groups[group][0]]))]
        taken = set(chosen)
        self.pending[:] = [index for index in self.pending if index not in taken]
        self.node2pending[node].extend(chosen)
        node.send_runtest_some(chosen)
