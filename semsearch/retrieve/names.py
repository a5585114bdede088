"""The names a question asks about, and whether the indexed folder mentions them.

- Names as code or a catalogue writes them (``PAY-999``, ``events.once``, ``ActionMailer``,
  ``§ 99``; see ``is_salient``), held when a chunk holds them verbatim (``named.named_rows``):
  when the folder holds none of what a question names, whatever ranks first speaks of something
  else, and the gate refuses it (``gate.decision.decide``'s ``names_unheld``).
- Names written as words (``proper_names``): an acronym (``DHL``) or capitalised words inside a
  sentence (``Żabka``, ``Revolut Pay``, ``Google Calendar``), mentioned when some word of the
  folder is the name inflected (``resembles``: ``Żabce`` by ``Żabka``, ``iPadzie`` by ``iPad``),
  when a passage ranked for the question shares its root (``Brytanii``, ``brytyjski``) or, for an
  acronym, spells it out (``Red Hot Chili Peppers`` for ``RHCP``). One the folder never mentions
  is said under the results ("Not found in the searched documents"), never a refusal by itself:
  a folder's general words cover many names it never writes ("all member states of the EU" for
  ``Niemiec``, "holidays" for ``Wigilię``, ``RODO`` for ``GDPR``; ``bench/bench_named.py``).
  They count only in a question in the documents' own language (a name may be translated), and
  in German only the acronyms (every German noun is capitalised).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.encode.keywords import KeywordIndex, fold
from semsearch.encode.vocabulary import has_prefix
from semsearch.retrieve.lexing import has_unspaced, unspaced_runs

_WORD = re.compile(r"[^\W\d_]{2,}")
_ROMAN = re.compile(r"[IVXLCDM]+")
_POSSESSIVE = re.compile(r"['’]s$")
"""An English possessive (``Tidewater's``): the name is the word without it."""
_EDGES = "\"'„”“«»()[]{},;:!?.…*"
_SENTENCE_END = (".", "!", "?", ":", "…")
SLAVIC = frozenset({"bg", "cs", "hr", "pl", "ru", "sk", "sl", "sr", "uk"})
"""Languages (ISO 639-1) whose inflection changes a word's last consonants (see ``resembles``)."""
NAMES_READ = 12
"""How many of a question's names are looked up at most (each costs a few vocabulary reads; a
pasted page of capitalised words would cost thousands)."""
NOUNS_CAPITALISED = frozenset({"de"})
"""Languages (ISO 639-1) that capitalise every noun: there a capital is no sign of a name."""


@dataclass(frozen=True)
class ProperName:
    """A name a question writes as words: one acronym or a run of capitalised words."""

    text: str
    acronym: bool


POLITE = frozenset(
    {
        "ty",
        "ci",
        "cię",
        "cie",
        "ciebie",
        "tobie",
        "tobą",
        "twój",
        "twoja",
        "twoje",
        "twojego",
        "twojej",
        "twoim",
        "twoją",
        "twoi",
        "twoich",
        "twoimi",
        "wy",
        "was",
        "wam",
        "wami",
        "wasz",
        "wasza",
        "wasze",
        "waszego",
        "waszej",
        "waszemu",
        "waszym",
        "waszą",
        "wasi",
        "waszych",
        "waszymi",
        "pan",
        "pana",
        "panu",
        "panem",
        "pani",
        "panią",
        "państwo",
        "państwa",
        "państwu",
        "państwem",
    }
)
"""Polish pronouns and forms of address written with a capital out of courtesy (``z Wami``,
``u Was``, ``Pani``): no names."""


def proper_names(question: str) -> tuple[ProperName, ...]:
    """The names ``question`` writes as words: each acronym of three to six capitals (not a Roman
    numeral; none in a question written all in capitals; two capitals are too often an
    abbreviation the documents write out, ``RP`` for ``Rzeczpospolita``) and each run of
    capitalised words that does not open a sentence (not the English ``I``; in Chinese, Japanese
    or Korean text anywhere); punctuation ends a run."""
    # Chinese, Japanese and Korean text has no capitals of its own; it ends a run (as a comma
    # does), and a capitalised Latin word in it is a name wherever it stands
    # (``KotlinでAndroidアプリ``: ``Kotlin``, ``Android``)
    unspaced = has_unspaced(question)
    words = (unspaced_runs().sub(" , ", question) if unspaced else question).split()
    shouted = not any(c.islower() for c in question)
    if not unspaced and _title_case(words):
        return ()
    found: list[ProperName] = []
    run: list[str] = []
    opening = True
    for word in words:
        core = _POSSESSIVE.sub("", word.strip(_EDGES))
        if not shouted and _is_acronym(core):
            _close(run, found)
            found.append(ProperName(core, acronym=True))
        elif (unspaced or not opening) and _is_capitalised(core) and core.casefold() not in POLITE:
            run.append(core)
        else:
            _close(run, found)
        if word[-1] in _EDGES:
            _close(run, found)
        opening = word.endswith((*_SENTENCE_END, ")", "]")) or (opening and not _WORD.search(word))
    _close(run, found)
    return tuple(found)


def _title_case(words: Sequence[str]) -> bool:
    """Whether a question capitalises most of its words after the first (``Ile Czekam Na Zwrot
    Kasy?``; of three letters or more): then a capital tells no name."""
    long = [core for word in words[1:] if len(core := word.strip(_EDGES)) > 2]
    capitalised = sum(1 for word in long if _is_capitalised(word))
    return len(long) >= 2 and capitalised > len(long) / 2


def _is_acronym(word: str) -> bool:
    letters = bool(_WORD.fullmatch(word))
    return 3 <= len(word) <= 6 and letters and word.isupper() and not _ROMAN.fullmatch(word)


def _is_capitalised(word: str) -> bool:
    return bool(_WORD.fullmatch(word)) and word[0].isupper() and word[1:].islower() and word != "I"


def _close(run: list[str], found: list[ProperName]) -> None:
    """Add the run of capitalised words as one name and empty it."""
    if run:
        found.append(ProperName(" ".join(run), acronym=False))
        run.clear()


def counted(
    names: Iterable[ProperName], language: str | None, documents_language: str | None
) -> list[ProperName]:
    """Those of ``names`` that are evidence in a question in ``language`` (see the module
    docstring): none unless it is the documents' language, only acronyms in German."""
    if language is None or language != documents_language:
        return []
    return [name for name in names if name.acronym or language not in NOUNS_CAPITALISED][:NAMES_READ]


def resembles(keywords: KeywordIndex, word: str) -> bool:
    """Whether a word of the folder is ``word`` inflected (case-folded, without diacritics): its
    stem begins as ``word`` does and is at most one letter longer (a longer one is another word:
    ``Istio`` is not ``istnieje``), or it is ``word``'s stem. How much of the end inflection may
    change depends on the language: Slavic languages alternate a stem's last consonant too
    (``Żabka``, ``w Żabce``; ``Kraków``, ``w Krakowie``), so all but the last three letters must
    match (at least three); elsewhere all but the last two (at least four: ``Trello`` is not
    ``tree``)."""
    folded = fold(word.casefold())
    slavic = keywords.language in SLAVIC
    length = max(3, len(folded) - 3) if slavic else max(4, len(folded) - 2)
    if has_prefix(keywords.vocab, folded[: min(len(folded), length)], longest=len(folded) + 1):
        return True
    return keywords.holds_any_word_of(word)


def spelled_out(acronym: str, texts: Iterable[str]) -> bool:
    """Whether one of ``texts`` writes ``acronym`` out as capitalised words (``Organizacja
    Narodów Zjednoczonych`` for ``ONZ``)."""
    words = r"\W+".join(rf"{re.escape(letter)}\w*" for letter in acronym)
    pattern = re.compile(rf"(?<!\w){words}")
    return any(pattern.search(text) for text in texts)


def unmentioned(
    keywords: KeywordIndex, names: Sequence[ProperName], passages: Sequence[str]
) -> tuple[str, ...]:
    """Those of ``names`` the folder never mentions (``passages``: the texts ranked for the
    question, which may spell an acronym out or name a place by its adjective). A name of several
    words is mentioned when each of its words of three letters or more is (``Revolut Pay``: not
    by ``Pay`` alone; ``Microsoft To Do``: by ``Microsoft``)."""
    passage_words = {fold(word) for text in passages for word in _WORD.findall(text.casefold())}
    slavic = keywords.language in SLAVIC
    found = []
    for name in names:
        words = [word for word in name.text.split() if len(word) > 2] or name.text.split()
        if all(resembles(keywords, word) or _root_in(word, passage_words, slavic) for word in words):
            continue
        if name.acronym and spelled_out(name.text, passages):
            continue
        found.append(name.text)
    return tuple(dict.fromkeys(found))


def _root_in(word: str, words: set[str], slavic: bool) -> bool:
    """Whether one of ``words`` (a ranked passage's, folded) shares ``word``'s root: a letter
    less than ``resembles`` asks of the folder's words (all but the last four letters in a
    Slavic language, three elsewhere; at least four), whatever its length: a passage naming a
    country by its adjective speaks of it (``Brytanii``, ``brytyjski``; ``Britain``, ``British``)."""
    folded = fold(word.casefold())
    root = folded[: max(4, len(folded) - (4 if slavic else 3))]
    return any(candidate.startswith(root) for candidate in words)


def camel_parts(name: str) -> list[str]:
    """The words a name glued in CamelCase is made of (``ApplePay`` → ``Apple``, ``Pay``), when
    it is nothing else (no dot, digit or separator; every part two letters or more): a folder
    may write them apart (``Apple Pay``, ``App Store``)."""
    if not name.isalpha():
        return []
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)
    return parts if len(parts) > 1 and all(len(part) > 1 for part in parts) else []


