"""One chunk of a document, as the index stores it and a search returns it: a module of its own,
with no dependency, so that reading an index needs none of the chunker (``chunking``, which
makes chunks, re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass

PATH_SEPARATOR = " › "
"""Between the headings of a section's path (``Dostawa › Paczkomaty``)."""


@dataclass(frozen=True)
class Chunk:
    """A passage of a file as indexed: its text, where it is, and the headings above it."""

    id: str
    source: str
    headings: tuple[str, ...]
    """The section's heading path as embedded. A title too long for the budget is stored cut (at
    a word boundary, ending in "…"), and outer headings dropped if cutting is not enough."""
    text: str
    """Lines ``start_line``..``end_line`` of the source without their HTML comments."""
    start_line: int
    end_line: int
    tokens: int
    raw: str | None = None
    """The lines as written (HTML comments aside), when ``text`` differs: flavour markup
    (``markup``) or a repeated table header. Snippets show these."""

    @property
    def shown(self) -> str:
        """The text shown to a reader of the results: the file's lines as written."""
        return self.text if self.raw is None else self.raw

    @property
    def section(self) -> str:
        return PATH_SEPARATOR.join(self.headings)

    @property
    def location(self) -> str:
        """``file › heading path (lines a–b)``: where a reader finds the chunk."""
        lines = (
            f"line {self.start_line}"
            if self.start_line == self.end_line
            else f"lines {self.start_line}–{self.end_line}"
        )
        return f"{PATH_SEPARATOR.join([self.source, *self.headings])} ({lines})"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "source": self.source,
            "section": self.section,
            "headings": list(self.headings),
            "text": self.text,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "tokens": self.tokens,
            **({"raw": self.raw} if self.raw is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Chunk:
        return cls(
            id=data["id"],
            source=data["source"],
            headings=tuple(data["headings"]),
            text=data["text"],
            start_line=int(data["start_line"]),
            end_line=int(data["end_line"]),
            tokens=int(data["tokens"]),
            raw=data["raw"] if isinstance(data.get("raw"), str) else None,
        )
