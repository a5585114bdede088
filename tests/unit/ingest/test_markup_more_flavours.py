"""More Markdown flavours indexed as a reader sees them (issue 24, after a survey of real folders:
MyST-Parser's docs, Material for MkDocs', VitePress', GitBook exports): chunk text and heading
paths without the markup, line numbers exact."""

from __future__ import annotations

from semsearch.ingest.chunking import Chunk, chunk_markdown
from semsearch.ingest.tokens import count_tokens


def only(text: str) -> Chunk:
    found = chunk_markdown(text, "doc.md", max_tokens=400, count_tokens=count_tokens)
    assert len(found) == 1, [c.text for c in found]
    return found[0]


def test_link_reference_definitions_between_blocks_and_their_shortcut_references():
    chunk = only('# T\n\nSee [Z] and [not defined], [Z][] and [x][z].\n\n[z]: https://z.org "Z"\n\nMore.\n')
    assert chunk.text == "See Z and [not defined], Z and x.\n\nMore."
    assert (chunk.start_line, chunk.end_line) == (3, 7)
    assert "[z]: https://z.org" in chunk.shown


def test_backslash_escapes_show_the_character_and_a_hard_break_loses_its_backslash():
    chunk = only(
        "# rewrite\\_tag \\(CNCF\\)\n\n"
        "Use rewrite\\_tag\\_filter \\(CNCF\\) at C:\\Users, line\\\nnext `a\\_b`.\n"
    )
    assert chunk.headings == ("rewrite_tag (CNCF)",)
    assert chunk.text == "Use rewrite_tag_filter (CNCF) at C:\\Users, line\nnext `a\\_b`."


def test_an_escaped_bracket_or_tag_is_text():
    assert only("# T\n\n\\[not a link](x) and \\<b> and \\\\.\n").text == "[not a link](x) and <b> and \\."


def test_material_icons_keys_inserts_deletions_and_abbreviations():
    chunk = only(
        "# Adding a :simple-materialformkdocs: badge\n\n"
        "Click :material-check-all:{ .green } to press ++ctrl+alt+del++, ^^add^^ or ~~drop~~ HTML.\n\n"
        "*[HTML]: Hyper Text Markup Language\n"
    )
    assert chunk.headings == ("Adding a badge",)
    assert chunk.text == "Click  to press ctrl+alt+del, add or drop HTML."


def test_a_heading_ending_in_bare_attribute_keys_and_a_tab_title_with_an_icon():
    chunk = only(
        "## Changes to `*.html` files { data-search-exclude }\n\n"
        '=== ":octicons-file-code-16: `docs/page.md`"\n\n'
        "    Text in the tab.\n"
    )
    assert chunk.headings == ("Changes to *.html files",)
    assert chunk.text == "`docs/page.md`\n\n    Text in the tab."


def test_vitepress_table_of_contents_file_includes_and_container_attributes():
    chunk = only("# T\n\n[[toc]]\n\n<<< @/snippets/init.ansi\n\n::: details Click me {open}\nBody.\n:::\n")
    assert chunk.text == "Click me\nBody."


def test_a_gitbook_api_operation_shows_its_method_and_path():
    chunk = only(
        '# API\n\n{% openapi-operation spec="api" path="/archives" method="get" %}\n'
        "[OpenAPI api](https://x.org/openapi.yaml)\n{% endopenapi-operation %}\n"
    )
    assert chunk.text == "GET /archives\nOpenAPI api"


def test_myst_targets_comments_breaks_and_roles():
    chunk = only(
        "(intro)=\n# Intro\n\n% TODO a comment ```with backticks\n\n"
        "See {ref}`the roles <syntax/roles>` and {term}`MyST`.\n\n+++\n\nAfter.\n"
    )
    assert chunk.headings == ("Intro",)
    assert chunk.text == "See the roles and MyST.\n\nAfter."
    assert (chunk.start_line, chunk.end_line) == (6, 10)


def test_a_myst_directive_with_a_prose_body_is_markdown_and_its_code_stays_code():
    chunk = only(
        "# T\n\n```{note}\n:class: tip\nA note with [a link](http://x).\n\n    indented [x](y)\n```\n\n"
        "```{admonition} My title\n---\nclass: tip\n---\nBody.\n```\n\n"
        "````{div}\n```{button-ref} intro\n:ref-type: doc\n\nGet Started\n```\n````\n\n"
        "```{code-block} python\nprint(1)  # [kept](as code)\n```\n"
    )
    assert chunk.text == (
        "Note\nA note with a link.\n\n    indented [x](y)\n\nMy title\nBody.\n\n\nGet Started\n\n"
        "```{code-block} python\nprint(1)  # [kept](as code)\n```"
    )


def test_myst_colon_fence_options_and_field_lists():
    chunk = only("# T\n\n:::{warning}\n:class: dropdown\nWarned.\n:::\n\n:name: A reference target\n")
    assert chunk.text == "Warning\nWarned.\n\nname: A reference target"


def test_latex_math_blocks_are_kept_as_written():
    chunk = only("# T\n\n$$\na \\\\ b \\{x\\}\n$$\n\n\\begin{align}\nc \\_ d\n\\end{align}\n\nText \\_x.\n")
    assert chunk.text == "$$\na \\\\ b \\{x\\}\n$$\n\n\\begin{align}\nc \\_ d\n\\end{align}\n\nText _x."


def test_pymdownx_blocks_show_their_title_and_lose_their_options():
    """FastAPI's docs: ``/// note | Hinweis`` … ``///`` (880 marker lines in its German folder)."""
    chunk = only(
        "# T\n\n/// note | Hinweis\n\nText hier.\n\n///\n\n"
        "/// warning\n    attrs: {class: x}\nCareful.\n///\n\n"
        "//// tab | Python 3.10+\n\nTabbed.\n\n////\n\nA path a///b and /// in a sentence.\n"
    )
    assert chunk.text == (
        "Hinweis\n\nText hier.\n\nWarning\nCareful.\n\nPython 3.10+\n\nTabbed.\n\n"
        "A path a///b and /// in a sentence."
    )
    assert (chunk.start_line, chunk.end_line) == (3, 20)


def test_an_alt_text_is_read_as_text_too():
    chunk = only('# T\n\n<img alt="{{ sponsor.title }} &amp; [logo](u)" src="a.png"> <b>Sponsor</b>\n')
    assert chunk.text == " & logo  Sponsor"  # spaced as the tags were
