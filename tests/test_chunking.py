from __future__ import annotations

import re

import pytest

from semsearch.chunking import chunk_markdown, embedding_text, parse_markdown
from semsearch.tokens import count_tokens

DOC = """\
---
title: Front matter title
secret: not body text
---
# Guide

Intro paragraph of the guide.

## Install

Run the installer.

```bash
# this is a comment, not a heading
pip install thing
```

Setext section
--------------

Body under a setext heading.

### Deep *subsection*

| col | val |
|-----|-----|
| a   | 1   |
| b   | 2   |

Other title
===========

- item one
- item two
"""


def chunk(text: str, max_tokens: int = 300, **kwargs):
    return chunk_markdown(text, "dir/doc.md", max_tokens=max_tokens, count_tokens=count_tokens, **kwargs)


def test_heading_paths_follow_nesting_setext_and_ignore_fenced_hashes():
    paths = [c.headings for c in chunk(DOC)]
    assert paths == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Setext section"),
        ("Guide", "Setext section", "Deep subsection"),
        ("Other title",),
    ]
    install = chunk(DOC)[1]
    assert "# this is a comment, not a heading" in install.text


def test_front_matter_is_metadata_not_body():
    document = parse_markdown(DOC)
    assert "secret: not body text" in document.front_matter
    chunks = chunk(DOC)
    assert chunks and all("secret" not in c.text and "Front matter" not in c.text for c in chunks)


def test_line_numbers_map_back_to_the_file():
    lines = DOC.split("\n")
    for c in chunk(DOC):
        assert "\n".join(lines[c.start_line - 1 : c.end_line]).strip() == c.text


def test_embedded_text_starts_with_heading_path():
    deep = chunk(DOC)[3]
    assert deep.section == "Guide › Setext section › Deep subsection"
    assert embedding_text(deep).startswith("Guide › Setext section › Deep subsection\n\n")


def test_text_before_any_heading_uses_the_file_name_as_context():
    (only,) = chunk("Just a note without headings.\n")
    assert only.headings == ()
    assert embedding_text(only).startswith("doc.md\n\n")


def test_crlf_and_bom_keep_line_numbers():
    text = "\ufeff# T\r\n\r\nfirst\r\n\r\n## S\r\n\r\nsecond line\r\n"
    chunks = chunk(text)
    assert [(c.text, c.start_line, c.end_line) for c in chunks] == [("first", 3, 3), ("second line", 7, 7)]


def _long_section(paragraphs: int = 12) -> str:
    sentence = "Zwrot środków następuje w ciągu czternastu dni od otrzymania oświadczenia klienta. "
    body = "\n\n".join(sentence * 4 for _ in range(paragraphs))
    table = "\n".join(
        ["| kolumna | wartość |", "|---|---|"] + [f"| wiersz {i} | {i * 7} zł |" for i in range(40)]
    )
    items = "\n".join(f"- punkt listy numer {i} z krótkim opisem" for i in range(40))
    return f"# Regulamin\n\n## Zwroty\n\n{body}\n\n{table}\n\n{items}\n\n{'słowo ' * 400}\n"


@pytest.mark.parametrize("budget", [32, 60, 150, 300])
def test_no_chunk_over_budget_and_every_body_line_lands_in_a_chunk(budget):
    text = _long_section()
    chunks = chunk(text, max_tokens=budget)
    assert all(c.tokens <= budget for c in chunks)
    assert all(count_tokens(embedding_text(c)) == c.tokens for c in chunks)
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    body_lines = {
        n for n, line in enumerate(text.split("\n"), 1) if line.strip() and not line.startswith("#")
    }
    assert body_lines <= covered


@pytest.mark.parametrize("budget", [32, 60, 150])
def test_splits_never_cut_a_word_and_keep_all_text(budget):
    text = _long_section()
    chunks = chunk(text, max_tokens=budget)
    original_words = re.findall(r"\S+", text.split("## Zwroty", 1)[1])
    chunk_words = [w for c in chunks for w in re.findall(r"\S+", c.text)]
    assert chunk_words == original_words


def test_table_rows_and_list_items_are_not_cut_when_a_row_fits():
    chunks = chunk(_long_section(), max_tokens=60)
    rows = [line for c in chunks for line in c.text.split("\n") if line.startswith("|")]
    items = [line for c in chunks for line in c.text.split("\n") if line.startswith("- punkt")]
    assert len(rows) >= 42 and len(items) == 40, (len(rows), len(items))  # every row and item is checked
    for line in rows:
        assert line.endswith("|"), line
    for line in items:
        assert line.endswith("opisem"), line


def test_extra_fits_limit_splits_further():
    text = _long_section(paragraphs=3)
    chunks = chunk(text, max_tokens=300, fits=lambda t: len(t) <= 200)
    assert len(chunks) > 1 and all(len(embedding_text(c)) <= 200 for c in chunks)


def test_heading_only_and_empty_documents_give_no_chunks():
    assert chunk("") == []
    assert chunk("# Title\n\n## Section\n") == []
    assert chunk("---\ntitle: x\n---\n") == []


def test_chunk_ids_are_unique_and_ordered():
    chunks = chunk(_long_section(), max_tokens=60)
    assert [c.id for c in chunks] == [f"dir/doc.md#{i}" for i in range(len(chunks))]
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)


def test_a_lead_in_sentence_stays_with_the_list_it_introduces():
    filler = " ".join(f"Zdanie numer {i} opisuje zasady zwrotu towaru w sklepie." for i in range(4))
    items = "\n".join(f"- cel przetwarzania numer {i};" for i in range(6))
    text = f"# Polityka\n\n## Cele\n\n{filler}\n\nNa tej podstawie:\n\n{items}\n"
    chunks = chunk(text, max_tokens=120)  # the filler and the lead-in fit together; the list does not
    assert len(chunks) == 2
    with_list = next(c for c in chunks if "- cel przetwarzania numer 0;" in c.text)
    assert "Na tej podstawie:" in with_list.text
    assert not any(c.text.rstrip().endswith(":") for c in chunks)
