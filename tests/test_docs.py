"""docs/RESULTS.md stays short, its links point at files that exist, and the front docs name no machine's paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_architecture import MACHINE_PATH

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RESULTS = DOCS / "RESULTS.md"
LIMIT = 20_000  # bytes: the page holds the current figures only; history belongs in commit messages
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_results_is_short():
    size = RESULTS.stat().st_size
    assert size < LIMIT, f"docs/RESULTS.md is {size} bytes, the limit is {LIMIT}"


def test_results_links_exist():
    text = RESULTS.read_text(encoding="utf-8")
    anchors = {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    targets = LINK.findall(text)
    assert targets, "no links found: the pattern no longer reads the page"
    missing = []
    for target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors:
                missing.append(target)
        elif not (DOCS / path).exists():
            missing.append(target)
    assert not missing, f"docs/RESULTS.md links to what does not exist: {missing}"


@pytest.mark.parametrize("name", ["README.md", "docs/RESULTS.md"])
def test_no_machine_path(name):
    found = MACHINE_PATH.findall((REPO / name).read_bytes())
    assert not found, f"{name} names paths of a particular machine: {found}"
