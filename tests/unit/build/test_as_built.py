"""The settings to rebuild an index as it was built (``build.as_built``), which ``semsearch
build`` with no options and ``Collection.refresh`` both use: built again with them, an index of
unchanged files is up to date, whatever budget, exclusions and model it was built with."""

from __future__ import annotations

from pathlib import Path

import pytest

from semsearch.build.as_built import BuildSettings, settings_as_built
from semsearch.build.pipeline import build_index
from semsearch.retrieve.opening import load_index
from tests.helpers import FAKE_MODEL, write


@pytest.fixture
def built(tmp_path) -> Path:
    """An index of two files, built with a budget and an exclusion that are not the defaults."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alfa\n\n## Jeden\n\nPierwszy akapit.\n\n## Dwa\n\nDrugi akapit.\n")
    write(docs / "drafts" / "b.md", "# Beta\n\nSzkic.\n")
    build_index(docs, tmp_path / "index", model=FAKE_MODEL, max_tokens=40, excludes=["drafts/"])
    return tmp_path / "index"


def test_the_settings_as_built_are_the_ones_the_build_was_given(built):
    assert settings_as_built(load_index(built).meta) == BuildSettings(
        built.parent / "docs", FAKE_MODEL, 40, ("drafts/",)
    )


def test_an_index_built_again_with_its_settings_as_built_is_up_to_date(built):
    settings = settings_as_built(load_index(built).meta)
    report = build_index(
        settings.docs,
        built,
        model=settings.model,
        max_tokens=settings.max_tokens,
        excludes=settings.excludes,
    )
    assert report.up_to_date and report.embedded == 0
