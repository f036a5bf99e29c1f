"""Where the tests find the official dev problems (83 problems in the released layout; a sanity check).

`BONGARD_OFFICIAL_DEV` names the folder; without it the tests look for `shared/data/official_dev` beside
the checkout (or beside the folder of worktrees holding it). Tests that need the data skip without it.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _find() -> Path:
    if os.environ.get("BONGARD_OFFICIAL_DEV"):
        return Path(os.environ["BONGARD_OFFICIAL_DEV"])
    candidates = [base / "shared" / "data" / "official_dev" for base in (REPO.parent, REPO.parent.parent)]
    return next((c for c in candidates if c.is_dir()), candidates[0])


OFFICIAL_DEV = _find()
