"""A question as a search reads it, parsed once on its way in (``Searcher.search``, ``Searcher.parse``)
and passed down to the ranking, the rows holding what it names, the names rule and the answer:
the codes, references and names as code writes them that it names verbatim (``search``), whether
it names something exact (hybrid search then fuses keywords in), and its keyword tokens in the
language of the index's keyword side."""

from __future__ import annotations

import re
from dataclasses import dataclass

from semsearch.encode.keywords import tokenize
from semsearch.retrieve.lexing import code_names, identifiers, names_something_exact, references
from semsearch.retrieve.names import ProperName, proper_names

_CONTROL = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A terminal escape sequence (CSI ``\x1b[31m`` or its 8-bit form ``\x9b31m``, or ESC and one
character) or a control character (C0, DEL or C1)."""


@dataclass(frozen=True)
class ParsedQuestion:
    """A question parsed once: what it names exactly, its keywords and its language."""

    text: str
    """The question as searched."""
    identifiers: tuple[str, ...]
    """The codes it names verbatim (``PAY-517``, see ``lexing.identifiers``)."""
    references: tuple[tuple[str, ...], ...]
    """The legal-style references it names, each as its parts (``art. 6``, ``ust. 1``)."""
    code_names: tuple[str, ...]
    """The names as code writes them that it holds (``events.once``)."""
    names_exact: bool
    """It names an exact string (a number, a quoted phrase, a code...): see ``names_something_exact``."""
    language: str | None
    """The language its ``tokens`` are stemmed in: the index's keyword side's (None: no stemming)."""
    tokens: tuple[str, ...]
    """Its BM25 tokens (``encode.keywords.tokenize``)."""
    proper_names: tuple[ProperName, ...] = ()
    """The names it writes as words (``DHL``, ``Revolut Pay``: see ``names.proper_names``)."""

    @classmethod
    def parse(cls, text: str, language: str | None = None) -> ParsedQuestion:
        """``text`` parsed, its tokens stemmed in ``language``; what it names is read without
        terminal escape sequences and control characters (``\x1b[31m`` names nothing)."""
        words = " ".join(_CONTROL.sub(" ", text).split()) if _CONTROL.search(text) else text
        names = tuple(code_names(words))
        return cls(
            text=text,
            identifiers=tuple(identifiers(words)),
            references=tuple(tuple(chain) for chain in references(words)),
            code_names=names,
            names_exact=names_something_exact(words, names),
            language=language,
            tokens=tuple(tokenize(words, language)),
            proper_names=proper_names(words),
        )

    def tokens_in(self, language: str | None) -> tuple[str, ...]:
        """Its BM25 tokens stemmed in ``language`` (those parsed when it is theirs)."""
        return self.tokens if language == self.language else tuple(tokenize(self.text, language))

    @property
    def names_anything(self) -> bool:
        """Whether it names a code, a reference or a name as code writes it."""
        return bool(self.identifiers or self.references or self.code_names)

    @property
    def named_strings(self) -> list[str]:
        """What it names exactly: its codes, every part of its references, its names as code
        writes them."""
        parts = [part for chain in self.references for part in chain]
        return [*self.identifiers, *parts, *self.code_names]
