"""More Markdown flavours indexed as a reader sees them (issue 24, after a survey of real folders:
MyST-Parser's docs, Material for MkDocs', VitePress', GitBook exports): chunk text and heading
paths without the markup, line numbers exact."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        pytest.param(  # an escaped bracket or tag is text
            "\\[not a link](x) and \\<b> and \\\\.\n", "[not a link](x) and <b> and \\.", id="escaped"
        ),
        pytest.param(  # VitePress: a table of contents, a file include, a container's attributes
            "[[toc]]\n\n<<< @/snippets/init.ansi\n\n::: details Click me {open}\nBody.\n:::\n",
            "Click me\nBody.",
            id="vitepress",
        ),
        pytest.param(  # GitBook: an API operation shows its method and path
            '{% openapi-operation spec="api" path="/archives" method="get" %}\n'
            "[OpenAPI api](https://x.org/openapi.yaml)\n{% endopenapi-operation %}\n",
            "GET /archives\nOpenAPI api",
            id="gitbook-api",
        ),
        pytest.param(  # MyST: a colon fence's options go, a field list's name shows
            ":::{warning}\n:class: dropdown\nWarned.\n:::\n\n:name: A reference target\n",
            "Warning\nWarned.\n\nname: A reference target",
            id="myst-colon-fence",
        ),
        pytest.param(  # LaTeX blocks are kept as written (code), escapes outside them are read
            "$$\na \\\\ b \\{x\\}\n$$\n\n\\begin{align}\nc \\_ d\n\\end{align}\n\nText \\_x.\n",
            "$$\na \\\\ b \\{x\\}\n$$\n\n\\begin{align}\nc \\_ d\n\\end{align}\n\nText _x.",
            id="math",
        ),
        pytest.param(  # mdBook: an include in code shows a file that is not this text
            "```rust\n{{#rustdoc_include ../listings/ch03/src/main.rs:here}}\n```\n\n"
            "```rust\nfn main() {}\n```\n",
            "```rust\n```\n\n```rust\nfn main() {}\n```",
            id="mdbook-include",
        ),
        pytest.param(  # an alt text is Markdown too, spaced as the tags were
            '<img alt="{{ sponsor.title }} &amp; [logo](u)" src="a.png"> <b>Sponsor</b>\n',
            " & logo  Sponsor",
            id="alt-text",
        ),
        pytest.param(  # Foam's docs: a code span in a link's text, brackets in it
            "Create [`[[links]]` to pages](https://x.org/#links) and [`]` c](v).\n\nA [lone ` b](u).\n",
            "Create `[[links]]` to pages and `]` c.\n\nA lone ` b.",
            id="code-in-link-text",
        ),
        pytest.param(  # Hugo: a shortcode makes the URL, in the text too
            "See [issues]({{% param _issues %}}) and [API {{< param v >}}](/api/{{< param v >}}/).\n",
            "See issues and API .",
            id="shortcode-url",
        ),
        pytest.param(  # a definition's URL on its next line, in a list item too
            "- Item [text][far].\n\n  [far]:\n    /docs/specs/#stability\n\n"
            "[página principal]:\n  https://x.org/_index.md\n\nAfter.\n",
            "- Item text.\n\nAfter.",
            id="definition-url-on-next-line",
        ),
        pytest.param(  # a definition in a quote, a URL in angle brackets holding a shortcode
            "> Read the [org][].\n>\n> [org]: https://x.org\n\n[issue]: <{{% param _issues %}}>\n\nAfter.\n",
            "> Read the org.\n>\n\nAfter.",
            id="definition-in-quote-angle-url",
        ),
        pytest.param(  # Docsy's tab labels: a bare word, a quoted one, header=
            '{{< tabpane text=true >}}\n{{% tab Make %}}\nA.\n{{% /tab %}}\n{{% tab "Power Shell" %}}\nB.\n'
            '{{% /tab %}}\n{{< tab header="Docker" lang="sh" >}}\nC.\n{{< /tab >}}\n{{< /tabpane >}}\n',
            "Make\nA.\nPower Shell\nB.\nDocker\nC.",
            id="docsy-tabs",
        ),
    ],
)
def test_a_flavour_construct_shows_what_a_reader_sees(markdown, shown):
    assert only("# T\n\n" + markdown).text == shown


def test_hugo_shortcodes_indented_after_a_fence_at_the_margin_are_not_code():
    """OpenTelemetry's docs: a list item's tab pane whose fences stand at the margin, so that
    CommonMark reads the indented shortcode lines after them as code; Hugo expands them first."""
    chunk = only(
        "# T\n\n1.  Start the demo:\n\n    {{< tabpane text=true >}} {{% tab Make %}}\n\n"
        "```shell\nmake start\n```\n\n    {{% /tab %}} {{% tab Docker %}}\n\n"
        "```shell\ndocker compose up\n```\n\n    {{% /tab %}} {{< /tabpane >}}\n\nCode:\n\n"
        "    {{< kept >}}\n    as code\n"
    )
    indexed, snippet = chunk.text.split("\n\n"), chunk.shown.split("\n\n")
    assert indexed[1::2] == ["     Make", "     Docker", "Code:"]  # tab labels, not shortcodes
    assert indexed[-1] == "    {{< kept >}}\n    as code"  # code that is more than shortcodes
    assert snippet[1] == "    {{< tabpane text=true >}} {{% tab Make %}}"  # a snippet: the lines as written
    assert (chunk.start_line, chunk.end_line) == (3, 22)
