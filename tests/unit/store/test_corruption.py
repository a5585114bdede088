"""Randomized damage to a real index, and random folder layouts around a build.

- Damage: every index file and meta.json field is truncated, emptied, overwritten with garbage,
  given a wrong type or an out-of-range number, or swapped with another file, a few hundred
  times. Every command then answers or fails with one line on stderr and exit 2: never exit 1
  (that means "no answer"), never a traceback.
- Layouts: whatever folder ``--index`` names among a user's files, ``build`` never deletes or
  changes a file it did not create.
"""

from __future__ import annotations

import functools
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
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
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
def test_a_damaged_index_is_one_line_and_exit_2_never_a_traceback(sample_index, tmp_path):
    intact = runner.invoke(app, ["ask", QUESTION, "--index", str(sample_index)])
    assert intact.exit_code == 0, intact.output
    rng = random.Random(11)
    outcomes = {"exit 2": 0, "answered": 0}
    for trial in range(DAMAGES):
        folder = tmp_path / f"damaged-{trial}"
        shutil.copytree(sample_index, folder)
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


# Hostile index files and poisoned rows (issue 22, findings 7 and 9): every index file replaced
# by a FIFO, a link to /dev/zero, a folder or a dangling link; NaN, infinite and zero rows in
# every matrix; truncation and bit flips. Always one line and exit 2 (a poisoned row is damage,
# never "No answer"); never a hang (each case runs under an alarm).

NOT_REGULAR = ("fifo", "dev-zero link", "folder", "dangling link", "link to a copy")
ROWS = ("nan row", "inf row", "zero row", "all zero")
MATRICES = ("vectors.npy", "offtopic.npy", "keywords.data.npy")
CASE_SECONDS = 20
HOSTILE_QUESTION = "Ile kosztuje dostawa kurierem?"  # answered on the intact fake index


def _not_regular(path, kind: str) -> None:
    copy = path.with_name(path.name + ".copy")
    shutil.move(path, copy)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero link":
        os.symlink("/dev/zero", path)
    elif kind == "folder":
        path.mkdir()
        shutil.move(copy, path / path.name)  # the real file, one level down
        return
    elif kind == "dangling link":
        os.symlink(path.with_name("nowhere"), path)
    else:
        os.symlink(copy.name, path)  # the right bytes, through a link: still refused
        return
    copy.unlink()


def _poison(path, kind: str, rng: random.Random) -> None:
    import numpy as np

    array = np.load(path)
    flat = array.reshape(len(array), -1) if array.ndim > 1 else array.reshape(-1, 1)
    row = rng.randrange(len(flat))
    if kind == "nan row":
        flat[row] = np.nan
    elif kind == "inf row":
        flat[row, rng.randrange(flat.shape[1])] = np.inf
    elif kind == "zero row" and array.ndim > 1:
        flat[row] = 0
    elif kind == "zero row":  # keyword weights: a row of zeros is no damage there, a NaN is
        flat[row] = np.nan
    else:
        flat[:] = 0 if array.ndim > 1 else np.nan
    np.save(path, flat.reshape(array.shape))


def _flip(path, rng: random.Random) -> str:
    """Flip one bit where the reader can tell: an array's header, a chunk line (CRC-checked),
    a JSON structure character of meta.json."""
    data = bytearray(path.read_bytes())
    if path.suffix == ".npy":
        spots = range(min(len(data), 10 + int.from_bytes(data[8:10], "little")))
    elif path.name == "meta.json":
        spots = [i for i, byte in enumerate(data) if chr(byte) in '{}[]":,']
    elif path.name == "chunks.json":
        spots = range(len(data))
    else:
        return "unchanged"
    spot = rng.choice(list(spots))
    data[spot] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    return f"bit {spot}"


def hostile_cases(rng: random.Random, count: int = 0) -> list[tuple[str, str]]:
    """(file, damage) pairs: every non-regular kind for every index file, every row kind for
    every matrix, then random truncations and bit flips up to ``count``."""
    cases = [(name, kind) for name in INDEX_FILES for kind in NOT_REGULAR]
    cases += [(name, kind) for name in MATRICES for kind in ROWS]
    rng.shuffle(cases)
    while len(cases) < count:
        name = rng.choice(INDEX_FILES)
        kinds = ["truncate", "bit flip", *NOT_REGULAR, *(ROWS if name in MATRICES else ())]
        cases.append((name, rng.choice(kinds)))
    return cases[: count or None]


def damage_hostile(folder, name: str, kind: str, rng: random.Random) -> str:
    path = folder / name
    if kind in NOT_REGULAR:
        _not_regular(path, kind)
    elif kind in ROWS:
        _poison(path, kind, rng)
    elif kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
    else:
        kind = f"bit flip ({_flip(path, rng)})"
    return f"{name}: {kind}"


def strict(kind: str) -> bool:
    """Damage that must be exit 2 (truncation and bit flips may leave a readable index)."""
    return kind in NOT_REGULAR or kind in ROWS


class _Alarm(Exception):
    pass


def within_seconds(seconds: int, call):
    """``call()``, or _Alarm after ``seconds`` (a hang on a FIFO is a failure, not a stuck run)."""
    import signal

    def ring(signum, frame):
        raise _Alarm

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


COMMANDS = (
    ["ask", HOSTILE_QUESTION],
    ["info"],
    ["ask", HOSTILE_QUESTION, "--mode", "keyword"],
    ["info", "--json"],
    ["ask", HOSTILE_QUESTION, "--mode", "dense", "--json"],
)


