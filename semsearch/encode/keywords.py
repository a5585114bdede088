"""The keyword side of hybrid search: BM25 over the same chunks as the vectors.

Embeddings find meaning but blur exact strings (an invoice number, an error code, "§ 7"); BM25
finds those. The tokenizer is made for inflected languages and identifiers:

- text is case-folded and Latin diacritics removed before stemming (``zapłacić`` and
  ``zaplacic`` give one token: people type without them);
- a code stays whole and also gives its parts; a code with letters loses its separators
  (``PAY-517`` → ``pay517``, ``pay``, ``517``), so ``PAY517`` finds it too, while numbers keep
  theirs (``4.2`` is not ``42``);
- a number or a single letter is also joined to the token before it (``§ 7`` → ``§_7``,
  ``art. 6 ust. 1 lit. f`` → ``art_6``, ``ust_1``, ``lit_f``), so that "§ 7" does not match every 7;
- words are stemmed with the Snowball stemmer of the corpus's language (PyStemmer: Polish,
  English, German, Russian... ``zapłaciłem`` and ``zapłacić`` share ``zaplac``).

BM25 weights come from ``bm25s`` at build time, stored as a token-by-chunk CSC matrix with a
sorted vocabulary; ``ask`` memory-maps them and finds the question's tokens by binary search,
without bm25s or scipy and without reading the whole vocabulary (millions of tokens at scale).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from semsearch.encode.vocabulary import SortedVocabulary, Vocabulary, vocabulary_files
from semsearch.errors import IndexCorruptError
from semsearch.util.regular import load_array
from semsearch.util.sorted_lookup import find_sorted

TOKENIZER_VERSION = 4  # 3: heading names (see ``heading_name``); 4: Latin diacritics folded


def keyword_files(prefix: str = "keywords") -> tuple[str, ...]:
    """The files of a keyword index whose names start with ``prefix`` (a page index's: ``pages``)."""
    return (f"{prefix}.data.npy", f"{prefix}.indices.npy", f"{prefix}.indptr.npy", *vocabulary_files(prefix))


FILES = keyword_files()

# ISO 639-1 codes of the off-topic bank's languages (the corpus's comes from there) and more, to Snowball's.
SNOWBALL = {
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "tr": "turkish",
}

_TOKEN = re.compile(r"§|\w+(?:[-/.+]+\w+)*")
_JOINER = re.compile(r"[-/.+]")
_LABEL = re.compile(r"\w+:\s+")  # "Class: EventEmitter", "Event: 'close'"
_SIGNATURE = re.compile(r"[(\[].*", re.DOTALL)
NAME_MARK = "#"
"""Marks the token of a chunk's heading name (see ``heading_name``); ``tokenize`` never makes it."""


@cache
def _stemmer(language: str | None) -> Callable[[str], str] | None:
    algorithm = SNOWBALL.get(language or "")
    if algorithm is None:
        return None
    import Stemmer

    return Stemmer.Stemmer(algorithm).stemWord


LANGUAGE_SAMPLE = 200


def detect_language(texts: Sequence[str]) -> str | None:
    """The corpus's language (ISO 639-1 code, which picks the stemmer): the most frequent one
    py3langid finds over an even sample of ``LANGUAGE_SAMPLE`` texts; None without text."""
    sample = [text for text in texts[:: max(1, len(texts) // LANGUAGE_SAMPLE)] if text.strip()]
    if not sample:
        return None
    import py3langid

    votes = Counter(py3langid.classify(text)[0] for text in sample)
    return votes.most_common(1)[0][0]


def stemmer_name(language: str | None) -> str | None:
    return SNOWBALL.get(language or "")


_UNDECOMPOSED = str.maketrans({"ł": "l", "đ": "d", "ø": "o", "ħ": "h", "ı": "i", "ŀ": "l"})


@cache
def _fold_character(character: str) -> str:
    """A Latin letter with diacritics as its base letter (``ą`` → ``a``, ``ł`` → ``l``); any
    other character (Cyrillic ``й``, Chinese) as it is."""
    base = unicodedata.normalize("NFKD", character.translate(_UNDECOMPOSED))
    letters = "".join(c for c in base if not unicodedata.combining(c))
    return letters if letters.isascii() and letters.isalpha() else character


def fold(text: str) -> str:
    """``text`` with Latin diacritics removed (``zapłacić`` → ``zaplacic``): people type
    without them, and the documents and the questions must give the same tokens."""
    return text if text.isascii() else "".join(_fold_character(c) for c in text)


def tokenize(text: str, language: str | None = None) -> list[str]:
    """BM25 tokens of ``text`` (see the module docstring)."""
    stem = _stemmer(language)
    tokens: list[str] = []
    previous: str | None = None
    for match in _TOKEN.finditer(fold(text.casefold())):
        word = match.group()
        parts = _JOINER.split(word)
        if len(parts) > 1:  # a code: whole, and without separators if it has letters
            tokens.append("".join(parts) if any(c.isalpha() for c in word) else word)
        for part in parts:
            if not part:
                continue
            short = part.isdigit() or len(part) == 1
            token = part if short or stem is None or not part.isalpha() else stem(part)
            tokens.append(token)
            if short and previous is not None:
                tokens.append(f"{previous}_{part}")
            previous = token
    return tokens


def heading_name(heading: str) -> str | None:
    """The one name a heading consists of, as API references title their sections:
    ``emitter.once`` for "emitter.once(eventName, listener)", ``prefer-offline``,
    ``EventEmitter`` for "Class: EventEmitter"; None for a heading in words ("package.json vars",
    "§ 7. Odstąpienie od umowy")."""
    core = _LABEL.sub("", heading.strip(), count=1)
    core = _SIGNATURE.sub("", core).strip().strip("'\"`")
    return core if core and not any(c.isspace() for c in core) else None


def name_token(name: str, language: str | None) -> str | None:
    """The keyword token marking chunks under a heading that is ``name`` (None if it has no word)."""
    tokens = tokenize(name, language)
    return f"{NAME_MARK}{tokens[0]}" if tokens else None  # a code's first token is the whole code


@dataclass(frozen=True)
class KeywordIndex:
    """BM25 weights as a CSC matrix: column ``t`` holds the chunks containing token ``t``."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    vocab: Vocabulary
    rows: int
    language: str | None

    def _column(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding ``token`` and their weights, checked (an index is read from disk:
        a damaged file must be an error, not a wrong row or a crash)."""
        column = self.vocab.get(token)
        if column is None:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        start, end = int(self.indptr[column]), int(self.indptr[column + 1])
        if not 0 <= start <= end <= len(self.data):
            raise IndexCorruptError(f"the keyword index is damaged (column {column} out of range)")
        rows = np.asarray(self.indices[start:end], dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= self.rows):
            raise IndexCorruptError(
                "the keyword index is damaged (it refers to chunks the index does not hold)"
            )
        return rows, np.asarray(self.data[start:end], dtype=np.float32)

    def _rows_of(self, token: str) -> np.ndarray:
        return self._column(token)[0]

    def document_frequency(self, token: str) -> int:
        """How many rows hold ``token`` (an index a server holds counts them there)."""
        return len(self._rows_of(token))

    def holds_any_word_of(self, text: str | Sequence[str]) -> bool:
        """Whether some chunk holds one of ``text``'s tokens (or of these tokens: a vocabulary
        look-up per token)."""
        tokens = tokenize(text, self.language) if isinstance(text, str) else text
        return any(self.vocab.get(token) is not None for token in tokens)

    def scores(self, question: str) -> np.ndarray:
        """BM25 score of every chunk for ``question`` (0 where no token matches)."""
        return self.token_scores(tokenize(question, self.language))

    def token_scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every chunk for a question made of ``tokens``."""
        scores = np.zeros(self.rows, dtype=np.float32)
        for token in tokens:
            rows, weights = self._column(token)
            scores[rows] += weights  # a column holds each row once
        return scores

    def sparse_token_scores(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``token_scores`` of the rows holding one of ``tokens`` alone (ascending rows, and
        their scores, summed in the same order: equal to the whole array's, bit for bit), in
        memory as the tokens' columns, not the index's rows."""
        columns = [self._column(token) for token in tokens]
        if not columns:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        rows = np.concatenate([np.asarray(r, dtype=np.int64) for r, _ in columns])
        weights = np.concatenate([np.asarray(w, dtype=np.float32) for _, w in columns])
        held, slot = np.unique(rows, return_inverse=True)
        scores = np.zeros(len(held), dtype=np.float32)
        np.add.at(scores, slot, weights)  # in order: each row's tokens added as token_scores adds them
        return held, scores

    def idf(self, tokens: Sequence[str]) -> list[float]:
        """Each token's inverse document frequency (BM25's, Lucene variant, which equals
        ``log((N + 1) / (df + 0.5))``): rarer weighs more, a token the corpus lacks most."""
        frequency = self.document_frequency  # a server's index counts its rows there
        return [math.log(1 + (self.rows - (df := frequency(t)) + 0.5) / (df + 0.5)) for t in tokens]

    def coverage(self, question: str | Sequence[str], passages: Sequence[str]) -> float:
        """Share of the question's distinct tokens, each weighted by its ``idf``, that the best of
        ``passages`` (chunk texts, without their heading path: a section title is not evidence
        for itself) contains: 1 when one passage holds every word, 0 when none holds any."""
        tokens = sorted(set(tokenize(question, self.language) if isinstance(question, str) else question))
        if not tokens or not passages:
            return 0.0
        weights = dict(zip(tokens, self.idf(tokens), strict=True))
        found = max(
            sum(w for t, w in weights.items() if t in held)
            for held in (set(tokenize(text, self.language)) for text in passages)
        )
        return float(found / sum(weights.values()))

    def rows_with(self, text: str) -> np.ndarray:
        """Rows holding ``text`` as one token (a code such as ``PAY-517``, case-insensitively
        and whether or not its separators are written: ``PAY517``)."""
        tokens = tokenize(text, self.language)
        if not tokens:
            return np.empty(0, dtype=np.int64)
        return self._rows_of(tokens[0])  # a code's first token is the whole code

    def rows_named(self, name: str) -> np.ndarray:
        """Rows under a heading that is ``name`` (see ``heading_name``): ``events.once`` finds
        the chunks of the section "events.once(emitter, name[, options])" and of its
        subsections, whatever their text."""
        token = name_token(name, self.language)
        return np.empty(0, dtype=np.int64) if token is None else self._rows_of(token)

    def rows_with_words(self, words: Sequence[str]) -> np.ndarray:
        """Rows holding every one of ``words`` (each its token, stemmed: ``App``, ``Store``)."""
        return self._rows_with_every(
            [tokens[0] if (tokens := tokenize(w, self.language)) else None for w in words]
        )

    def rows_with_all(self, parts: Sequence[str]) -> np.ndarray:
        """Rows holding every one of ``parts``, each as the joined token its words make
        (``art. 6`` → ``art_6``, ``§ 7`` → ``§_7``)."""
        joined = [[t for t in tokenize(part, self.language) if "_" in t] for part in parts]
        return self._rows_with_every([tokens[-1] if tokens else None for tokens in joined])

    def rows_with_tokens(self, tokens: Sequence[str]) -> np.ndarray:
        """Rows holding every one of ``tokens`` (as ``tokenize`` makes them; none for no token)."""
        return self._rows_with_every(tokens)

    def _rows_with_every(self, tokens: Sequence[str | None]) -> np.ndarray:
        """Rows holding every one of ``tokens`` (none when there are none or one is None)."""
        if not tokens or None in tokens:
            return np.empty(0, dtype=np.int64)
        columns = sorted((_sorted(self._rows_of(token)) for token in tokens), key=len)
        rows = columns[0]
        for other in columns[1:]:  # the shortest first: each step looks up only what is left
            rows = rows[find_sorted(other, rows)[1]]
        return rows

    def save(self, folder: Path, prefix: str = "keywords") -> None:
        files = keyword_files(prefix)
        np.save(folder / files[0], self.data)
        np.save(folder / files[1], self.indices)
        np.save(folder / files[2], self.indptr)
        vocab = self.vocab if isinstance(self.vocab, dict) else None
        if vocab is None:
            raise ValueError("only a freshly built keyword index is saved")
        SortedVocabulary.write(folder, sorted(vocab, key=vocab.get), prefix)

    @classmethod
    def load(cls, folder: Path, rows: int, language: str | None, prefix: str = "keywords") -> KeywordIndex:
        """Raises OSError or ValueError when the files are missing or inconsistent."""
        files = keyword_files(prefix)
        data, indices, indptr = (load_array(folder / name) for name in files[:3])
        vocab = SortedVocabulary.open(folder, prefix)
        if len(indptr) != len(vocab) + 1 or len(data) != len(indices) or int(indptr[-1]) != len(data):
            raise ValueError("keyword index files do not match each other")
        if data.dtype.kind != "f" or not np.isfinite(data).all():  # one pass: a NaN scores nothing
            raise ValueError(f"{files[0]} holds weights that are not finite numbers")
        return cls(data, indices, indptr, vocab, rows, language)


def _sorted(rows: np.ndarray) -> np.ndarray:
    """A column's rows (each once) in order: sorted only when they are not."""
    return np.sort(rows) if len(rows) > 1 and bool((rows[1:] < rows[:-1]).any()) else rows


K1, B = 1.5, 0.75
"""BM25's constants (bm25s's defaults): of the passages' index and the pages' (``encode.pages``)."""


def build_keyword_index(
    texts: Sequence[str], language: str | None, headings: Sequence[Sequence[str]] = ()
) -> KeywordIndex:
    """BM25 (Lucene variant, ``K1`` and ``B``) over ``texts``; ``headings``
    (each text's heading path) add a column for each name a heading consists of (see
    ``heading_name``), outside BM25: questions never score it, ``rows_named`` finds it.

    Each text becomes token ids at once (a token string is kept once, in the vocabulary, not
    once per occurrence: a 21 MB file made 5 million token strings); the matrix's columns are
    then put in sorted-token order, which the vocabulary file's binary search needs.
    """
    import bm25s
    from bm25s.tokenization import Tokenized

    first_seen: dict[str, int] = {}
    ids = [[first_seen.setdefault(t, len(first_seen)) for t in tokenize(text, language)] for text in texts]
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(Tokenized(ids=ids, vocab=first_seen), create_empty_token=False, show_progress=False)
    del ids
    weights = retriever.scores
    if len(weights["indptr"]) != len(first_seen) + 1:
        raise AssertionError("bm25s returned a matrix that does not match the vocabulary")
    marks: dict[str, list[int]] = {}
    for row, path in enumerate(headings):
        for token in _heading_tokens(path, language):
            marks.setdefault(token, []).append(row)
    tokens = list(first_seen) + list(marks)  # in column order
    order = np.array(sorted(range(len(tokens)), key=tokens.__getitem__), dtype=np.int64)
    data, indices, indptr = columns_in_order(*_with_marks(weights, list(marks.values())), order)
    return KeywordIndex(
        data=data,
        indices=indices,
        indptr=indptr,
        vocab={tokens[old]: new for new, old in enumerate(order.tolist())},
        rows=len(texts),
        language=language,
    )


def _with_marks(weights: dict, marks: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """bm25s's CSC arrays with one more column (weight 1) per list of rows in ``marks``."""
    lengths = np.array([len(rows) for rows in marks], dtype=np.int64)
    indptr = np.asarray(weights["indptr"], dtype=np.int64)
    return (
        np.concatenate([np.asarray(weights["data"], dtype=np.float32), np.ones(lengths.sum(), np.float32)]),
        np.concatenate(
            [np.asarray(weights["indices"], dtype=np.int32), *(np.array(r, np.int32) for r in marks)]
        ),
        np.concatenate([indptr, indptr[-1] + np.cumsum(lengths)]),
    )


def _heading_tokens(path: Sequence[str], language: str | None) -> list[str]:
    names = (heading_name(heading) for heading in path)
    return list(dict.fromkeys(t for name in names if name and (t := name_token(name, language))))


def columns_in_order(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSC matrix with column ``j`` taken from column ``order[j]``."""
    starts, lengths = indptr[order], np.diff(indptr)[order]
    new_indptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_indptr[1:])
    gather = np.repeat(starts - new_indptr[:-1], lengths) + np.arange(int(new_indptr[-1]), dtype=np.int64)
    return data[gather], indices[gather], new_indptr


def settings(language: str | None) -> dict:
    """What meta.json records about the keyword index."""
    return {
        "library": "bm25s",
        "method": "lucene",
        "k1": K1,
        "b": B,
        "language": language,
        "stemmer": stemmer_name(language),
        "tokenizer_version": TOKENIZER_VERSION,
    }
