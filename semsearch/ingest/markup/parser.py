"""The block parser every reader of a document's structure uses: the chunker (``markdown``) and
the bodies of MyST directives (``myst``), so both see the same code, math and containers."""

from __future__ import annotations

from functools import lru_cache

MAX_NESTING = 100
"""Token levels markdown-it parses before giving up (its "default" preset's value). The
"commonmark" preset stops at 20, i.e. a list nested 10 deep, and everything after it was then
filed into that list: later headings opened no section. ~2 stack frames a level, far from
Python's recursion limit."""


@lru_cache(maxsize=4)
def block_parser(front_matter: bool = True, mdx: bool = False):
    """CommonMark with tables, admonitions, content tabs and LaTeX math blocks, block structure
    only (``front_matter``: YAML front matter too; ``mdx``: no indented code)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    from semsearch.ingest.markup.tabs import tabs_plugin

    # Only the block structure is needed: skipping inline parsing of every paragraph keeps
    # memory and time low on large files. Heading text is parsed inline on its own.
    parser = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table").disable("inline")
    parser.use(admon_plugin).use(tabs_plugin)  # `!!! note`, `=== "Tab"` bodies: Markdown, not code
    parser.use(dollarmath_plugin).use(amsmath_plugin)  # `$$…$$`, `\begin{align}`: LaTeX, kept as code
    if mdx:  # MDX has no indented code: indented lines are Markdown and JSX
        parser.disable("code")
    return parser.use(front_matter_plugin) if front_matter else parser
