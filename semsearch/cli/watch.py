"""``semsearch watch``: an index kept up to date while its documents change (the ``watch`` extra,
the ``watchfiles`` library: the system's own change events, inotify on Linux, no polling).

It builds as ``semsearch build`` does (the settings the index records), then again after each
burst of changes to a Markdown file or ``.semsearchignore`` under the documents folder: unchanged
files keep their vectors, so a rebuild costs the changed files. Other files start nothing, nor
do the index's own writes (its folder, lock and journal, never inside the documents folder).
Ctrl-C stops it (exit 130), as it stops a build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from semsearch.cli.app import app
from semsearch.cli.examples import epilog
from semsearch.cli.options import DocsArgument

QUIET_MS = 500
"""A change is acted on once the folder has been quiet this long (an editor's save is a few
events; a `git checkout` many)."""


def _documents(location: object):
    """The events worth a rebuild: Markdown files and ignore files, nothing of the index's (a
    folder's; an index in PostgreSQL writes no file)."""
    from semsearch.ingest.sources import IGNORE_FILE, MARKDOWN_SUFFIXES

    index = location.absolute() if isinstance(location, Path) else None

    def wanted(change: object, path: str) -> bool:
        where = Path(path)
        if index is not None and (
            where.name.startswith(f".{index.name}.") or index in where.parents or where == index
        ):
            return False
        return where.suffix.lower() in MARKDOWN_SUFFIXES or where.name == IGNORE_FILE

    return wanted


def _build_command():
    """``semsearch build``'s own function, as the app registered it (not imported: the command
    module imports this one)."""
    return next(c.callback for c in app.registered_commands if c.callback and c.callback.__name__ == "build")


@app.command(epilog=epilog("watch"))
def watch(
    docs: DocsArgument = None,
    index: Annotated[
        str,
        typer.Option(
            "--index", envvar="SEMSEARCH_INDEX", help="Index folder or postgresql:// URL (default: index)."
        ),
    ] = "index",
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only errors and the summaries.")
    ] = False,
) -> None:
    """Keep the index up to date while the Markdown files under DOCS change.

    A build now, then another whenever a file changes (unchanged files keep their vectors);
    Ctrl-C stops. Needs the watch extra (watchfiles)."""
    from semsearch.errors import UsageError
    from semsearch.store.location import parse_location
    from semsearch.store.stores import open_store

    try:
        import watchfiles
    except ImportError as exc:
        raise UsageError("semsearch watch needs the watch extra: pip install 'semsearch[watch]'") from exc
    build = _build_command()
    options = {"model": None, "max_tokens": None, "full": False, "exclude": None, "dry_run": False}
    build(docs=docs, index=index, **options, as_json=False, quiet=quiet, verbose=False)
    location = parse_location(index)
    built = open_store(location).peek_meta()
    folder = Path(built.docs_root) if built is not None else docs
    changes = watchfiles.watch(
        folder, watch_filter=_documents(location), debounce=QUIET_MS, raise_interrupt=True
    )
    for _ in changes:
        build(docs=folder, index=index, **options, as_json=False, quiet=quiet, verbose=False)
