"""Randomized damage to a real index, and random folder layouts around a build.

- Damage: every index file and meta.json field is truncated, emptied, overwritten with garbage,
  given a wrong type or an out-of-range number, or swapped with another file, a few hundred
  times. Every command then answers or fails with one line on stderr and exit 2: never exit 1
  (that means "no answer"), never a traceback.
- Layouts: whatever folder ``--index`` names among a user's files, ``build`` never deletes or
  changes a file it did not create.
"""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.errors import SemsearchError
from semsearch.store.schema import INDEX_FILES
from tests.helpers import DATA, write
from tests.unit.store.test_safety import snapshot

runner = CliRunner()
DAMAGES = 300
LAYOUTS = 200
QUESTION = "Ile kosztuje dostawa kurierem?"  # answered on the intact sample index
WRONG_VALUES = [None, "abc", "", -1, 0, 10**12, -(10**12), 1.5, True, [], [1, 2, 3], {}, {"value": "x"}]


def _meta_paths(value, prefix=()):
    """Every key path into a JSON value (lists too), the value itself first."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _meta_paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value[:3]):
            yield from _meta_paths(inner, (*prefix, i))


def _damage_meta(folder, rng: random.Random) -> str:
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    path = rng.choice([p for p in _meta_paths(meta) if p])
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    if rng.random() < 0.2 and isinstance(parent, dict):
        del parent[path[-1]]
        what = "deleted"
    else:
        parent[path[-1]] = rng.choice(WRONG_VALUES)
        what = f"= {parent[path[-1]]!r}"
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return f"meta.json {'.'.join(map(str, path))} {what}"


def _damage_file(folder, rng: random.Random) -> str:
    name = rng.choice(INDEX_FILES)
    path = folder / name
    data = path.read_bytes()
    kind = rng.choice(["truncate", "zero bytes", "garbage", "garbage header", "swap", "delete"])
    if kind == "truncate":
        path.write_bytes(data[: rng.randrange(len(data))])
    elif kind == "zero bytes":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(rng.randbytes(rng.choice([len(data), rng.randrange(1, 4096)])))
    elif kind == "garbage header":
        cut = min(len(data), rng.randrange(1, 200))
        path.write_bytes(rng.randbytes(cut) + data[cut:])
    elif kind == "swap":
        other = folder / rng.choice([n for n in INDEX_FILES if n != name])
        other_data = other.read_bytes()
        other.write_bytes(data)
        path.write_bytes(other_data)
        return f"{name} swapped with {other.name}"
    else:
        path.unlink()
    return f"{name}: {kind}"


@pytest.mark.slow
def test_a_damaged_index_is_one_line_and_exit_2_never_a_traceback(fake_sample_index, tmp_path):
    intact = runner.invoke(app, ["ask", QUESTION, "--index", str(fake_sample_index)])
    assert intact.exit_code == 0, intact.output
    rng = random.Random(11)
    outcomes = {"exit 2": 0, "answered": 0}
    for trial in range(DAMAGES):
        folder = tmp_path / f"damaged-{trial}"
        shutil.copytree(fake_sample_index, folder)
        damage = _damage_meta(folder, rng) if rng.random() < 0.5 else _damage_file(folder, rng)
        command = [["ask", QUESTION], ["info"], ["ask", QUESTION, "--mode", "keyword"], ["info", "--json"]][
            trial % 4
        ]
        if trial % 25 == 0:
            command = ["eval", str(DATA / "docs_questions.jsonl")]
        result = runner.invoke(app, [*command, "--index", str(folder)])
        where = f"{damage} → {' '.join(command)}: exit {result.exit_code}\n{result.output}"
        assert result.exit_code in (0, 2), where
        assert result.exception is None or isinstance(result.exception, SystemExit), where
        assert "Traceback" not in result.output and "unexpected" not in result.stderr, where
        if result.exit_code == 2:
            assert result.stderr.strip().count("\n") == 0, where
            assert result.stderr.startswith("error: "), where
        outcomes["exit 2" if result.exit_code == 2 else "answered"] += 1
        shutil.rmtree(folder)
    print(f"{DAMAGES} damaged indexes: {outcomes}")
    assert outcomes["exit 2"] > DAMAGES * 0.6  # most damage is detected, not merely survived


def _random_layout(root, rng: random.Random) -> list:
    """A user's folder: files, a meta.json here and there, hidden folders named like ours, links.
    Returns candidate --index paths, most of them user folders."""
    folders = [root]
    for i in range(rng.randrange(2, 6)):
        name = rng.choice(["proj", "notes", "*", ".cache.new-x", ".mail.old-2024", ".index.new-1", "index"])
        folder = rng.choice(folders) / f"{name}{i}"
        folders.append(folder)
        write(folder / "keep.txt", f"user file {i}")
        if rng.random() < 0.5:
            write(folder / "meta.json", json.dumps({"format": 1, "mine": True}))
        if rng.random() < 0.3:
            write(folder / "vectors.npy", "not ours")
    docs = rng.choice(folders) / "docs"
    write(docs / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(docs / "sub" / "b.md", "# Dostawa\n\nPaczki wysyłamy w dwa dni.\n")
    link = root / "link"
    os.symlink(rng.choice(folders), link)
    write(root / "a-file", "a file, not a folder")
    candidates = [
        *folders,
        docs,
        docs / "sub",
        docs / "index",
        link,
        root / "a-file",
        root / "*",
        root / "new",
    ]
    candidates += [folder / "index" for folder in folders]
    return docs, candidates


@pytest.mark.slow
def test_build_never_deletes_or_changes_a_file_it_did_not_create(tmp_path, fake_embedder):
    rng = random.Random(17)
    outcomes = {"built": 0, "refused": 0}
    for trial in range(LAYOUTS):
        root = tmp_path / f"layout-{trial}"
        root.mkdir()
        docs, candidates = _random_layout(root, rng)
        target = rng.choice(candidates)
        before = snapshot(root)
        for _ in range(rng.choice([1, 2])):  # a second build swaps an index it wrote
            try:
                build_index(docs, target, embedder=fake_embedder, full=rng.random() < 0.5)
                outcomes["built"] += 1
            except SemsearchError:
                outcomes["refused"] += 1
        after = snapshot(root)
        changed = [path for path, entry in before.items() if after.get(path) != entry]
        assert changed == [], (target, changed)
        real = os.path.realpath(target)
        assert not any(name.endswith(".lock") for name in os.listdir(os.path.dirname(real))), target
    print(f"{LAYOUTS} layouts: {outcomes}")
    assert outcomes["built"] and outcomes["refused"]
