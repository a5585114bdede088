"""What a search returns: the passages that passed the gate for one question, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from semsearch.gate.threshold import BASELINE_IN_WORDS, is_answer
from semsearch.retrieve.search import Hit

if TYPE_CHECKING:
    import numpy as np

    from semsearch.gate.decision import Verdict
    from semsearch.retrieve.question import ParsedQuestion


@dataclass(frozen=True)
class Answer:
    """What a search found for one question, and why it is (or is not) an answer."""

    question: str
    """The question as searched (cut to the model's input limit when it was longer)."""
    hits: list[Hit]
    """Passages that pass the gate, best first (empty: the folder holds no answer)."""
    threshold: float
    """The cosine a passage had to reach for this question."""
    baseline: float | None
    """What the question's best cosine had to exceed beyond the index's cut: its closeness to
    the off-topic bank less its word evidence (see ``threshold``); None: a cutoff was given."""
    mode: str
    question_cut: bool = False
    fused: bool = False
    """Hybrid mode ranked by cosine fused with BM25 (every question; see ``searcher.Ranking``)."""
    missing: tuple[str, ...] = ()
    """Codes and references the question names verbatim that no searched passage holds
    (``PAY-999``, ``§ 99``), and names it writes as words that the folder never mentions
    (``DHL``: ``named.names_unmentioned``): whatever passed the gate does not speak of them."""
    missing_elsewhere: dict[str, list[str]] = field(default_factory=dict)
    """Those of ``missing`` that files outside ``--path``/``--where`` hold, with the files."""
    best_score: float | None = None
    """The cosine of the passage the gate read (``gate.decision.read_passage``: among the first
    three ranked, the first holding what the question names verbatim, else the best cosine),
    passed or not (None: none was ranked): how close a refused question came."""
    unheld: tuple[str, ...] = ()
    """Everything the question names verbatim, when no indexed file holds any of it: the gate
    refused the question for that (see ``gate.decision.decide``)."""
    unmentioned: tuple[str, ...] = ()
    """The names the question writes as words that the folder never mentions (``DHL``): said
    under the results or in the refusal, never a refusal by themselves; in ``missing`` too."""
    closest: Hit | None = None
    """When nothing passed: the passage the gate read (``best_score``'s), below the threshold
    (None when answered or when nothing was ranked), so that a reader can judge how near the
    documents came."""
    parsed: ParsedQuestion | None = None
    """The question as its search parsed it (``question.ParsedQuestion``): snippets read its
    keywords from here (``asked``)."""
    not_refreshed: str | None = None
    """Why the index was searched as it is though a refresh was asked (another process was
    writing it); None: refreshed, or none asked."""

    @property
    def asked(self) -> str | ParsedQuestion:
        """The question as a snippet reads it: parsed once, or its text (an answer made by hand)."""
        return self.question if self.parsed is None else self.parsed

    @property
    def answered(self) -> bool:
        return bool(self.hits)

    @property
    def ranked_by(self) -> str:
        """What decided the order, in words (``Hit.ranking_score``; the gate reads the cosine)."""
        order = {"dense": "cosine similarity", "keyword": "keyword (BM25) score"}.get(
            self.mode,
            "cosine similarity fused with keyword (BM25) scores" if self.fused else "cosine similarity",
        )
        if any(hit.exact for hit in self.hits):
            return f"passages holding what the question names verbatim first, then {order}"
        return order

    @property
    def reason(self) -> str:
        """The gate's decision in words."""
        if self.baseline is None:
            rule = f"the cosine cutoff {self.threshold:.3f} you set"
        else:
            rule = f"this question's threshold {self.threshold:.3f} (set by {BASELINE_IN_WORDS})"
        if self.answered:
            return f"{len(self.hits)} passage(s) reach {rule}"
        if self.best_score is None and self.mode == "keyword":  # nothing to read a cosine of
            return "no passage holds any word of the question (keyword search ranks only those that do)"
        return self._refusal()

    def _refusal(self) -> str:
        """A refusal in a reader's words: nothing matched closely enough, with the best cosine and
        what it needed (how the threshold is set is ``--verbose``'s and ``info``'s to say)."""
        if self.unheld:
            return f"the indexed documents never mention {', '.join(self.unheld)}"
        digits = _digits_apart(self.best_score, self.threshold)
        best = "" if self.best_score is None else f"best similarity {self.best_score:.{digits}f}, "
        needed = f"needed {self.threshold:.{digits}f}"
        if self.baseline is None:
            return f"no passage reaches the cosine cutoff you set ({best}{needed})"
        never = f", and they never mention {', '.join(self.unmentioned)}" if self.unmentioned else ""
        return (
            f"nothing in the indexed documents matches this question closely enough ({best}{needed}){never}"
        )

    @property
    def threshold_in_words(self) -> str:
        """How this question's threshold was set (``ask --verbose`` on a refusal)."""
        if self.baseline is None:
            return f"the cosine cutoff {self.threshold:.3f} you set (--min-score)"
        return f"this question's threshold {self.threshold:.3f}, set by {BASELINE_IN_WORDS}"


def _digits_apart(best: float | None, needed: float) -> int:
    """Three decimals, or as many more (up to nine) as show a refused ``best`` below ``needed``:
    "best 0.843, needed 0.843" reads as if it passed."""
    digits = 3
    while best is not None and digits < 9 and round(best, digits) >= round(needed, digits):
        digits += 1
    return digits


class Ranked(NamedTuple):
    row: int
    score: float
    """Cosine similarity: what the no-answer decision reads, whatever ranked the row."""
    exact: bool
    """The chunk contains a code or reference the question names verbatim."""
    keyword_score: float | None = None
    """BM25 score (None in dense mode)."""
    order: float | None = None
    """The score the ranking sorted it by (see ``search.Hit.ranking_score``)."""


@dataclass(frozen=True)
class Judged:
    """One question ranked and judged by the gate (``Searcher.judge``): what ``ask`` shows
    (``Searcher.search`` makes the ``Answer``) and ``eval`` scores, decided once, in one place."""

    parsed: ParsedQuestion
    ranked: list[Ranked]
    """The passages, best first, as deep as asked."""
    read: Ranked | None
    """The passage the gate read (``gate.decision.read_passage``; None: nothing ranked)."""
    baseline: float | None
    """The question's baseline (None: the user's own cosine cutoff decided)."""
    verdict: Verdict
    unheld: tuple[str, ...]
    """What it names as code when the folder holds none of it: refused for it (``names.all_unheld``)."""
    named: list[tuple[str, np.ndarray]]
    """What it names verbatim, each with the rows holding it (``named.named_rows``)."""
    allowed: np.ndarray | None
    """The rows searched (None: every row)."""
    unmentioned: tuple[str, ...] = ()
    """The names it writes as words that the folder never mentions (``named.names_unmentioned``)."""

    @property
    def passing(self) -> list[Ranked]:
        """The ranked passages that pass, in their order (none when the gate refused)."""
        if not self.verdict.answered:
            return []
        return [r for r in self.ranked if is_answer(r.score, r.exact, self.verdict.threshold)]
