"""The page side of an index (encode/pages.py), page names (ingest/pages.py) and page evidence
(retrieve/pages.py), checked against brute force and small folders worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from semsearch.encode.keywords import tokenize
from semsearch.encode.pages import PageIndex, PageText, build_page_index
from semsearch.ingest.chunking import chunk_document
from semsearch.ingest.pages import file_title, page_names
from semsearch.ingest.tokens import count_tokens
from semsearch.retrieve.pages import best_two, page_evidence
from semsearch.retrieve.search import rescaled

GLOSSARY = PageText(
    ("Glossary",), ("Backlinks: notes linking here.", "Templates: reused notes.", "Tags: labels."), (0, 3)
)
PAGES = [
    GLOSSARY,
    PageText(("Backlinks",), ("The backlinks panel lists the notes that link to this one.",), (3, 5)),
    PageText(("Templates",), ("A template is a note whose text starts new notes.",), (5, 6)),
    PageText(("Tags",), ("Tags label notes; a tag is a word after #.",), (6, 8)),
    PageText((), ("A page without a title mentions templates.",), (8, 9)),
]


def test_topics_count_the_other_pages_whose_title_a_page_mentions():
    pages = build_page_index(PAGES, "en")
    assert pages.count == 5
    assert pages.starts.tolist() == [0, 3, 5, 6, 8, 9]
    # the glossary names three of the four other pages' titles, the untitled page one
    assert pages.topics.tolist() == pytest.approx([3 / 4, 0, 0, 0, 1 / 4])
    # Backlinks, Templates and Tags are named elsewhere; the glossary and the untitled page not
    assert pages.linked == pytest.approx(3 / 5)


def test_topics_against_brute_force_on_random_folders():
    rng = np.random.default_rng(3)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    for _ in range(20):
        count = int(rng.integers(2, 9))
        texts = [" ".join(rng.choice(words, int(rng.integers(1, 6)))) for _ in range(count)]
        titles = [" ".join(rng.choice(words, int(rng.integers(1, 3)))) for _ in range(count)]
        pages = [PageText((t,), (x,), (i, i + 1)) for i, (t, x) in enumerate(zip(titles, texts, strict=True))]
        built = build_page_index(pages, None)
        held = [set(tokenize(f"{t} {x}")) for t, x in zip(titles, texts, strict=True)]
        expected = [
            sum(1 for q in range(count) if q != p and set(tokenize(titles[q])) <= held[p]) / (count - 1)
            for p in range(count)
        ]
        assert built.topics.tolist() == pytest.approx(expected)


def test_saved_and_loaded_alike_and_damage_refused(tmp_path):
    pages = build_page_index(PAGES, "en")
    pages.save(tmp_path)
    loaded = PageIndex.load(tmp_path, rows=9, language="en", linked=pages.linked)
    assert loaded.starts.tolist() == pages.starts.tolist()
    assert loaded.topics.tolist() == pages.topics.tolist()
    question = tokenize("template notes", "en")
    assert loaded.keywords.token_scores(question).tolist() == pages.keywords.token_scores(question).tolist()
    with pytest.raises(ValueError, match="does not cover"):
        PageIndex.load(tmp_path, rows=10, language="en", linked=0.5)
    np.save(tmp_path / "pages.topics.npy", np.array([np.nan] * 5, dtype=np.float32))
    with pytest.raises(ValueError, match="a share per page"):
        PageIndex.load(tmp_path, rows=9, language="en", linked=0.5)


@pytest.mark.parametrize(
    ("source", "title"),
    [
        ("user/features/block-anchors.md", "block anchors"),
        ("docs/Daily_Notes.md", "Daily Notes"),
        ("index.md", ""),
        ("_index.md", ""),
        ("README.md", ""),
        ("notes/0042.md", ""),
        ("2024-05-01.md", ""),
    ],
)
def test_a_file_name_is_a_title_only_when_it_is_words(source, title):
    assert file_title(source) == title


def test_page_names_take_obsidian_aliases_not_hugo_addresses():
    assert page_names("Aliases", "aliases.md", {"aliases": ["Alternative names", "Alias"]}) == (
        "Aliases",
        "Alternative names",
        "Alias",
    )
    hugo = {"aliases": ["/docs/concepts/data-sources", "otel"]}
    assert page_names("", "concepts/signals/_index.md", hugo) == ("otel",)
    assert page_names("", "block-anchors.md", {"alias": "Block IDs"}) == ("block anchors", "Block IDs")
    assert page_names("", "index.md", {"aliases": 3}) == ()


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Block Anchors\n\nText.\n\n## Adding\n\nMore.\n", "Block Anchors"),
        ("---\ntitle: Muestreo\n---\n\nTexto.\n\n## Términos\n\nMás.\n", "Muestreo"),
        ("## Only a section\n\nText.\n", ""),
        ("Text first.\n\n# Later title\n\nText.\n", "Later title"),
    ],
)
def test_a_document_title_is_its_first_h1_else_its_front_matter_title(text, title):
    assert chunk_document(text, "page.md", max_tokens=200, count_tokens=count_tokens).title == title


def test_best_two_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        sizes = rng.integers(1, 6, size=int(rng.integers(1, 8)))
        starts = np.concatenate([[0], np.cumsum(sizes)])
        values = rng.integers(0, 4, size=int(starts[-1])).astype(np.float64)  # ties on purpose
        page_of_row = np.repeat(np.arange(len(sizes)), sizes)
        expected = [
            np.sort(values[a:b])[::-1][:2].mean() for a, b in zip(starts[:-1], starts[1:], strict=True)
        ]
        assert best_two(values, starts, page_of_row).tolist() == pytest.approx(expected)


def test_a_hub_loses_to_the_page_about_the_topic_and_nothing_moves_where_pages_are_unlinked():
    pages = build_page_index(PAGES, "en")
    page_of_row = pages.page_of_rows()
    cosine = np.array([0.9, 0.7, 0.7, 0.88, 0.85, 0.8, 0.75, 0.7, 0.6], dtype=np.float32)
    keywords = pages.keywords.token_scores(tokenize("backlinks", "en"))
    evidence = page_evidence(pages, page_of_row, cosine, keywords)
    assert evidence[1] > evidence[0]  # Backlinks over the glossary that mentions it
    # with the glossary's passage 0.02 ahead, the page about backlinks now comes first
    assert (rescaled(cosine) + evidence[page_of_row]).argmax() in (3, 4)
    unlinked = PageIndex(pages.keywords, pages.starts, pages.topics, linked=0.0)
    assert not page_evidence(unlinked, page_of_row, cosine, keywords).any()


def test_page_bm25_from_counts_equals_bm25s_over_whole_pages():
    """The page index counts each page's tokens passage by passage (a huge page is never one token
    stream in memory); its weights are bm25s's own over the pages written whole."""
    from semsearch.encode.keywords import build_keyword_index
    from semsearch.encode.pages import page_keywords

    rng = np.random.default_rng(5)
    words = ["zwrot", "pieniędzy", "paczka", "kurier", "notatka", "szablon", "graf", "tag", "link"]
    pages = [
        PageText(
            tuple(" ".join(rng.choice(words, 2)) for _ in range(int(rng.integers(0, 2)))),
            tuple(
                " ".join(rng.choice(words, int(rng.integers(1, 30)))) for _ in range(int(rng.integers(1, 4)))
            ),
            (p, p + 1),
        )
        for p in range(12)
    ]
    ours = page_keywords(pages, "pl")
    whole = build_keyword_index([" ".join([*page.names, *page.texts]) for page in pages], "pl")
    for word in words:
        tokens = tokenize(word, "pl")
        assert ours.token_scores(tokens) == pytest.approx(whole.token_scores(tokens), rel=1e-5)
