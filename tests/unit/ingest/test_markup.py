"""Markdown flavours indexed as a reader sees them (issue 24): chunk text and heading paths
without the flavour's markup, line numbers exact, and the lines as written kept for snippets."""

from __future__ import annotations

import pytest

from semsearch.ingest.chunking import Chunk, chunk_markdown
from semsearch.ingest.markup import clean
from semsearch.ingest.tokens import count_tokens


def chunks_of(text: str, source: str = "doc.md", max_tokens: int = 400) -> list[Chunk]:
    return chunk_markdown(text, source, max_tokens=max_tokens, count_tokens=count_tokens)


def only(text: str, source: str = "doc.md") -> Chunk:
    found = chunks_of(text, source)
    assert len(found) == 1, [c.text for c in found]
    return found[0]


def test_mkdocs_heading_attributes_leave_heading_paths_and_text():
    chunk = only("# Tytuł\n\n## Lo que hace { #what-it-does .wide }\n\nTexto.{: .note}\n")
    assert chunk.headings == ("Tytuł", "Lo que hace")
    assert chunk.text == "Texto."
    assert (chunk.start_line, chunk.end_line) == (5, 5)


def test_pandoc_and_kramdown_attributes():
    assert clean("Wstęp {#intro .unnumbered}") == "Wstęp"
    assert clean("Wstęp {-}") == "Wstęp"
    assert only("# T\n\nAkapit.\n{: .lead #first}\n\nDalej.\n").text == "Akapit.\n\nDalej."


def test_admonitions_show_their_title_and_their_body_as_text():
    text = (
        '# T\n\n!!! warning "Uwaga na hasła"\n\n    Nie podawaj <b>hasła</b>.\n\n??? tip\n    Ukryta rada.\n'
    )
    chunk = only(text)
    assert chunk.text == "Uwaga na hasła\n\n    Nie podawaj hasła.\n\nTip\n    Ukryta rada."
    assert (chunk.start_line, chunk.end_line) == (3, 8)
    assert chunk.raw is not None and chunk.raw.startswith('!!! warning "Uwaga na hasła"')


def test_content_tabs_snippets_and_include_markers():
    text = (
        '# T\n\n=== "Python"\n\n    Uruchom skrypt.\n\n--8<-- "includes/abbreviations.md"\n\n'
        "Kod: {* ../../docs_src/first_steps/tutorial001.py hl[3] *} tutaj.\n"
    )
    chunk = only(text)
    assert chunk.text == "Python\n\n    Uruchom skrypt.\n\nKod:  tutaj."
    assert chunk.end_line == 9


def test_a_content_tab_body_is_markdown_not_indented_code():
    text = (
        '# T\n\n=== "Python"\n\n    Zobacz [dokumentację](https://x.org) i <b>uwagi</b>.\n\n'
        "    ```py\n    <b>kod</b>\n    ```\n\nPo.\n"
    )
    chunk = only(text)
    assert chunk.text.split("\n\n") == [
        "Python",
        "    Zobacz dokumentację i uwagi.",
        "    ```py\n    <b>kod</b>\n    ```",
        "Po.",
    ]
    assert (chunk.start_line, chunk.end_line) == (3, 11)


def test_pandoc_and_docusaurus_divs():
    text = (
        "# T\n\n::: warning\nUważaj.\n:::\n\n:::tip[Dobra rada]\nRób kopie.\n:::\n\n"
        ":::note Tytuł\nTreść.\n:::\n"
    )
    assert only(text).text == "Warning\nUważaj.\n\nDobra rada\nRób kopie.\n\nTytuł\nTreść."


def test_hugo_shortcodes_keep_the_text_they_show():
    text = (
        "---\ntitle: Klaster\n---\n\n{{< note >}}\nŚledzi nowe "
        '{{< glossary_tooltip term_id="pod" text="pody" >}} na węzłach.\n{{< /note >}}\n\n'
        '## {{% heading "whatsnext" %}}\n\n'
        '{{< glossary_definition term_id="etcd" length="all" >}}\n\nKoniec.\n'
    )
    first, second = chunks_of(text)
    assert first.headings == ("Klaster",)  # no `#` heading: the front matter's title
    assert first.text == "Śledzi nowe pody na węzłach."
    assert first.start_line == first.end_line == 6
    assert second.headings == ("Klaster", "whatsnext")
    assert second.text == "Koniec."
    assert second.start_line == second.end_line == 13


