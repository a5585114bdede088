"""Names a question writes as words, and whether a folder mentions them (``retrieve.names``)."""

from __future__ import annotations

import random

import pytest

from semsearch.encode.keywords import KeywordIndex, build_keyword_index, fold
from semsearch.encode.vocabulary import has_prefix
from semsearch.retrieve.named import code_name_rows
from semsearch.retrieve.names import (
    NAMES_READ,
    ProperName,
    camel_parts,
    counted,
    proper_names,
    resembles,
    spelled_out,
    unmentioned,
)


def _texts(question: str) -> list[tuple[str, bool]]:
    return [(name.text, name.acronym) for name in proper_names(question)]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Czy wysyłacie paczki przez DHL?", [("DHL", True)]),
        ("Czy mogę odebrać zamówienie w Żabce?", [("Żabce", False)]),
        ("Czy działa Revolut Pay, czy tylko BLIK?", [("Revolut Pay", False), ("BLIK", True)]),
        ("Kto uznał rozbiory RP?", []),  # two capitals: too often written out (Rzeczpospolita)
        ("How do I sync with Google Calendar?", [("Google Calendar", False)]),
        ("Kiedy zmarł Jan III Sobieski?", [("Jan", False), ("Sobieski", False)]),  # III: a numeral
        ("Istio działa. Czy Kube też?", [("Kube", False)]),  # each sentence's first word opens it
        ("Can I do it? I think so", []),  # the English I is no name
        ("CZY DZIAŁA BLIK?", []),  # a question in capitals names nothing by its capitals
        ("Jak zmienić hasło?", []),
        ("Co to jest „Nie pamiętam hasła”?", [("Nie", False)]),  # a quotation's capital: held by any folder
        ("Does Tidewater's app run on Chromebook?", [("Tidewater", False), ("Chromebook", False)]),
        ("Jak mogę się z Wami skontaktować? Czy Pani odpisze?", []),  # capitals of courtesy
        ("Ile Czekam Na Zwrot Kasy?", []),  # Title Case: a capital tells nothing
        ("How Do I Reset My Password?", []),
        ("(Pilne) Witajcie, ile czekam?", []),  # a bracketed tag opens the sentence
        ("Can I sync with Google Calendar?", [("Google Calendar", False)]),
        # Chinese, Japanese, Korean: no spaces, no capitals of their own (an outside probe saw the
        # whole question taken for one name)
        ("KotlinでAndroidアプリを作るには？", [("Kotlin", False), ("Android", False)]),
        ("如何在Windows上安装Python？", [("Windows", False), ("Python", False)]),
        ("Tokio の使い方", [("Tokio", False)]),
        ("所有权是什么？", []),
    ],
)
def test_proper_names_are_acronyms_and_capitalised_words_inside_a_sentence(question, names):
    assert _texts(question) == names


def test_names_count_only_in_the_documents_language_and_in_german_only_acronyms():
    names = (ProperName("DHL", True), ProperName("Berlin", False))
    assert counted(names, "pl", "pl") == list(names)
    assert counted(names, "en", "pl") == []  # a name may be translated: Germany for Niemcy
    assert counted(names, "pl", None) == []
    assert counted(names, "de", "de") == [ProperName("DHL", True)]  # every German noun is capitalised
    many = [ProperName(f"N{i}X", True) for i in range(40)]
    assert len(counted(many, "pl", "pl")) == NAMES_READ  # a pasted page costs no more than a question


def _keywords(texts: list[str]) -> KeywordIndex:
    return build_keyword_index(texts, "pl")


def test_a_name_is_held_by_a_word_that_begins_as_it_does():
    keywords = _keywords(["Odbiór w punkcie Żabka.", "Aplikacja działa na iPad i iPhone.", "Co istnieje?"])
    assert resembles(keywords, "Żabce")  # inflected: Żabka
    assert resembles(keywords, "zabka")  # typed without diacritics
    assert resembles(keywords, "iPadzie")
    assert not resembles(keywords, "DHL")
    assert not resembles(keywords, "Revolut")
    assert not resembles(keywords, "Istio")  # "istnieje" begins as it does, but is no inflection of it
    english = build_keyword_index(["Put the tree in the notes."], "en")
    assert not resembles(english, "Trello") and resembles(english, "Notes") and resembles(english, "Trees")


def test_an_acronym_is_held_when_a_ranked_passage_spells_it_out():
    assert spelled_out("RHCP", ["Zespół Red Hot Chili Peppers wydał album."])
    assert spelled_out("ONZ", ["członek Organizacji Narodów Zjednoczonych"])
    assert not spelled_out("ONZ", ["organizacji narodów zjednoczonych"])  # written out in capitals only
    assert not spelled_out("AI", ["an idea"])


def test_the_names_the_folder_never_mentions_each_on_its_own():
    keywords = _keywords(["Płatność kartą, Google Pay lub BLIK.", "Dostawa kurierem InPost."])
    assert unmentioned(keywords, [ProperName("DHL", True)], []) == ("DHL",)
    assert unmentioned(keywords, [ProperName("DHL", True), ProperName("BLIK", True)], []) == ("DHL",)
    assert unmentioned(keywords, [ProperName("Revolut Pay", False)], []) == ("Revolut Pay",)  # not by Pay
    assert unmentioned(keywords, [ProperName("PAP", True)], ["Polska Agencja Prasowa"]) == ()
    britain = [ProperName("Wielkiej Brytanii", False)]
    assert unmentioned(keywords, britain, ["Tytuł nadaje monarcha Wielki, brytyjski."]) == ()
    assert unmentioned(keywords, britain, ["Dostawa kurierem."]) == ("Wielkiej Brytanii",)


def test_a_name_glued_in_camel_case_is_held_by_its_words_written_apart():
    assert camel_parts("ApplePay") == ["Apple", "Pay"] and camel_parts("AppStore") == ["App", "Store"]
    assert camel_parts("iPadzie") == [] and camel_parts("events.once") == [] and camel_parts("v2Api") == []
    keywords = _keywords(["Płacisz przez Apple Pay.", "Aplikacja jest w App Store.", "Zapłać kartą."])
    assert code_name_rows(keywords, "ApplePay").tolist() == [0]
    assert code_name_rows(keywords, "AppStore").tolist() == [1]
    assert code_name_rows(keywords, "ActionMailer").tolist() == []


@pytest.mark.parametrize("seed", range(5))
def test_prefix_look_up_equals_a_scan_of_the_stored_vocabulary(seed, tmp_path):
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcżźł") for _ in range(rng.randint(1, 6))) for _ in range(60)]
    built = build_keyword_index([" ".join(words[i : i + 5]) for i in range(0, 60, 5)], None)
    built.save(tmp_path)
    stored = KeywordIndex.load(tmp_path, built.rows, None)
    tokens = list(built.vocab)
    for _ in range(200):
        prefix = fold("".join(rng.choice("abcżźł") for _ in range(rng.randint(1, 4))))
        longest = rng.choice([None, 2, 4])
        expected = any(t.startswith(prefix) and (longest is None or len(t) <= longest) for t in tokens)
        assert has_prefix(stored.vocab, prefix, longest) == expected, (prefix, longest)
        assert has_prefix(built.vocab, prefix, longest) == expected, (prefix, longest)
