"""The no-answer decision of one index: which ranked passage it reads (``read_passage``), what
that passage must reach, and whether it does. ``ask`` (``retrieve.index``), ``eval``, MCP and the
bench all decide through ``read_passage`` and ``decide``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.gate.bank import NO_LANGUAGE
from semsearch.gate.threshold import (
    EVIDENCE_PASSAGES,
    RULES,
    Rule,
    answer_threshold,
    background_similarity,
    baseline,
    coverages,
    is_answer,
    language_centroids,
    nearest_languages,
)
from semsearch.ingest.chunk import Chunk
from semsearch.store.meta import IndexMeta

GATE_DEPTH = 3
"""How many of the first ranked passages the gate reads, whatever ``-k`` is (so ``-k`` changes
how many passages are shown, never whether there is an answer)."""


class Scored(Protocol):
    """A ranked passage as the gate reads it (``retrieve.answer.Ranked``)."""

    @property
    def score(self) -> float:
        """Its cosine similarity to the question."""
        ...

    @property
    def exact(self) -> bool:
        """It holds what the question names verbatim (an answer whatever its cosine)."""
        ...


P = TypeVar("P", bound=Scored)


def read_passage(ranked: Sequence[P]) -> P | None:
    """The passage the gate reads: among the first ``GATE_DEPTH`` of ``ranked`` (best first), the
    first that holds what the question names verbatim, else the one with the highest cosine (the
    first of equal ones); None when nothing is ranked.

    The gate's cut is calibrated on cosines, and hybrid mode orders passages by cosine fused with
    BM25, so the first-ranked passage's cosine is not always the best one near the top: reading it
    refused questions whose right passage BM25 moved first at a slightly lower cosine."""
    top = ranked[:GATE_DEPTH]
    if not top:
        return None
    return next((passage for passage in top if passage.exact), max(top, key=lambda p: p.score))


@dataclass(frozen=True)
class Verdict:
    """The gate's decision on one question."""

    threshold: float
    """The cosine the passage the gate read (``read_passage``) had to reach."""
    answered: bool


def decide(
    read_score: float | None,
    read_exact: bool,
    own_baseline: float,
    margin: float,
    legacy: bool,
    names_unheld: bool = False,
) -> Verdict:
    """The one decision rule: the passage the gate reads (``read_passage``: its cosine
    ``read_score``, None when nothing was ranked) answers when it reaches the margin plus the
    question's baseline (see ``threshold``), or holds what the question names verbatim
    (``read_exact``); never when everything the question names verbatim is in no indexed file
    (``names_unheld``)."""
    threshold = answer_threshold(margin, own_baseline, legacy)
    answered = read_score is not None and is_answer(read_score, read_exact, threshold)
    return Verdict(threshold, answered and not names_unheld)


@dataclass
class Gate:
    """The gate's inputs as one index's build recorded them, and the per-question baseline."""

    meta: IndexMeta
    offtopic: np.ndarray
    """Query vectors of the whole off-topic bank."""
    background: np.ndarray
    """The bank questions kept as the background of the no-answer rule."""
    chunks: Sequence[Chunk]
    keywords: KeywordIndex | None
    _languages: tuple[list[str], np.ndarray] | None = field(default=None, repr=False)
    """The bank languages' centroids (``language_offset``), computed on first use."""
    _in_language: np.ndarray | None = field(default=None, repr=False)
    """The background without the inputs in no language (``background_for``), on first use."""

    @property
    def rule(self) -> Rule | None:
        """The relevance rule the index's cut was derived for (None: a cosine floor, built before
        the relevance rule; see ``threshold``)."""
        return RULES.get(self.meta.margin.gate)

    @property
    def legacy(self) -> bool:
        return self.rule is None

    @property
    def margin(self) -> float:
        """The margin in force (the index's gate value; ``threshold`` calls it the cut): the
        calibrated one (``eval --calibrate``) if made for this index's rule, else the build's."""
        calibrated = self.meta.calibrated
        if calibrated is not None and calibrated.gate == self.meta.margin.gate:
            return float(calibrated.value)
        return float(self.meta.margin.value)

    def baseline(
        self,
        question: str,
        query_vector: np.ndarray,
        cosine: np.ndarray,
        allowed: np.ndarray | None = None,
        tokens: Sequence[str] | None = None,
        rows: np.ndarray | None = None,
    ) -> float:
        """What the question's best cosine must exceed beyond the cut (see ``threshold``); its
        word evidence is read only in the rows ``allowed`` (the files searched), from its keyword
        ``tokens`` when given (the question parsed once), else from its text. ``cosine`` and
        ``allowed`` describe ``rows`` (None: every row, in order)."""
        asked = question if tokens is None else tokens
        similarity = background_similarity(query_vector, self.background_for(asked), self.legacy)
        rule = self.rule
        if rule is None:
            return similarity
        coverage = 0.0
        if rule.evidence_weight and len(self.chunks) and (allowed is None or allowed.any()):
            searched = cosine if allowed is None else np.where(allowed, cosine, -np.inf)
            count = min(EVIDENCE_PASSAGES, int(np.isfinite(searched).sum()))
            best = np.argpartition(-searched, count - 1)[:count]
            best = best if rows is None else rows[best]
            coverage = coverages(self.keywords, [asked], best[None, :], self.chunks)[0]
        offset = self.language_offset(query_vector) if rule.language_weight else 0.0
        return float(baseline(rule, similarity, coverage, offset))

    def decide(
        self, read_score: float | None, read_exact: bool, own_baseline: float, names_unheld: bool = False
    ) -> Verdict:
        return decide(read_score, read_exact, own_baseline, self.margin, self.legacy, names_unheld)

    @property
    def bank_languages(self) -> list[str] | None:
        """The language of each bank row, as its build recorded them (None before gate 4)."""
        languages = list(self.meta.offtopic.languages)
        return languages if len(languages) == len(self.offtopic) else None

    def background_for(self, question: str | Sequence[str]) -> np.ndarray:
        """The bank questions ``question`` (its text or its keyword tokens) is compared with: the
        bank's inputs in no language (``asdf``, ``test``) only when none of its words occurs in
        the documents, so that a one-word search for a term the documents use is not taken for
        keyboard mash."""
        languages = self.bank_languages
        if languages is None or self.keywords is None or not self.keywords.holds_any_word_of(question):
            return self.background
        if self._in_language is None:
            rows = [r for r in self.meta.offtopic.background_rows if languages[r] != NO_LANGUAGE]
            self._in_language = np.asarray(self.offtopic[rows])
        return self._in_language

    def language_offset(self, query_vector: np.ndarray) -> float:
        """The offset of the question's language on this corpus (0 when its build measured none;
        see ``calibration.language_offsets``)."""
        offsets = self.meta.margin.language_offsets
        language = self.question_language(query_vector) if offsets else None
        return float(offsets.get(language, 0.0)) if language else 0.0

    def question_language(self, query_vector: np.ndarray) -> str | None:
        """The bank language whose questions lie nearest the question (None for an index built
        before the bank recorded its languages)."""
        languages = self.bank_languages
        if languages is None:
            return None
        if self._languages is None:
            self._languages = language_centroids(self.offtopic, languages)
        names, centroids = self._languages
        return nearest_languages(np.reshape(query_vector, (1, -1)), names, centroids)[0] or None
