from __future__ import annotations

import re

import pytest

from semsearch.ingest.chunking import chunk_markdown, context_prefix, embedding_text
from semsearch.ingest.markdown import parse_markdown
from semsearch.ingest.tokens import count_tokens

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
    # the lines as written: the text of a table's later chunks starts with its header again
    chunk_words = [w for c in chunks for w in re.findall(r"\S+", c.shown)]
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


_BODY = "\n\n".join(
    "Zwrot środków następuje w ciągu czternastu dni od otrzymania oświadczenia klienta. " * 3
    for _ in range(4)
)
_LONG_TITLE = " ".join(["Ten akapit kończy się linią z trzema myślnikami, więc jest nagłówkiem."] * 8)


def test_a_heading_over_the_budget_is_cut_and_the_text_keeps_normal_sized_chunks():
    budget = 60
    assert count_tokens(_LONG_TITLE) >= 3 * budget
    chunks = chunk(f"# Top\n\n{_LONG_TITLE}\n---\n\n{_BODY}\n", max_tokens=budget)  # a setext heading
    assert all(c.tokens <= budget and count_tokens(embedding_text(c)) == c.tokens for c in chunks)
    assert all(count_tokens(c.text) >= budget // 3 for c in chunks[:-1])
    assert [w for c in chunks for w in c.text.split()] == _BODY.split()
    top, cut = chunks[0].headings  # the stored heading is the shortened one that was embedded
    assert top == "Top" and cut.endswith(" …") and _LONG_TITLE.startswith(cut.removesuffix(" …"))
    assert count_tokens(context_prefix(chunks[0].headings, "doc.md")) <= budget // 2


def test_a_long_heading_leaves_room_under_the_models_own_limit_too():
    limit = 400  # characters here; the model's tokenizer in production
    body = " ".join(_BODY.split())  # one paragraph of sentences
    chunks = chunk(f"{_LONG_TITLE}\n---\n\n{body}\n", max_tokens=1000, fits=lambda t: len(t) <= limit)
    assert all(len(embedding_text(c)) <= limit for c in chunks)
    assert all(len(c.text) >= limit // 3 for c in chunks[:-1])
    assert [w for c in chunks for w in c.text.split()] == body.split()


@pytest.mark.parametrize("depth", [12, 15, 80])
def test_headings_after_a_deeply_nested_list_still_open_their_sections(depth):
    nested = "\n".join("  " * i + f"- poziom {i}" for i in range(depth))
    text = f"# A\n\nWstęp.\n\n{nested}\n\n# B\n\nAkapit B.\n\n## C\n\nAkapit C.\n"
    chunks = chunk(text, max_tokens=2000)
    assert [(c.headings, c.text, c.start_line) for c in chunks[-2:]] == [
        (("B",), "Akapit B.", depth + 8),
        (("B", "C"), "Akapit C.", depth + 12),
    ]
    assert all(c.headings == ("A",) for c in chunks[:-2])
    assert f"- poziom {depth - 1}" in chunks[-3].text


def test_a_too_deep_blockquote_keeps_its_text_and_the_next_heading():
    text = "# A\n\n" + "> " * 120 + "cytat\n\n# B\n\nAkapit B.\n"
    chunks = chunk(text)
    assert [c.headings for c in chunks] == [("A",), ("B",)]
    assert chunks[0].text.endswith("cytat")


def test_html_comments_alone_give_no_chunks():
    text = (
        "# fs <!-- stability: 2 -->\n\n<!-- YAML\nadded: v0.1.8\n-->\n\n"
        "## fs.read\n\n<!-- YAML added: v0.3.3 -->\n<!-- changes: [] -->\n\n  <!-- indented -->\n"
    )
    assert chunk(text) == []


def test_html_comments_are_removed_from_chunk_text_and_lines_still_map():
    text = (
        "# fs <!-- stability: 2 -->\n\n<!-- YAML added: v0.1.8 -->\n\n"
        "Czyta plik <!-- a hidden\nnote --> w całości.\n\n<!-- YAML added: v0.3.3 -->\n\n"
        "- punkt <!-- x -->\n- drugi\n\n<!-- end -->\n"
    )
    (only,) = chunk(text)
    assert only.headings == ("fs",)
    assert only.text == "Czyta plik w całości.\n\n- punkt\n- drugi"
    assert (only.start_line, only.end_line) == (5, 11)


def test_html_comments_in_code_stay():
    text = (
        "# T `<!-- h -->`\n\n```html\n<!-- x -->\n```\n\nUżyj `<!-- y -->` albo \\<!-- z -->.\n\n"
        "    <!-- wcięty kod -->\n\n- punkt\n\n  ```\n  <!-- w liście -->\n  ```\n"
    )
    (only,) = chunk(text)
    assert only.headings == ("T <!-- h -->",)
    kept = ["<!-- x -->", "`<!-- y -->`", "albo <!-- z -->.", "<!-- wcięty kod -->", "<!-- w liście -->"]
    for piece in kept:  # an escaped comment is text, shown as a reader sees it: unescaped
        assert piece in only.text
    assert "\\<!-- z -->" in only.shown


def test_a_setext_heading_over_several_lines_keeps_its_words_apart():
    (only,) = chunk("Długi akapit\nna dwie *linie*\\\nz przerwą\n---\n\nTreść.\n")
    assert only.headings == ("Długi akapit na dwie linie z przerwą",)
