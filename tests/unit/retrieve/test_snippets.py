"""Snippets: the window of a passage that holds the question's keywords, structure kept."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from semsearch.ingest.chunking import Chunk
from semsearch.retrieve.search import Hit
from semsearch.retrieve.snippets import ELLIPSIS, SNIPPET_CHARS, Terms, best_snippet, question_terms, units


def snippet(text: str, question: str, start_line: int = 1, **options):
    return best_snippet(text, start_line, question_terms(question, "pl"), **options)


ERRORS = "\n".join(
    [
        "Gdy płatność się nie powiedzie, pojawi się kod błędu. Najczęstsze z nich:",
        "",
        "- **PAY-402** – bank wydawcy odrzucił transakcję. Sprawdź ustawienia w aplikacji banku "
        "lub użyj innej karty, a jeśli to nie pomoże, zadzwoń do banku.",
        "- **PAY-517** – nie udało się dokończyć weryfikacji 3-D Secure, bo potwierdzenie nie "
        "nadeszło w ciągu pięciu minut.",
        "- **PAY-630** – zamówienie zostało już opłacone wcześniej.",
        "- **BLIK-09** – kod BLIK wygasł albo został wpisany z błędem.",
        "- **BLIK-11** – transakcja została odrzucona w aplikacji bankowej.",
        "",
        "Jeżeli mimo błędu bank pokazuje obciążenie rachunku, zazwyczaj jest to tylko tymczasowa "
        "blokada środków.",
    ]
)


def test_the_list_item_that_names_the_code_is_shown_with_its_marker_and_line():
    shown = snippet(ERRORS, "Co oznacza błąd PAY-517?", start_line=35)
    lines = shown.text.split("\n")
    assert lines[0] == ELLIPSIS  # the lines above are left out, and say so
    assert lines[1].startswith("- **PAY-517** – nie udało się")
    assert "PAY-402" not in shown.text
    assert (shown.start_line, ERRORS.split("\n")[shown.start_line - 35]) == (38, lines[1])


def test_a_passage_with_no_keyword_of_the_question_shows_its_beginning():
    shown = snippet(ERRORS, "Jaka jest pogoda w Krakowie?", start_line=10)
    assert shown.text.startswith("Gdy płatność się nie powiedzie")
    assert shown.start_line == 10
    assert shown.text.endswith(ELLIPSIS)


def test_the_best_sentence_of_a_long_paragraph_line_is_shown_with_elisions():
    sentences = [f"Zdanie numer {i} mówi o czymś zupełnie innym niż reszta tego akapitu." for i in range(12)]
    sentences[7] = "Rebelia wspierana przez CIA wybuchła w 1958 roku na Sumatrze."
    paragraph = "# Indonezja\n\n" + " ".join(sentences)
    shown = snippet(paragraph, "Kiedy wybuchła rebelia wspierana przez CIA?", start_line=1)
    assert shown.text.startswith(ELLIPSIS + " Rebelia wspierana przez CIA")
    assert shown.text.endswith(ELLIPSIS)
    assert shown.start_line == shown.end_line == 3
    assert len(shown.text) <= 320 + 4


CODE = """Zainstaluj pakiet:

```sh
sudo apt update
sudo apt install ./tidewater_4.2.0_amd64.deb
tidewater --version
tidewater --first-run
tidewater --import ~/notes
tidewater --sync-now
```

