"""``.gitignore`` patterns matched in linear time (issue 39, finding 1): the same answers as
pathspec's ``GitIgnoreSpec`` on random patterns and paths, and no pattern that backtracks. Pure
logic; pathspec is the reference."""

from __future__ import annotations

import random

import pytest

from semsearch.ingest.gitignore import BadPattern, PathPatterns
from tests.helpers import finishes_within

HOSTILE = "*a*a*a*a*a*a*a*a*a*a*a*a*z"
"""27 bytes that pathspec's regular expression takes hours on against a name of 40 a's."""
HOSTILE_NAME = "a" * 40 + ".md"
ATOMS = [
    *("a", "b", ".", " ", "#", "!", "/", "\\", "*", "**", "?", "***"),
    *("[ab]", "[]a]", "[a-b]", "[b-a]", "[a", "\\*", "\\[", ""),
]
"""What random patterns are made of. Negated brackets (``[!a]``) are left out: pathspec lets one
match a ``/`` (``a[!a]`` matches ``a/``), Git and ``PathPatterns`` do not (tested below)."""


def _random_lines(rng: random.Random) -> list[str]:
    return ["".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(1, 3))]


def _random_path(rng: random.Random) -> str:
    names = ["".join(rng.choice("ab.*?[ ]!#\\") for _ in range(rng.randint(1, 3))) for _ in range(4)]
    return "/".join(names[: rng.randint(1, 4)]) + ("/" if rng.random() < 0.3 else "")


@pytest.mark.parametrize("cases", [800, pytest.param(40_000, marks=pytest.mark.slow)])
def test_patterns_match_as_pathspec_matches_them(cases):
    import warnings

    import pathspec

    rng = random.Random(39)
    compared = 0
    for _ in range(cases):
        lines = _random_lines(rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                reference = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # noqa: BLE001 - not a pattern: PathPatterns must refuse it too
            with pytest.raises(BadPattern):
                PathPatterns(lines)
            continue
        ours = PathPatterns(lines)
        for path in (_random_path(rng) for _ in range(5)):
            assert ours.match_file(path) == reference.match_file(path), (lines, path)
            compared += 1
    assert compared > cases * 3


@pytest.mark.parametrize(
    "lines, path, matched",
    [
        (["docs/**/secret*.md"], "docs/a/b/secret-1.md", True),
        (["*.md", "!keep.md"], "sub/keep.md", False),
        (["sub/", "!sub/keep.md"], "sub/keep.md", False),  # a folder left out keeps its files out
        (["a[!a]"], "a/", False),  # a bracket never takes a "/" (as in Git; pathspec's would)
        (["[[:alpha:]]"], "x", False),  # read as pathspec reads it, and no warning printed
        ([HOSTILE], HOSTILE_NAME, False),
        ([HOSTILE], "a" * 40 + "z", True),
    ],
)
def test_known_patterns(lines, path, matched, recwarn):
    assert PathPatterns(lines).match_file(path) is matched
    assert not recwarn.list


def test_a_pattern_of_many_stars_is_matched_at_once():
    """Each star of a segment takes the shortest stretch after which the next piece follows, and
    ``**`` whole segments, so no choice is tried twice: what backtracked for hours returns now."""
    with finishes_within(20):
        assert not PathPatterns([HOSTILE]).match_file(HOSTILE_NAME)
        assert not PathPatterns(["*a" * 2000 + "z"]).match_file("a" * 4000 + ".md")
        assert not PathPatterns(["**/a" * 100 + "/z"]).match_file("a/" * 400 + "b.md")
        assert PathPatterns(["a*" * 100 + "/**/b" * 50]).match_file("a" * 200 + "/b" * 60)


def test_a_line_that_is_no_pattern_is_named_by_its_number():
    with pytest.raises(BadPattern) as raised:
        PathPatterns(["*.md", "", "ok/", "[z-a]"])
    assert (raised.value.number, raised.value.line) == (4, "[z-a]")