def test_a_glossary_tooltip_without_text_shows_its_term():
    text = '# T\n\nStan jest w {{< glossary_tooltip term_id="etcd" >}}, '
    text += '{{< glossary_tooltip term_id="cri-o">}}.\n'
    assert only(text).text == "Stan jest w etcd, cri-o."


def test_jekyll_liquid_tags_and_output():
    text = "# T\n\n{% include note.html %}\nWersja {{ site.version }} jest {% if x %}nowa{% endif %}.\n"
    assert only(text).text == "Wersja  jest nowa."


def test_mdx_statements_and_components_keep_inner_text():
    text = (
        "---\ntitle: Instalacja\n---\n\nimport { Tabs, TabItem } from '@astrojs/starlight/components';\n"
        "import Demo from '~/components/demo.astro';\n\n<Tabs>\n  <TabItem label=\"npm\">\n\n"
        "Uruchom `npm create astro`.\n\n  </TabItem>\n</Tabs>\n\n<Demo config={{ a: [1, 2], b: '>' }} />\n\n"
        "export const meta = {\n  x: 1,\n};\n\n{/* komentarz */}Koniec.\n"
    )
    chunk = only(text, "guide.mdx")
    assert chunk.headings == ("Instalacja",)
    assert chunk.text.split() == ["npm", "Uruchom", "`npm", "create", "astro`."] + ["Koniec."]
    assert (chunk.start_line, chunk.end_line) == (9, 22)


def test_mdx_indented_lines_are_not_code():
    text = "# T\n\n<Preview>\n\n    <Aside>Treść w ramce.</Aside>\n\n</Preview>\n"
    assert only(text, "a.mdx").text.strip() == "Treść w ramce."
    assert "<Aside>" in only(text, "a.md").text  # in Markdown it is indented code, shown as code


def test_obsidian_wikilinks_embeds_callouts_comments_and_block_ids():
    text = (
        "# Sortowanie\n\nDomyślnie [[Sorting|sortuje]] według [[Urgency]] i [[Dates#Due date]].\n\n"
        "![[Known Limitations#Dates]]\n\n> [!warning] Ostrzeżenie\n> Treść ostrzeżenia. ^abc-12\n\n"
        "> [!tip]\n> Porada.\n\n%% ukryte\n```\nkod\n```\nnadal ukryte %%\n\nKoniec ==ważne==.\n"
    )
    chunk = only(text)
    assert chunk.text == (
        "Domyślnie sortuje według Urgency i Dates > Due date.\n\n> Ostrzeżenie\n> Treść ostrzeżenia.\n\n"
        "> Tip\n> Porada.\n\nKoniec ważne."
    )
    assert (chunk.start_line, chunk.end_line) == (3, 19)


def test_a_wikilink_heading_is_its_text():
    assert only("# T\n\n## [[Layout]]\n\nUkład.\n").headings == ("T", "Layout")


def test_raw_html_is_its_text():
    text = (
        '# T\n\n<span style="color: green;">INFO</span>:     Uvicorn running &amp; ready&nbsp;now\n\n'
        '<img src="x.png" alt="Schemat klastra"><br>Podpis\n\n<script>var x = "<b>nie</b>";</script>\n\n'
        "<style>p { color: red }</style>\n\nA [link](https://example.com/a_(b)) i <https://example.com>.\n"
    )
    chunk = only(text)
    assert chunk.text.split("\n\n") == [
        "INFO:     Uvicorn running & ready now",
        " Schemat klastra  Podpis",
        "A link i https://example.com.",
    ]
    assert (chunk.start_line, chunk.end_line) == (3, 11)


def test_code_keeps_its_markup():
    text = "# T\n\nUżyj `{{< note >}}` i `[[x]]`.\n\n```html\n<b>{{ site.x }}</b> [[a]]\n```\n"
    chunk = only(text)
    assert chunk.text == text.split("\n\n", 1)[1].rstrip()
    assert chunk.raw is None  # nothing differs


@pytest.mark.parametrize(
    ("front_matter", "title"),
    [
        ('+++\ntitle = "Pody"\nweight = 10\n# komentarz TOML\n+++\n', "Pody"),
        ('{\n  "title": "Pody",\n  "weight": 10\n}\n', "Pody"),
        ("title: Pody\ndate: 2024-01-01\n---\n", "Pody"),
    ],
)
def test_front_matter_that_is_not_yaml_is_metadata_and_gives_the_title(front_matter, title):
    text = f"{front_matter}\nTreść strony.\n\n## Sekcja\n\nWięcej.\n"
    first, second = chunks_of(text)
    lines = front_matter.count("\n")
    assert (first.headings, first.text, first.start_line) == ((title,), "Treść strony.", lines + 2)
    assert (second.headings, second.start_line) == ((title, "Sekcja"), lines + 6)


