"""The shapes of the MCP tools' arguments and results (``mcp_server``): what clients see as
JSON schemas, with a description wherever a field's meaning is not obvious."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticKnownError
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from semsearch.defaults import MODES

MAX_K = 50
"""More passages than this would flood the model's context for little gain."""
MAX_LISTED_FILES = 200


def _refuse_boolean(value: Any) -> Any:
    """A JSON true or false is not an integer, though pydantic's lax mode reads it as 1 or 0."""
    if isinstance(value, bool):
        raise PydanticKnownError("int_type")  # told as any other non-integer (``mcp_arguments``)
    return value


NOT_BOOLEAN = BeforeValidator(_refuse_boolean)
"""Last in an integer argument's ``Annotated`` (after its ``Field``, whose bounds then stay
``minimum``/``maximum`` in the JSON schema): the argument refuses true and false, and takes what
it took before, an integer, a float without a fraction (2.0) or a text of digits ("2"), which
some clients send for a number. ``Strict`` would refuse those too."""


class Stale(TypedDict):
    files: Annotated[list[str], Field(description="Files added, removed or modified since the build.")]
    note: str


class SearchHit(TypedDict):
    rank: int
    source: Annotated[str, Field(description="The file, relative to the documents folder.")]
    section: Annotated[str, Field(description="Heading path, 'Title › Subsection'.")]
    start_line: int
    end_line: int
    location: str
    score: Annotated[float, Field(description="Cosine similarity to the question.")]
    keyword_score: Annotated[float | None, Field(description="BM25 score (null in dense mode).")]
    exact: Annotated[
        bool, Field(description="Holds a code or name the question writes verbatim (listed first).")
    ]
    text: str


class SearchResult(TypedDict):
    answered: Annotated[bool, Field(description="Whether any passage passed the relevance gate.")]
    reason: str
    ranked_by: Annotated[str, Field(description="What decided the order (scores are always cosines).")]
    missing: Annotated[
        list[str],
        Field(
            description="Codes or references the question names that no searched passage holds, and "
            "names it writes as words (DHL) that the documents never mention."
        ),
    ]
    missing_elsewhere: Annotated[
        dict[str, list[str]], Field(description="Those of missing that files outside paths/where hold.")
    ]
    unheld: Annotated[
        list[str],
        Field(description="What the question names as code when no file holds any of it: refused for it."),
    ]
    hits: list[SearchHit]
    question: Annotated[str, Field(description="The question as searched.")]
    question_cut: Annotated[bool, Field(description="Whether it was cut to the model's input limit.")]
    mode: str
    threshold: Annotated[float, Field(description="The cosine a passage had to reach.")]
    best_score: Annotated[
        float | None,
        Field(description="The first-ranked passage's cosine, passed or not: how close a refusal came."),
    ]
    stale: Stale | None


class Passage(TypedDict):
    section: str
    start_line: int
    end_line: int
    text: str


class PassageResult(TypedDict):
    source: str
    passages: list[Passage]
    truncated: bool
    next_start_line: Annotated[
        int | None, Field(description="Where to continue with start_line, when truncated.")
    ]
    stale: Stale | None


class UnreadFrontMatter(TypedDict):
    path: str
    line: Annotated[int, Field(description="Where the problem is (1-based).")]
    problem: str


class IndexInfo(TypedDict):
    index: str
    docs_folder: str
    files: Annotated[int, Field(description="Files with text to search (not those of only front matter).")]
    file_names: Annotated[list[str], Field(description=f"The first {MAX_LISTED_FILES} of them.")]
    without_text: Annotated[
        list[str],
        Field(
            description="Files read but with no text to search (only front matter or headings), "
            f"the first {MAX_LISTED_FILES}."
        ),
    ]
    chunks: Annotated[int, Field(description="Indexed passages.")]
    model: str
    margin: Annotated[
        float,
        Field(description="How far a passage's cosine must exceed each question's baseline."),
    ]
    margin_origin: str
    built_at: str | None
    semsearch_version: str | None
    changed_files: Annotated[list[str], Field(description=f"The first {MAX_LISTED_FILES}.")]
    front_matter_fields: Annotated[
        dict[str, int] | None,
        Field(
            description="Front-matter fields `search` can filter on (`where`), with their file counts "
            "(files without text included: a `where` may select them, and is then told they hold nothing)."
        ),
    ]
    front_matter_unread: Annotated[
        list[UnreadFrontMatter],
        Field(description="Files whose front matter could not be read (indexed without fields)."),
    ]
    stale: Stale | None


Question = Annotated[
    str, Field(min_length=1, description="The question, in any language, as a full sentence.")
]
K = Annotated[int, Field(ge=1, le=MAX_K, description="How many passages at most."), NOT_BOOLEAN]
Mode = Annotated[
    Literal[MODES],
    Field(
        description="hybrid (default): by meaning plus exact words, these weighed more when the "
        "question names a number, code or quoted phrase; dense: by meaning only; keyword: exact "
        "words only (BM25)."
    ),
]
Paths = Annotated[
    str | tuple[str, ...],
    Field(
        description="Search only files matching these .gitignore-style patterns, relative to the "
        "documents folder (e.g. ['faq/**', 'terms.md']); empty: all files."
    ),
]
Refresh = Annotated[
    bool,
    Field(
        description="First bring the index up to date with the documents folder (an incremental "
        "build: new, changed and removed files; unchanged ones keep their vectors). With nothing "
        "changed it writes nothing; use it when `stale` lists files."
    ),
]
Where = Annotated[
    str | tuple[str, ...],
    Field(
        description="Search only files whose front matter meets all these conditions, FIELD OP VALUE "
        "with OP one of = != < <= > >= (e.g. ['type=umowa', 'year>=2024', 'tags=faq']: a list field "
        "matches when one item does); `index_info` lists the fields. Empty: no condition."
    ),
]
Source = Annotated[str, Field(description="The file, as `source` in a search hit.")]
Section = Annotated[
    str | None,
    Field(
        description="A heading path, as `section` in a search hit: that whole section, subsections included."
    ),
]
StartLine = Annotated[int | None, Field(ge=1, description="First line wanted (1-based)."), NOT_BOOLEAN]
EndLine = Annotated[int | None, Field(ge=1, description="Last line wanted (inclusive)."), NOT_BOOLEAN]
