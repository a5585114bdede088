"""The command line's checks of option values and combinations: what cannot work is a usage
error (exit 2) naming the option given, before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from semsearch.cli.render import terminal as render

if TYPE_CHECKING:
    from semsearch.retrieve.filters import Condition


DocsArgument = Annotated[
    Path | None,
    typer.Argument(
        help="Folder of Markdown files (default: the one the index records, else docs).",
        show_default=False,
        metavar="DOCS",
    ),
]
"""The documents folder of ``build`` and ``watch``."""


def verbosity(quiet: bool, verbose: bool) -> render.Notes:
    """Where the command's notes go (``--quiet``: nowhere); ``--verbose`` with it is an error."""
    if quiet and verbose:
        raise typer.BadParameter("--quiet and --verbose exclude each other", param_hint="--quiet")
    return render.Notes(quiet)


def exclusive(*options: tuple[str, bool]) -> None:
    """Output options that cannot be honoured together are a usage error, not a silent choice
    (``--context --json`` is the one pair that works: the prompt as JSON)."""
    given = [name for name, on in options if on]
    allowed = {("--json", "--context")}
    pairs = [(a, b) for i, a in enumerate(given) for b in given[i + 1 :] if (a, b) not in allowed]
    if pairs:
        first, second = pairs[0]
        raise typer.BadParameter(f"{first} and {second} exclude each other", param_hint=first)


def needs_context(ctx: typer.Context, context: bool, *names: str) -> None:
    """Options that shape the --context prompt do nothing without it: given alone, they are a
    usage error that names them (as given on the command line, not by their values)."""
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.name in names and getattr(ctx.get_parameter_source(param.name), "name", "") == "COMMANDLINE"
    ]
    if given and not context:
        verb, pronoun = ("needs", "it shapes") if len(given) == 1 else ("need", "they shape")
        ctx.fail(f"{' and '.join(given)} {verb} --context: {pronoun} the prompt --context prints")


def where_conditions(values: list[str] | None) -> list[Condition]:
    """``--where`` conditions, read before anything else runs: a bad one is a usage error."""
    from semsearch.errors import UsageError
    from semsearch.retrieve.filters import Condition

    try:
        return [Condition.parse(value) for value in values or []]
    except UsageError as exc:
        raise typer.BadParameter(str(exc), param_hint="--where") from None


def positive_numbers(text: str, option: str) -> list[int]:
    try:
        numbers = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        numbers = []
    if not numbers or numbers[0] < 1:
        raise typer.BadParameter(
            f"expected positive whole numbers separated by commas, got {text!r}", param_hint=option
        )
    return numbers


def warn_of_options_in(ctx: typer.Context, words: list[str], notes: render.Notes) -> None:
    """Options written after ``--`` are words of the question: said, as they were likely meant
    as options."""
    found = options_in_question(ctx, words)
    if found:
        one = len(found) == 1
        notes.warning(
            f"{', '.join(found)} after `--` {'is' if one else 'are'} read as part of the question, "
            f"not as {'an option' if one else 'options'}: options go before `--`"
        )


def options_in_question(ctx: typer.Context, words: list[str]) -> list[str]:
    """The words of a question that are one of the command's own options (``-k``, ``--index=x``):
    a word starting with "-" reaches the question only after ``--``, where it is not an option,
    so ``ask -- how to x -k 3`` asks about "-k 3" instead of asking for 3 results."""
    names = set(ctx.help_option_names)
    for param in ctx.command.params:
        names.update(param.opts, param.secondary_opts)
    found = []
    for word in (part for text in words for part in text.split()):
        name = word.split("=", 1)[0] if word.startswith("--") else word
        if name in names and name.startswith("-") and name not in found:
            found.append(name)
    return found
