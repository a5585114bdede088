"""A PostgreSQL index damaged or crafted by someone else: each is one line and exit 2, nothing
read beyond a bound and nothing unpickled (the server's rows are data: arrays, text, numbers).
Each test builds a small index into a fresh schema, changes its tables with plain SQL, then asks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, semsearch_here, write
from tests.postgres import connected

pytestmark = pytest.mark.slow


@pytest.fixture
def built(tmp_path, postgres_index) -> tuple[str, str]:
    """A small index of three files in a fresh schema: its URL and the version of its tables."""
    docs = tmp_path / "docs"
    write(
        docs / "dostawa.md",
        "# Dostawa\n\nDostawa do paczkomatu kosztuje 9 zł.\n\n## Zwroty\n\nZwrot w 14 dni.\n",
    )
    write(docs / "kody.md", "# Kody\n\nKod PAY-517 oznacza odrzuconą płatność.\n")
    write(docs / "inne.md", "# Inne\n\nGodziny pracy biura: 8-16.\n")
    done = semsearch_here("build", docs, "--index", postgres_index, "--model", FAKE_MODEL)
    assert done.returncode == 0, done.stderr
    with connected(postgres_index) as connection:
        version = connection.execute("SELECT version FROM semsearch_index").fetchone()[0]
    return postgres_index, version


def damage(url: str, *statements: str) -> None:
    with connected(url) as connection:
        for statement in statements:
            connection.execute(statement)


def asked(url: str, *fragments: str, question: str = "Ile kosztuje dostawa?") -> None:
    done = semsearch_here("ask", question, "--index", url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("statements", "said"),
    [
        (["UPDATE semsearch_index SET dim = 1000000000"], "sizes do not add up"),
        (["UPDATE semsearch_index SET offtopic_rows = 1073741824"], "sizes do not add up"),
        (["UPDATE semsearch_index SET rows = 7"], "record says 7 rows"),
        (["UPDATE semsearch_index SET format = 99"], "another format"),
        (["UPDATE semsearch_index SET format = 1"], "older format (1; this semsearch reads 2): build it"),
        (["UPDATE semsearch_index SET meta = '{not json'"], "unreadable record"),
        (["UPDATE semsearch_index SET kind = 'mine'"], "not made by semsearch"),
        (["UPDATE semsearch_index SET version = 'x; DROP TABLE y'"], "naming no version"),
        (["UPDATE semsearch_index SET page_starts = '\\x00'::bytea"], "sizes do not add up"),
        (
            ["UPDATE semsearch_index SET offtopic = decode(repeat('0000c07f', offtopic_rows * dim), 'hex')"],
            "NaN, infinite, zero or not unit length",
        ),
    ],
)
def test_a_crafted_record_is_one_line(built, statements, said):
    url, _ = built
    damage(url, *statements)
    asked(url, said)


def test_tables_of_another_dimension_or_missing_are_one_line(built):
    url, version = built
    damage(url, f"ALTER TABLE pages_{version} ALTER COLUMN centroid TYPE vector(3) USING '[1,0,0]'")
    asked(url, "holds vector(3), expected vector(64)")
    damage(url, f"DROP TABLE terms_{version}")
    asked(url, "incomplete", f"terms_{version}")


def test_a_truncated_table_is_one_line(built):
    url, version = built
    damage(url, f"DELETE FROM chunks_{version} WHERE row > 0")
    asked(url, "passages where its record says")


@pytest.mark.parametrize(
    ("statement", "said"),
    [
        ("UPDATE terms_{v} SET rows = array[999999], weights = array[1.0]", "does not hold"),
        (
            "UPDATE terms_{v} SET rows = rows || rows || rows || rows || rows, weights = weights",
            "longer than",
        ),
        ("UPDATE terms_{v} SET weights = array_fill('NaN'::real, array[cardinality(rows)])", "not finite"),
        ("UPDATE chunks_{v} SET chunk = '{{\"x\": 1}}'", "unreadable passage"),
        ("UPDATE chunks_{v} SET chunk = repeat('x', 70000000)", "larger than"),
        ("UPDATE files_{v} SET record = '{{not json'", "unreadable file record"),
        ("UPDATE files_{v} SET record = '[1, 2]'", "not one semsearch writes"),
        ("UPDATE files_{v} SET record = '{{\"rows\": [0, 99999]}}'", "not one semsearch writes"),
        ('UPDATE files_{v} SET record = \'{{"size": "big"}}\'', "not one semsearch writes"),
        ("UPDATE files_{v} SET record = repeat('x', 70000000)", "larger than"),
    ],
)
def test_damaged_rows_are_one_line_when_read(built, statement, said):
    url, version = built
    damage(url, statement.format(v=version))
    asked(url, said, question="Ile kosztuje dostawa do paczkomatu?")


def test_a_build_replaces_an_index_of_the_older_format(built, tmp_path):
    url, _ = built
    damage(url, "UPDATE semsearch_index SET format = 1")
    done = semsearch_here("build", tmp_path / "docs", "--index", url, "--model", FAKE_MODEL)
    assert done.returncode == 0, done.stderr
    answered = semsearch_here("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", url)
    assert answered.returncode == 0 and "dostawa.md" in answered.stdout, answered.stderr


def test_a_record_claiming_a_billion_dimensions_is_refused_in_a_small_process(built):
    """Run with a 2 GiB address space: reading anything sized by the claim would fail there."""
    url, _ = built
    damage(url, "UPDATE semsearch_index SET dim = 1000000000, offtopic_rows = 1000000000")
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
    code = limit + "from semsearch.__main__ import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "info", "--index", url],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": f"{FAKE_SITE}:{REPO}", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 2 and "sizes do not add up" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
