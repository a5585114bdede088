"""Markup left in chunk text and heading paths, per kind, on real doc folders (issue 24).

Chunks every Markdown file of each folder with the real chunker (no model needed) and counts,
outside code (fences, indented fences, code spans), what a reader would not see: HTML tags and
entities, shortcodes, Liquid, wikilinks, callout markers, admonition/tab/div markers, attribute
lists, MDX statements, link URLs... The patterns here are written apart from ``semsearch.ingest.markup``
(what a reader would call markup), so the count is a check of those rules, not a restatement.

    python bench/markup_residue.py [-v] [FOLDER ...]   # default: ../shared/data/*/docs and bench/data/*/docs

``-v`` prints each residue found: file, chunk lines, kind, the string and the chunk text around it.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS: dict[str, re.Pattern[str]] = {
    "html tag": re.compile(r"</?[A-Za-z][\w.-]*(?:\s[^<>]*)?/?>"),
    "html entity": re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]\w+);"),
    "shortcode": re.compile(r"\{\{[<%]|[>%]\}\}"),
    "liquid": re.compile(r"\{%|%\}|\{\{|\}\}"),
    "include marker": re.compile(r"\{\*|\*\}"),
    "snippet marker": re.compile(r"-8<-"),
    "wikilink": re.compile(r"\[\[[^\]\n]*\]\]"),
    "callout marker": re.compile(r"\[![\w-]+\]"),
    "obsidian comment": re.compile(r"%%"),
    "block id": re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+$", re.MULTILINE),
    "attribute list": re.compile(r"\{:|\{\s*[#.][\w-]+[^{}\n]*\}"),
    "admonition marker": re.compile(r"^[\s>]*(?:!!!|\?\?\?)", re.MULTILINE),
    "block marker": re.compile(r"^[\s>]*/{3,}(?:[ \t]*[\w-]+)?[ \t]*(?:\|.*)?$", re.MULTILINE),
    "tab marker": re.compile(r"^[\s>]*===[+!]*\s", re.MULTILINE),
    "div marker": re.compile(r"^[\s>]*:::", re.MULTILINE),
    "mdx statement": re.compile(r"^(?:import\s.*\sfrom\s+['\"]|import\s+['\"]|export\s+\w)", re.MULTILINE),
    "link url": re.compile(r"\]\([^)\s]*\)|^[\s>]*\[[^\]]+\]:\s*\S", re.MULTILINE),
    "front matter": re.compile(r"^\+\+\+\s*$|^(?:title|date|weight|description)\s*[:=]\s*\S", re.MULTILINE),
    "myst target": re.compile(r"^\s*\([\w/.:-]+\)=\s*$", re.MULTILINE),
    "myst role": re.compile(r"\{(?:ref|doc|term|numref|eq|math|code|kbd|abbr|download|sub-ref|py:\w+)\}"),
    "myst comment": re.compile(r"^%[ \t]", re.MULTILINE),
    "directive option": re.compile(
        r"^[ \t]*:(?:class|name|open|width|align|alt|caption|gutter|margin|ref-type|color|columns|"
        r"header-rows|widths|hidden|maxdepth|glob|titlesonly|icon|link|reverse|child-align):",
        re.MULTILINE,
    ),
    "icon": re.compile(r":(?:material|octicons|fontawesome|simple)-[\w-]+:"),
    "escape": re.compile(r"\\[!-/:-@\[-`{-~]"),
    "keys": re.compile(r"\+\+[\w-]+(?:\+[\w-]+)*\+\+"),
    "insert or delete": re.compile(r"\^\^\S[^\n]*?\^\^|~~\S[^\n]*?~~"),
    "toc marker": re.compile(r"^\s*\[\[?toc\]\]?\s*$", re.MULTILINE | re.IGNORECASE),
    "abbreviation": re.compile(r"^\*\[[^\]\n]+\]:", re.MULTILINE),
    "file include": re.compile(r"^\s*<<<\s", re.MULTILINE),
}
_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)")


def source_prose(text: str, mdx: bool) -> str:
    """A file's text without its code (fenced and indented, as markdown-it finds them) and code
    spans: where markup stands that a reader would see as markup."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    from semsearch.ingest.markup.tabs import tabs_plugin

    parser = MarkdownIt("commonmark").use(admon_plugin).use(tabs_plugin)
    parser.use(dollarmath_plugin).use(amsmath_plugin)
    if mdx:
        parser.disable("code")
    lines = text.split("\n")
    for token in parser.parse(text):
        if token.type in {"fence", "code_block", "math_block", "amsmath"} and token.map:
            lines[token.map[0] : token.map[1]] = [""] * (token.map[1] - token.map[0])
    return prose("\n".join(lines))


_MATH = re.compile(r"\$\$[\s\S]*?\$\$|\$[^$\n]+\$|\\begin\{([\w*]+)\}[\s\S]*?\\end\{\1\}")


def prose(text: str, opened: str = "") -> str:
    """``text`` without its fenced code, code spans and LaTeX math: what is counted (``opened``:
    the fence ``text`` starts inside, for a chunk cut from a long code block)."""
    text = _MATH.sub(_blanked, text)
    kept, fence = [], opened
    for line in text.split("\n"):
        opener = _FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = ""
            line = ""
        elif opener:
            fence, line = opener.group(1), ""
        kept.append(line)  # a line for each: the file's prose stays aligned with its lines
    return _CODE_SPAN.sub(_blanked, "\n".join(kept))


