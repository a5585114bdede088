"""Count the raw syntax kinds in docs/ (the table in README.md).
    python inventory.py
Regex-based approximations. "Prose" is text outside fenced code blocks (a fence is a line of 3+
backticks or tildes, at any indentation, also inside a blockquote)."""
from __future__ import annotations

import collections
import re
from pathlib import Path

DOCS = Path(__file__).parent / "docs"

PATTERNS = {
    "heading anchors `{#id}`": r"(?m)^#+ .*\{ ?#[\w-]+ ?\}",
    "fences with highlighted lines ```js{1,4-6}": r"(?m)^\s*(?:>\s*)*(?:`{3,}|~{3,})\w*\{[\d,\s-]+\}",
    "Gatsby code embeds `embed:file.js`": r"`embed:[^`\n]+`",
    "note boxes (a `>` line holding only a label: `> Uwaga`, `>Wskazówka`)": r"(?m)^>\s*\**[A-ZĄĆĘŁŃÓŚŹŻ][\wąćęłńóśźż ]{2,30}\**:?\s*$",
    "links by site URL `](/docs/...)` (not by file)": r"\]\(/(?:docs|blog|community|tutorial)/[^)\s]*\)",
    "`codepen://` links": r"codepen://",
    "HTML comments `<!-- -->`": r"<!--",
    "HTML tags": r"</?(?:div|span|p|a|img|figure|table|thead|tbody|tr|td|th|br|b|i|sub|sup|small|script|details|summary|kbd|iframe)\b[^>\n]*>",
    "Markdown tables (separator rows)": r"(?m)^\s*\|?\s*:?-{3,}:?\s*\|",
}
POLISH = re.compile(r"[ąćęłńóśźżĄĆĘŁŃÓŚŹŻ]")


def split(text: str) -> tuple[str, int]:
    prose, fence, fences = [], None, 0
    for line in text.split("\n"):
        m = re.match(r"^\s*(?:>\s*)*(`{3,}|~{3,})", line)
        if m and fence is None:
            fence, fences = m.group(1), fences + 1
            continue
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = None
            continue
        if fence is None:
            prose.append(line)
    return "\n".join(prose), fences


def main() -> None:
    files = sorted(DOCS.rglob("*.md"))
    total, in_files = collections.Counter(), collections.Counter()
    for path in files:
        text = path.read_text(encoding="utf-8")
        front = re.match(r"---\n(.*?\n)?---\n", text, re.S)
        prose, fences = split(text[front.end():] if front else text)
        counts = {
            "front matter (`---` YAML `---` first)": int(bool(front)),
            "front-matter `title:`": int(bool(front and re.search(r"(?mi)^title:", front.group(1) or ""))),
            "no `# ` heading in the body": int(not re.search(r"(?m)^# ", prose)),
            "fenced code blocks": fences,
        }
        counts["fences with highlighted lines ```js{1,4-6}"] = 0
        counts.update({name: len(re.findall(rx, prose)) for name, rx in PATTERNS.items()})
        # highlighted fences are opening fence lines, which split() drops from the prose
        counts["fences with highlighted lines ```js{1,4-6}"] = len(
            re.findall(PATTERNS["fences with highlighted lines ```js{1,4-6}"], text))
        counts["still in English (fewer than 10 Polish letters)"] = int(len(POLISH.findall(text)) < 10)
        for name, n in counts.items():
            total[name] += n
            in_files[name] += bool(n)
    print(f"{len(files)} files, {sum(p.stat().st_size for p in files):,} bytes")
    print("| syntax | count | files |\n| --- | ---: | ---: |")
    for name in total:
        print(f"| {name} | {total[name]} | {in_files[name]} |")


if __name__ == "__main__":
    main()
