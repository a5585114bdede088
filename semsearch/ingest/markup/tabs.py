"""A markdown-it block rule for content tabs (pymdownx.tabbed, MkDocs Material): ``=== "Python"``
and the lines indented under it are one block whose body is Markdown, not indented code.

mdit-py-plugins has no rule for them; this one follows its ``admon`` rule (how the body's end is
found: a line indented less, or two blank lines). The marker line's text is ``blocks.admonitions``'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock

_TAB = re.compile(r'===[+!]*[ \t]+"[^"\n]*"[ \t]*')
_BODY_INDENT = 4


def tabs_plugin(md: MarkdownIt) -> None:
    md.block.ruler.before(
        "fence", "content_tab", _content_tab, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )


def _content_tab(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    start = state.bMarks[start_line] + state.tShift[start_line]
    if not _TAB.fullmatch(state.src, start, state.eMarks[start_line]):
        return False
    if silent:
        return True
    old = (state.parentType, state.lineMax, state.blkIndent)
    state.parentType = "content_tab"
    state.blkIndent += _BODY_INDENT
    next_line, was_empty = start_line, False
    while (next_line := next_line + 1) < end_line:
        is_empty = state.sCount[next_line] < state.blkIndent
        if is_empty and was_empty:
            break
        was_empty = is_empty
        text_start = state.bMarks[next_line] + state.tShift[next_line]
        if text_start < state.eMarks[next_line] and state.sCount[next_line] < state.blkIndent:
            break
    state.lineMax = next_line
    token = state.push("content_tab_open", "div", 1)
    token.block, token.map = True, [start_line, next_line]
    state.md.block.tokenize(state, start_line + 1, next_line)
    state.push("content_tab_close", "div", -1).block = True
    state.parentType, state.lineMax, state.blkIndent = old
    state.line = next_line
    return True