Potem zaloguj się."""


def test_a_window_inside_a_code_block_keeps_the_fence_and_its_lines():
    shown = snippet(CODE, "tidewater --sync-now", start_line=20, max_lines=3)
    lines = shown.text.split("\n")
    assert lines[1] == "```sh"  # the fence opens the code even though the window starts below it
    assert "tidewater --sync-now" in lines
    assert lines[lines.index("tidewater --sync-now") + 1] == "```"
    source = CODE.split("\n")
    assert source[shown.start_line - 20] in lines and source[shown.end_line - 20] in lines


def test_indentation_and_nested_list_markers_are_kept():
    text = "\n".join(
        [
            "Kroki:",
            "",
            "1. Otwórz ustawienia.",
            "   - Wybierz **Konto**.",
            "   - Kliknij **Usuń konto**.",
            "2. Dalej.",
        ]
    )
    shown = snippet(text, "jak usunąć konto", max_lines=6)
    assert "   - Kliknij **Usuń konto**." in shown.text.split("\n")
    assert "1. Otwórz ustawienia." in shown.text.split("\n")


def test_the_line_range_is_widened_when_comment_lines_were_removed_from_the_passage():
    text = "Pierwsza linia.\nDruga linia o zwrotach.\nTrzecia linia."
    shown = snippet(text, "zwrotach", start_line=10, end_line=14)  # two comment lines were removed
    assert shown.start_line == 10 and shown.end_line == 14
    exact = snippet(text, "zwrotach", start_line=10, end_line=12)
    assert (exact.start_line, exact.end_line) == (10, 12)


def test_lone_letters_and_words_joined_to_them_are_not_keywords():
    terms = question_terms("How do I install it on a Mac?", "en")
    assert "i" not in terms.weights and "do_i" not in terms.weights
    assert "instal" in terms.weights


def test_the_window_holds_the_most_keyword_weight_of_all_windows_brute_force(monkeypatch):
    monkeypatch.setattr("semsearch.retrieve.snippets.LEAD", 0.0)
    rng = random.Random(7)
    words = ["alfa", "beta", "gamma", "delta", "kot", "pies"]
    for _ in range(40):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 6))) + "." for _ in range(10)]
        text = "\n".join(lines)
        terms = Terms({"kot": 3.0, "pies": 1.0})
        shown = best_snippet(text, 1, terms, chars=60, max_lines=3)
        found = units(text)
        best_possible = 0.0
        for first, last in itertools.combinations_with_replacement(range(len(found)), 2):
            width = sum(u.end - u.start for u in found[first : last + 1])
            if width <= 60 and found[last].line - found[first].line < 3:
                held = set().union(*(terms.matched(text[u.start : u.end]) for u in found[first : last + 1]))
                best_possible = max(best_possible, terms.weight(frozenset(held)))
        assert best_possible > 0
        assert terms.weight(terms.matched(shown.text)) >= best_possible, (text, shown)


@pytest.mark.parametrize("question", ["PAY-517", "BLIK-11", "tymczasowa blokada"])
def test_every_line_shown_is_a_line_of_the_passage_in_its_range(question):
    shown = snippet(ERRORS, question, start_line=35)
    source = ERRORS.split("\n")
    in_range = source[shown.start_line - 35 : shown.end_line - 35 + 1]
    body = [line.strip(" " + ELLIPSIS) for line in shown.text.split("\n") if line.strip(" " + ELLIPSIS)]
    assert body, shown
    for line in body:
        assert any(line in original for original in in_range), (line, in_range)


def test_a_hit_gives_its_snippet_from_its_chunk_the_first_with_twice_the_room():
    chunk = Chunk("c#0", "c.md", ("Płatności",), ERRORS, 35, 44, 100)
    shown = Hit(rank=2, score=0.9, chunk=chunk).snippet("Co oznacza błąd PAY-517?")
    assert "PAY-517" in shown.text and shown.start_line == 38
    assert len(shown.text) <= SNIPPET_CHARS + 4 < len(ERRORS)
    first = Hit(rank=1, score=0.9, chunk=chunk).snippet("Co oznacza błąd PAY-517?")
    assert first.text == ERRORS and first.start_line == 35  # the whole passage fits FIRST_CHARS


REFUND = "\n".join(
    [
        "Należność za zwrócony towar przekazujemy niezwłocznie, a najpóźniej w ciągu 14 dni od dnia, "
        "w którym otrzymaliśmy Twoje oświadczenie o odstąpieniu od umowy. Przepisy pozwalają nam jednak "
        "wstrzymać wypłatę do chwili, gdy paczka dotrze do magazynu.",
        "",
        "Zgłoszenie z kodem nadania traktujemy jako dowód wysyłki automatycznie. Jeśli odsyłasz towar "
        "samodzielnie, dołącz zdjęcie potwierdzenia nadania – bez niego zwrot zostanie zlecony dopiero "
        "po dotarciu przesyłki do magazynu.",
    ]
)


def test_the_question_words_its_heading_holds_do_not_place_the_window():
    """Issue 40: "Jak długo trwa zwrot pieniędzy…" under the heading "Termin zwrotu pieniędzy"
    showed the paragraph saying "zwrot" again, not the one answering "14 dni"."""
    chunk = Chunk("z#5", "zwroty.md", ("Zwroty", "Termin zwrotu pieniędzy"), REFUND, 51, 53, 120)
    question = "Jak długo trwa zwrot pieniędzy, gdy odeślę towar?"
    shown = Hit(rank=2, score=0.9, chunk=chunk, keywords=EVEN_RARITY).snippet(question)
    assert "najpóźniej w ciągu 14 dni" in shown.text and shown.start_line == 51
    other_heading = replace(chunk, headings=("Zwroty", "Paczki"))
    elsewhere = Hit(rank=2, score=0.9, chunk=other_heading, keywords=EVEN_RARITY).snippet(question)
    assert "najpóźniej w ciągu 14 dni" not in elsewhere.text  # "zwrot" placed it before: it counts again


class EvenRarity:
    """A keyword side whose every word is as rare as a word in one chunk of twenty."""

    language = "pl"

    @staticmethod
    def idf(tokens):
        return [3.0] * len(tokens)


EVEN_RARITY = EvenRarity()


SETTINGS = "\n".join(
    [
        "At startup, the app reads `sync.toml`:",
        "",
        "```toml",
        "[selective_sync]",
        "# Notebooks listed here are kept in the cloud only",
        'cloud_only = ["Archive 2019"]',
        "",
        "# Skip downloading attachments larger than this on this device",
        "# (in megabytes)",
        "max_attachment_mb = 50",
        "```",
    ]
)


def test_a_window_starting_at_a_line_of_code_takes_the_comments_above_it():
    terms = question_terms("What is max_attachment_mb for?", "en", lambda tokens: [3.0] * len(tokens))
    shown = best_snippet(SETTINGS, 1, terms, chars=120, max_lines=5)
    assert shown.text == "\n".join(
        [
            "…",
            "```toml",
            "…",
            "# Skip downloading attachments larger than this on this device",
            "# (in megabytes)",
            "max_attachment_mb = 50",
            "```",
        ]
    )
    assert shown.start_line == 8
    tight = best_snippet(SETTINGS, 1, terms, chars=80, max_lines=4)  # the comments that fit, and the line
    assert tight.text.split("\n")[3:5] == ["# (in megabytes)", "max_attachment_mb = 50"]


def test_a_fence_line_next_to_the_window_is_shown_as_itself_without_a_false_ellipsis():
    """An outside probe: on a file of two code blocks the snippet ended with the closing fence
    and then "…" (nothing was left out), and its end line stopped before that fence."""
    text = "```python\ndef secret_handler(x):\n    return x * 42\n```\n\n```bash\nexport FOO_BAR=1\n```"
    shown = snippet(text, "export FOO_BAR", start_line=1, max_lines=6)
    assert shown.text == text  # the whole passage, since it fits with its fence lines
    assert (shown.start_line, shown.end_line) == (1, 8)
    inside = snippet(CODE, "tidewater --install", start_line=20, max_lines=2)
    expected = "…\n```sh\n…\nsudo apt install ./tidewater_4.2.0_amd64.deb\ntidewater --version\n```\n…"
    assert inside.text == expected  # mid-fence: its fence lines stand in, "…" for what is between
    assert (inside.start_line, inside.end_line) == (24, 25)