def check_outcome(result, where: str, must_fail: bool) -> str:
    """Exit 0 or a one-line error with exit 2 (``must_fail``: only the error); never exit 1."""
    assert result.exit_code in ((2,) if must_fail else (0, 2)), where
    assert result.exception is None or isinstance(result.exception, SystemExit), where
    assert "Traceback" not in result.output and "unexpected" not in result.stderr, where
    if result.exit_code == 2:
        assert result.stderr.strip().count("\n") == 0 and result.stderr.startswith("error: "), where
        assert "pickled" not in result.stderr, where  # /dev/zero is no pickle
    return "exit 2" if result.exit_code == 2 else "answered"


@pytest.fixture(scope="module")
def fake_index(tmp_path_factory):
    from tests.helpers import SAMPLE_DOCS, HashingEmbedder

    index = tmp_path_factory.mktemp("fake") / "index"
    build_index(SAMPLE_DOCS, index, embedder=HashingEmbedder())
    return index


def _mcp_call(folder, embedder, info: bool) -> None:
    from semsearch.mcp.server import Library

    library = Library(folder, embedder=embedder)
    return library.index_info() if info else library.search(HOSTILE_QUESTION)


def run_hostile(index, tmp_path, cases, rng, embedder, mcp_every: int = 4) -> dict:
    """Damage a copy of ``index`` per case, run a command (or MCP's library) on it."""
    outcomes = {"exit 2": 0, "answered": 0, "mcp error": 0, "mcp answered": 0}
    for trial, (name, kind) in enumerate(cases):
        folder = tmp_path / f"hostile-{trial}"
        shutil.copytree(index, folder, symlinks=True)
        damage = damage_hostile(folder, name, kind, rng)
        if trial % mcp_every == mcp_every - 1:
            call = functools.partial(_mcp_call, folder, embedder, trial % 2 == 0)
            try:
                within_seconds(CASE_SECONDS, call)
                assert not strict(kind), f"{damage} → MCP answered"
                outcomes["mcp answered"] += 1
            except _Alarm:
                pytest.fail(f"{damage} → MCP hung")
            except Exception as exc:  # a tool error: one line, no traceback
                assert type(exc).__name__ == "ToolError" and "\n" not in str(exc).strip(), (damage, exc)
                outcomes["mcp error"] += 1
        else:
            command = COMMANDS[trial % len(COMMANDS)]
            arguments = [*command, "--index", str(folder)]
            try:
                result = within_seconds(CASE_SECONDS, functools.partial(runner.invoke, app, arguments))
            except _Alarm:
                pytest.fail(f"{damage} → {' '.join(command)} hung")
            where = f"{damage} → {' '.join(command)}: exit {result.exit_code}\n{result.output}"
            outcomes[check_outcome(result, where, strict(kind))] += 1
        shutil.rmtree(folder)
    return outcomes


def test_hostile_index_files_and_poisoned_rows_fast_lane(fake_index, tmp_path, monkeypatch):
    from semsearch.retrieve import opening
    from tests.helpers import HashingEmbedder

    monkeypatch.setattr(opening, "load_embedder", lambda spec, local_only=True: HashingEmbedder())
    intact = runner.invoke(app, ["ask", HOSTILE_QUESTION, "--index", str(fake_index)])
    assert intact.exit_code == 0, intact.output
    rng = random.Random(22)
    cases = hostile_cases(rng)  # the systematic ones alone
    assert len(cases) == len(INDEX_FILES) * len(NOT_REGULAR) + len(MATRICES) * len(ROWS)
    outcomes = run_hostile(fake_index, tmp_path, cases, rng, HashingEmbedder())
    print(f"{len(cases)} hostile index cases: {outcomes}")
    assert outcomes["answered"] == outcomes["mcp answered"] == 0


@pytest.mark.slow
def test_hostile_index_files_poisoned_rows_truncation_and_bit_flips(sample_index, tmp_path):
    intact = runner.invoke(app, ["ask", QUESTION, "--index", str(sample_index)])
    assert intact.exit_code == 0, intact.output
    from semsearch.retrieve.opening import embedder_for, load_index

    rng = random.Random(2022)
    cases = hostile_cases(rng, 300)
    embedder = embedder_for(load_index(sample_index))
    outcomes = run_hostile(sample_index, tmp_path, cases, rng, embedder, mcp_every=5)
    print(f"{len(cases)} hostile index cases on the real index: {outcomes}")
    assert outcomes["exit 2"] + outcomes["mcp error"] > len(cases) * 0.7


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_vocabulary_of_garbage_its_own_length_is_damage_not_no_answer(fake_sample_index, tmp_path, mode):
    """Random bytes of the vocabulary's own length pass its size check against the offsets; read
    as tokens they would hold no word of any question: a keyword search said "No answer" (exit 1,
    seen by the full suite's random damage) and hybrid would rank without its keyword side."""
    damaged = tmp_path / "index"
    shutil.copytree(fake_sample_index, damaged)
    vocabulary = damaged / "keywords.vocab.txt"
    vocabulary.write_bytes(random.Random(3).randbytes(vocabulary.stat().st_size))
    result = runner.invoke(app, ["ask", QUESTION, "--index", str(damaged), "--mode", mode])
    assert result.exit_code == 2, result.output
    assert "the keyword index is damaged" in result.stderr and "Traceback" not in result.output
