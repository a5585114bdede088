"""Measure search quality on the sample corpus: the same evaluation as `semsearch eval`, passage-level
(the right passage: the one holding the labelled answer; README's table also gives file-level figures).

python evaluate.py                      # tests/data/docs_questions.jsonl against index/
python evaluate.py QUESTIONS --index DIR [--json] [--calibrate]
"""

from __future__ import annotations

import sys

from semsearch.cli.commands import app

SAMPLE_QUESTIONS = "tests/data/docs_questions.jsonl"

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        args = [SAMPLE_QUESTIONS, *args]
    app(["eval", *args], prog_name="evaluate.py")
