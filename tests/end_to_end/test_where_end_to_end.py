"""--where end to end: the installed `semsearch` command, the default model, a folder with front matter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import write
from tests.unit.ingest.test_front_matter import UMOWA, write_sample

pytestmark = pytest.mark.slow
SEMSEARCH = Path(sys.executable).parent / "semsearch"  # the console script pip installed
QUESTION = "Do kiedy trzeba zapłacić czynsz?"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run([str(SEMSEARCH), *args], capture_output=True, text=True, env=env, cwd=cwd)


def sources(result: subprocess.CompletedProcess) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [hit["source"] for hit in json.loads(result.stdout)["results"]]


def test_where_filters_before_the_top_k_through_the_installed_command(tmp_path):
    write_sample(tmp_path / "docs")
    write(tmp_path / "docs" / "archiwum" / "stara-umowa.md", UMOWA.replace("2024", "2019"))
    built = run("build", "docs", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "Indexed 5 files into 5 chunks" in built.stdout
    assert "warning: broken.md:3: front matter is not valid YAML" in built.stderr

    info = json.loads(run("info", "--json", cwd=tmp_path).stdout)
    assert info["front_matter"] == {"date": 3, "tags": 3, "type": 3, "year": 3, "lang": 2}
    assert "fields     date (3 files), tags (3 files)" in run("info", cwd=tmp_path).stdout

    ask = ["ask", QUESTION, "--json", "-k", "5", "--min-score", "-1"]
    assert len(sources(run(*ask, cwd=tmp_path))) == 5
    assert sorted(sources(run(*ask, "--where", "type=umowa", cwd=tmp_path))) == [
        "archiwum/stara-umowa.md",
        "umowa.md",
    ]
    assert sources(run(*ask, "--where", "type=umowa", "--where", "year>=2024", cwd=tmp_path)) == ["umowa.md"]
    older = run(*ask, "--where", "date<2023-01-01", "--where", "tags=prawo", cwd=tmp_path)
    assert sorted(sources(older)) == ["archiwum/stara-umowa.md", "regulamin.md"]
    composed = run(*ask, "--where", "tags=faq", "--path", "docs/archiwum", cwd=tmp_path)
    assert sources(composed) == ["archiwum/stara-umowa.md"]
    keyword = run(*ask, "--where", "lang=pl", "--mode", "keyword", cwd=tmp_path)
    assert set(sources(keyword)) <= {"umowa.md", "archiwum/stara-umowa.md"} and sources(keyword)

    nothing = run("ask", QUESTION, "--where", "year>=2030", cwd=tmp_path)
    assert nothing.returncode == 2 and nothing.stderr.startswith(
        "error: no indexed file matches the condition(s) "
    )
    bad = run("ask", QUESTION, "--where", "type>umowa", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
