"""The examples each command's ``--help`` ends with: real command lines on the sample ``docs/`` of
semsearch's source, each with what it does (``tests/cli/test_help_examples.py`` runs every one,
so they stay true). Plain strings: ``--help`` loads no library."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "build": (
        ("semsearch build docs", "index the Markdown files under docs/ into ./index"),
        ("semsearch build docs --dry-run", "what a build would embed, and about how long it would take here"),
        ("semsearch build docs --exclude 'drafts/'", "leave a folder out (.gitignore patterns)"),
    ),
    "ask": (
        (
            'semsearch ask "Ile mam dni na zwrot towaru?"',
            "the best passages, each with its lines that answer",
        ),
        (
            'semsearch ask "Jak złożyć reklamację?" --path docs/reklamacje.md -k 1',
            "the best passage of one file",
        ),
        (
            'semsearch ask "Ile mam dni na odstąpienie od umowy?" --context | llm',
            "a prompt for a language model, the best source last",
        ),
    ),
    "info": (
        ("semsearch info", "the model, files, chunks and no-answer gate of the index found here"),
        ("semsearch info --json", "the same as one JSON object"),
    ),
    "eval": (
        ("semsearch eval tests/data/docs_questions.jsonl", "how well the index answers the sample questions"),
        ("semsearch eval --init", "start questions.jsonl: drafts from your documents' headings, to edit"),
        ("semsearch eval tests/data/docs_questions.jsonl -k 1,3,10", "recall at 1, 3 and 10 too"),
    ),
    "mcp": (
        ('semsearch mcp --index "$PWD/index"', "serve the index here to an MCP client on stdin/stdout"),
        ('claude mcp add docs -- semsearch mcp --index "$PWD/index"', "register it in Claude Code"),
    ),
    "watch": (
        ("semsearch watch docs", "build docs/ into ./index, then rebuild whenever a file changes"),
        ("semsearch watch docs -q", "the same, printing only the summaries"),
    ),
}


def epilog(command: str) -> str:
    """The examples of ``command`` as its help's last paragraph (Rich markup: ``[`` escaped)."""
    lines = [f"$ {line}\n    {meaning}" for line, meaning in EXAMPLES[command]]
    return ("Examples:\n" + "\n".join(lines)).replace("[", "\\[")
