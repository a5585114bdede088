"""YAML alias bombs in front matter (issue 22): refused past a bound, as a warning naming the file,
and the file indexed without its fields; never a huge meta.json or a build that never ends."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from semsearch.ingest.frontmatter import MAX_DEPTH, MAX_NODES, read_front_matter
from tests.helpers import REPO, write


def laughs(levels: int, width: int = 9) -> str:
    """A "billion laughs" front matter: ``width ** levels`` strings from a few hundred bytes."""
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\n---\n\n# Tytuł\n\nTreść pliku.\n"


BOMBS = {
    "laughs": laughs(6),
    "merge keys": "---\nm0: &m0 {x: 1, y: 2}\n"
    + "".join(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}\n" for i in range(1, 16))
    + "---\ntext\n",
    "a long string repeated": "---\ns: &s "
    + "x" * 100_000
    + "\nt: ["
    + ",".join(["*s"] * 20)
    + "]\n---\ntext\n",
    "recursive": "---\na: &a [*a, *a]\n---\ntext\n",
    "deep": "---\na: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n---\ntext\n",
}


@pytest.mark.parametrize("bomb", BOMBS, ids=list(BOMBS))
def test_front_matter_past_the_bounds_gives_no_fields_and_says_why(bomb):
    front_matter = read_front_matter(BOMBS[bomb])
    assert front_matter.fields == {}
    assert front_matter.problem and front_matter.line == 2
    assert front_matter.warning("bomb.md").startswith("bomb.md:2: front matter ")


def test_front_matter_within_the_bounds_keeps_its_aliases():
    text = "---\nbase: &b {owner: Ala, tags: [a, b]}\nthis: *b\nlist: [" + ", ".join(["x"] * 500) + "]\n---\n"
    fields = read_front_matter(text).fields
    assert fields["this.owner"] == "Ala" and fields["this.tags"] == ["a", "b"] and len(fields["list"]) == 500
    assert read_front_matter(laughs(3)).fields["a2"] == ["lol"] * 729  # 9**3 + 9**2 + 9 + 3 < MAX_NODES
    assert 9**4 + 9**3 + 9**2 + 9 + 4 < MAX_NODES < 9**5


BUILD = """
import json, sys
from pathlib import Path
from semsearch.build.pipeline import build_index
from tests.helpers import HashingEmbedder
report = build_index(Path(sys.argv[1]), Path(sys.argv[2]), embedder=HashingEmbedder())
print(json.dumps({"warnings": report.warnings, "files": report.files}))
"""


@pytest.mark.slow  # a whole process (its memory bounded) that builds: the bounds are checked in process above
def test_a_build_of_a_folder_with_a_bomb_ends_soon_with_a_small_index(tmp_path):
    """The 570-byte bomb that never finished (9 levels: 387 million strings), in a real build run
    in a process with a time and memory bound, so that the code before the fix fails, not hangs."""
    docs = tmp_path / "docs"
    write(docs / "bomb.md", laughs(9))
    write(docs / "good.md", "---\ntitle: Dobry\n---\n\n# Dobry\n\nZwrot w ciągu 14 dni.\n")
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
    code = limit + textwrap.dedent(BUILD)
    done = subprocess.run(
        [sys.executable, "-c", code, str(docs), str(tmp_path / "index")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["files"] == 2
    assert [w for w in report["warnings"] if w.startswith("bomb.md:2: front matter expands past")]
    meta = json.loads((tmp_path / "index" / "meta.json").read_text(encoding="utf-8"))
    assert "front_matter" not in meta["files"]["bomb.md"] and meta["files"]["good.md"]["front_matter"]
    assert (tmp_path / "index" / "meta.json").stat().st_size < 100_000
