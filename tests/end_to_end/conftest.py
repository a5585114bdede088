"""The end-to-end tests belong to the full suite: every test in this folder is marked ``slow``.

They run the installed command or whole processes (a build killed at a chosen moment, ``watch``,
Ctrl-C while a command loads), a PostgreSQL server, or the library's front door over whole
builds: seconds each, and what the fast lane proves at smaller cost in ``tests/unit`` and
``tests/cli``. The one exception, ``test_fast_front_door.py``, starts one process of the
installed command (well under a second) so that the fast lane still proves the console script.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FAST_LANE = {"test_fast_front_door.py"}
"""Files of this folder whose tests are slow only where they say so."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark this folder's tests slow before ``-m "not slow"`` deselects (tryfirst)."""
    for item in items:
        path = Path(item.path)
        if HERE in path.parents and path.name not in FAST_LANE:
            item.add_marker(pytest.mark.slow)