def all_unheld(named: list[tuple[str, np.ndarray]]) -> tuple[str, ...]:
    """The salient names the question asks about when the indexed folder holds nothing it names
    (else none): evidence that the folder is not about what is asked (another framework's
    ``ActionMailer``). Only names no sentence writes count (see ``is_salient``): a year range,
    a Chinese phrase with a date, an inflected brand name (``iPadzie``) are no such evidence."""
    if any(len(rows) for _, rows in named):
        return ()
    return tuple(dict.fromkeys(name for name, _ in named if is_salient(name)))


_SALIENT_MARKS = re.compile(r"[._()]|[A-Z][a-z0-9]+[A-Z]")


def is_salient(name: str) -> bool:
    """An ASCII name as code or a catalogue writes it: capitals or short letter runs with digits
    (``PAY-517``, ``v2``; not ``130-metrowy``), a dot, underscore or call (``events.once``,
    ``max_size``), two capitalised parts (``ActionMailer``), or a legal reference (``§ 99``)."""
    if name.startswith(("§", "art.")):
        return True
    if not name.isascii():
        return False
    words = re.findall(r"[A-Za-z]+", name)
    code = any(c.isdigit() for c in name) and words and all(w.isupper() or len(w) <= 2 for w in words)
    return bool(code) or bool(_SALIENT_MARKS.search(name))