def test_a_hash_heading_wins_over_the_front_matter_title():
    text = "---\ntitle: Z front matter\n---\n\n# Prawdziwy tytuł\n\nTreść.\n"
    assert only(text).headings == ("Prawdziwy tytuł",)


def test_a_table_cut_in_several_chunks_repeats_its_header_row():
    rows = "\n".join(f"| wiersz {i} | wartość numer {i} opisana słowami |" for i in range(60))
    text = f"# T\n\nWstęp.\n\n| nazwa | opis |\n|---|---|\n{rows}\n"
    found = chunks_of(text, max_tokens=120)
    tables = [c for c in found if "wiersz" in c.text]
    assert len(tables) >= 3
    for chunk in tables:
        assert chunk.text.startswith("| nazwa | opis |\n|---|---|\n| wiersz ")
        assert chunk.tokens <= 120
    lines = text.split("\n")
    for chunk in tables[1:]:  # the lines still point at the rows shown, written as they are
        assert chunk.shown.split("\n")[0] == lines[chunk.start_line - 1]
        assert chunk.shown.split("\n")[-1] == lines[chunk.end_line - 1]
        assert chunk.text.endswith(chunk.shown)


def test_the_lines_as_written_round_trip_through_the_chunk_file_record():
    chunk = only("# T\n\nZobacz [[Strona|stronę]].\n")
    assert chunk.raw == "Zobacz [[Strona|stronę]]."
    assert Chunk.from_dict(chunk.to_dict()) == chunk
    assert "raw" not in only("# T\n\nZwykły tekst.\n").to_dict()


def test_a_snippet_shows_the_lines_as_written_at_their_line_numbers():
    from semsearch.retrieve.search import Hit

    text = "# T\n\nWstęp.\n\nZobacz [[Zwroty|zwrot pieniędzy]] w ciągu 14 dni.\n"
    shown = Hit(rank=1, score=0.9, chunk=only(text)).snippet("zwrot pieniędzy 14 dni")
    assert "Zobacz [[Zwroty|zwrot pieniędzy]] w ciągu 14 dni." in shown.text
    assert shown.end_line == 5


def test_mdx_files_are_indexed(tmp_path):
    from semsearch.ingest.sources import discover

    for name in ("a.md", "b.mdx", "c.markdown", "d.txt"):
        (tmp_path / name).write_text("# T\n\nTekst.\n", encoding="utf-8")
    assert [p.name for p in discover(tmp_path)[0]] == ["a.md", "b.mdx", "c.markdown"]


@pytest.mark.parametrize(
    "line",
    [
        "[`Kompose`](https://github.com/kubernetes/kompose) to narzędzie do przenoszenia plików.",
        "[Helm](https://helm.sh) zarządza pakietami.",
        "<p>HTML o <b>pogodzie</b></p>",
        "  [[Strona|Stronę]] opisuje <span>to</span>",
    ],
)
def test_a_line_that_opens_or_ends_with_markup_is_shown_whole(line):
    """The passage's text starts after a link's ``[`` or an HTML tag (a reader sees neither);
    what it shows is the line as written (seen: snippets that began ``Helm](https://helm.sh)``)."""
    chunk = only(f"# T\n\n## S\n\n{line}\n")
    assert chunk.shown == line.strip() or chunk.shown == line


def test_a_plain_heading_is_read_as_the_rules_and_the_inline_parser_read_it():
    """``heading_title`` skips the flavour rules and the inline parser for a heading with none of
    the characters they look for (a million headings had run them all): random titles of those
    characters and the others come out as the full reading gives them."""
    import random

    from semsearch.ingest.markdown import _plain_inline, heading_title
    from semsearch.ingest.markup import clean

    rng = random.Random(39)
    characters = "abcXYZ ąę 019.,-'\"();\t\n" + "\\`*_[]<>!?&~{}:=^+%$|#/@"
    for _ in range(1000):
        title = "".join(rng.choice(characters) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.05:
            title = rng.choice(["import ", "export ", "exports "]) + title
        assert heading_title(title) == _plain_inline(clean(title)), repr(title)
