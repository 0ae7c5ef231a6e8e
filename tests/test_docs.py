"""The documentation: README.md is the front door and docs/ the site (mkdocs.yml). The site builds
with --strict (a broken link or anchor fails), the README's links into docs/ lead to files that
exist (so they work on a code host too), and neither points at a document outside the
repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")
# What the project was first given lives outside the repository: the docs say it in their words.
OUTSIDE = re.compile(r"\.\./shared|DESIGN\.md|DESIGN section|interface\.md|SECURITY\.md|"
                     r"PERFORMANCE\.md|STYLE\.md|seed/")


def _documents() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md")), *sorted((ROOT / "bench").glob("*.md"))]


def test_the_site_builds_strictly(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=120,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "operators" / "configuration" / "index.html").exists()


def test_the_readme_links_lead_to_files_of_the_repository():
    targets = [link for link in LINK.findall(README.read_text())
               if not link.startswith(("http://", "https://", "#"))]
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert missing == []


def test_no_document_points_outside_the_repository():
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in _documents()
             for match in OUTSIDE.finditer(path.read_text())]
    assert found == []


def test_the_readme_stays_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300
    opening = "\n".join(lines[:20])
    assert "make run" in opening and "make test" in opening