def _blanked(match: re.Match[str]) -> str:
    """Code or math replaced by spaces, its line breaks kept."""
    return re.sub(r"[^\n]+", " ", match.group())


_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")


def heading_source(source: str) -> str:
    """The lines of a file's prose (``source_prose``) that headings come from: ATX headings,
    setext heading text and the front matter (titles). A heading's residue must stand there, so
    that code in a heading (``## `<Aside>` Props``) is not counted."""
    lines = source.split("\n")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in {"---", "+++"}), 0)
    kept = lines[: end + 1] if lines and lines[0].strip() in {"---", "+++"} else []
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if re.match(r" {0,3}#{1,6}(?:[ \t]|$)", line) or (line.strip() and _SETEXT.fullmatch(following)):
            kept.append(line)
    return "\n".join(kept)


def count(text: str, source: str, opened: str = "") -> Counter[str]:
    """Residue per kind in ``text`` (a chunk's text or a heading): each markup-looking string
    outside code that also stands outside code in the file ``source`` (so code a chunk starts
    inside, or ``&lt;b>`` decoded to the ``<b>`` a reader sees, is not residue)."""
    return Counter(kind for kind, _ in residues(text, source, opened))


def residues(text: str, source: str, opened: str = "") -> list[tuple[str, re.Match[str]]]:
    """The residues ``count`` counts: ``(kind, match)``, the match in ``text`` less its code."""
    shown = prose(text, opened)
    return [
        (kind, match)
        for kind, pattern in KINDS.items()
        for match in pattern.finditer(shown)
        if match.group() in source
    ]


def _report(where: str, found: list[tuple[str, re.Match[str]]]) -> None:
    """Each residue of ``found`` (from ``residues``) with 60 characters of text around it."""
    for kind, match in found:
        around = match.string[max(0, match.start() - 60) : match.end() + 60]
        print(f"{where} [{kind}] {match.group()!r}\n    {around!r}")


def folder_residue(
    folder: Path, max_tokens: int = 512, verbose: bool = False
) -> tuple[Counter[str], Counter[str], int]:
    """Residue in chunk text and in heading paths over every Markdown file under ``folder``,
    and how many chunks there were (``verbose``: each residue printed in its context)."""
    from semsearch.ingest.chunking import chunk_markdown
    from semsearch.ingest.tokens import count_tokens

    in_text: Counter[str] = Counter()
    in_headings: Counter[str] = Counter()
    chunks = 0
    for path in sorted(p for p in folder.rglob("*") if p.suffix in {".md", ".markdown", ".mdx"}):
        text = path.read_text(encoding="utf-8")
        source = source_prose(text, path.suffix == ".mdx")
        titles = heading_source(source)
        lines, raw = source.split("\n"), text.split("\n")
        for chunk in chunk_markdown(text, str(path.relative_to(folder)), max_tokens=max_tokens,
                                    count_tokens=count_tokens):  # fmt: skip
            chunks += 1
            # in the prose of its own lines: a chunk starting inside a long code block shows code
            own = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
            found = residues(chunk.text, own, _fence_around(raw, lines, chunk.start_line - 1))
            in_heading = [residue for heading in chunk.headings for residue in residues(heading, titles)]
            in_text += Counter(kind for kind, _ in found)
            in_headings += Counter(kind for kind, _ in in_heading)
            if verbose:
                _report(f"{chunk.source}:{chunk.start_line}-{chunk.end_line}", found)
                _report(f"{chunk.source} heading", in_heading)
    return in_text, in_headings, chunks


def _fence_around(raw: list[str], prose_lines: list[str], line: int) -> str:
    """The fence of the code block the file's line ``line`` (0-based) lies inside, "" when it lies
    outside code: the fence lines in the run of code and blank lines above it, counted."""
    if line >= len(raw) or not raw[line].strip() or prose_lines[line].strip():
        return ""
    fences = []
    for above in range(line - 1, -1, -1):
        if prose_lines[above].strip():
            break
        if opener := _FENCE.match(raw[above]):
            fences.append(opener.group(1))
    return fences[0] if len(fences) % 2 else ""


def raw_sets() -> list[Path]:
    """The doc folders counted: ../shared/data's sets (beside the checkout or its worktree) and
    the project's own bench/data sets."""
    shared = next((p for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared") if p.is_dir()), None)
    found = sorted(shared.glob("data/*/docs")) if shared else []
    return found + sorted((ROOT / "bench" / "data").glob("*/docs"))


def main(folders: list[Path], verbose: bool = False) -> None:
    for folder in folders:
        in_text, in_headings, chunks = folder_residue(folder, verbose=verbose)
        print(f"{folder.parent.name}: {chunks} chunks")
        for kind in KINDS:
            if in_text[kind] or in_headings[kind]:
                print(f"  {kind:18} text {in_text[kind]:5}   headings {in_headings[kind]:4}")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "-v"]
    main([Path(a) for a in arguments] or raw_sets(), verbose="-v" in sys.argv[1:])
