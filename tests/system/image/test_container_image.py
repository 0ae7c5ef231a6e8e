"""The Containerfile as shipped, built with podman on a base made here (mmdebstrap, Debian's
archive) and run as an operator would: the migration as a command of its own, then the image's
own command, with production settings from the environment and the instance folder a volume.

Not part of `make test` (the first build on a machine takes minutes): `make test-image`, which
.ci/run calls, runs it (SVC_TEST_IMAGE=1).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator

import pytest

from tests.support.containers import (
    podman,
    production_env,
    run_once,
    serving,
    volume,
)
from tests.support.journeys import sign_up_in_verify_and_refresh

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("SVC_TEST_IMAGE") != "1",
                       reason="the image test runs in `make test-image` (SVC_TEST_IMAGE=1)"),
]

@pytest.fixture(scope="module")
def settings() -> dict[str, str]:
    return production_env()


@pytest.fixture(scope="module")
def served(image: str, settings: dict[str, str]) -> Iterator[str]:
    with volume() as instance:
        migrated = run_once(image, settings, instance, "flask", "db", "upgrade")
        assert migrated.returncode == 0, migrated.stderr.decode()[-3000:]
        with serving(image, settings, instance) as container:
            yield container.name, container.base_url


def test_the_image_signs_up_verifies_and_refreshes(served: tuple[str, str]) -> None:
    _, base_url = served
    sign_up_in_verify_and_refresh(base_url, f"image-{secrets.token_hex(5)}@example.com")


def test_the_images_healthcheck_passes_while_it_serves(served: tuple[str, str]) -> None:
    name, _ = served
    checked = podman("healthcheck", "run", name, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_image_runs_as_a_user_with_a_volume_and_a_healthcheck(image: str) -> None:
    [config] = json.loads(podman("image", "inspect", image).stdout)
    assert config["Config"]["User"] == "svc-auth"
    assert "/var/lib/svc-auth" in config["Config"]["Volumes"]
    assert config["Healthcheck"]["Test"][0] == "CMD"
    assert config["Config"]["Cmd"] == ["gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]


def test_the_image_holds_no_development_extra(image: str, settings: dict[str, str]) -> None:
    with volume() as instance:
        probe = run_once(image, settings, instance, "python3", "-c",
                         "import importlib.util as u; print([m for m in"
                         " ('pytest', 'hypothesis', 'mkdocs', 'pip') if u.find_spec(m)],"
                         " __import__('os').getuid())")
    assert probe.returncode == 0, probe.stderr.decode()
    assert probe.stdout.decode().split() == ["[]", "10001"]


def test_starting_the_image_migrates_nothing(image: str, settings: dict[str, str]) -> None:
    """Migrations are a command of their own: a container started on an empty volume serves, but
    its database has no schema until `flask db upgrade` runs."""
    with volume() as instance:
        with serving(image, settings, instance):
            pass
        current = run_once(image, settings, instance, "flask", "db", "current")
    assert current.returncode == 0, current.stderr.decode()
    assert "(head)" not in current.stdout.decode(), current.stdout
