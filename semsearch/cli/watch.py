"""``semsearch watch``: an index kept up to date while its documents change (the ``watch`` extra,
the ``watchfiles`` library: the system's own change events, inotify on Linux, no polling).

It builds as ``semsearch build`` does (the settings the index records), then again after each
burst of changes to a Markdown file or ``.semsearchignore`` under the documents folder, or to a
folder in it (``mv docs/sub docs/sub2``, a folder moved in or out: one event for the folder,
none for the files in it): unchanged files keep their vectors, so a rebuild costs the changed
files. Other files start nothing, nor do the index's own writes (its folder, lock and journal,
never inside the documents folder). The system's events follow the folder watched, not its
path: once a second the path is checked to still be that folder, and when it is gone or another
folder took its place (``mv docs docs.old; mv docs.new docs``) ``watch`` says so, rebuilds from
what is at the path when a folder is there again, and watches that (issue 39: it had gone on
watching the old folder, silently). Ctrl-C stops it (exit 130), as it stops a build.
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


CHECK_MS = 1000
"""How often the documents folder's path is checked to still be the folder watched."""


def _documents(location: object, folders: set[Path]):
    """The events worth a rebuild: Markdown files and ignore files, and folders (one there now,
    or one of ``folders``, those under the documents folder at the last build: moved away or
    removed), nothing of the index's (a folder's; an index in PostgreSQL writes no file)."""
    from semsearch.ingest.ignorefile import IGNORE_FILE
    from semsearch.ingest.sources import MARKDOWN_SUFFIXES

    index = location.absolute() if isinstance(location, Path) else None

    def wanted(change: object, path: str) -> bool:
        where = Path(path)
        if index is not None and (
            where.name.startswith(f".{index.name}.") or index in where.parents or where == index
        ):
            return False
        if where.suffix.lower() in MARKDOWN_SUFFIXES or where.name == IGNORE_FILE:
            return True
        return where in folders or (where.is_dir() and not where.is_symlink())

    return wanted


def _folders(docs: Path) -> set[Path]:
    """The folders under ``docs`` (not hidden, symlinks not followed), absolute."""
    import os

    found = set()
    for current, dirs, _ in os.walk(docs):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        found.update(Path(current).absolute() / name for name in dirs)
    return found


def _identity(folder: Path) -> tuple[int, int] | None:
    """Which folder is at the path now (device and inode); None when none is."""
    try:
        found = folder.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if folder.is_dir() else None


def _watch_until_moved(folder: Path, index: object, rebuild, rebuild_first: bool = False) -> str:
    """Rebuild after each burst of changes in the folder at ``folder`` until that path is no
    longer that folder: then "removed" or "replaced". ``rebuild_first``: once the system
    watches the folder (a change made meanwhile is not missed), before any change."""
    import watchfiles

    identity = _identity(folder)
    folders = _folders(folder)
    changes = watchfiles.watch(
        folder,
        watch_filter=_documents(index, folders),
        debounce=QUIET_MS,
        rust_timeout=CHECK_MS,
        yield_on_timeout=True,
        raise_interrupt=True,
    )
    if rebuild_first:
        next(changes)  # the watch has started: what the build does not see, it will
        rebuild()
    for changed in changes:
        now = _identity(folder)
        if now != identity:
            return "removed" if now is None else "replaced"
        if changed:
            rebuild()
            folders.clear()
            folders.update(_folders(folder))
    return "removed"


def _wait_for(folder: Path) -> None:
    """Until a folder is at ``folder`` again."""
    import time

    while _identity(folder) is None:
        time.sleep(CHECK_MS / 1000)


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
    from semsearch.cli.render.build import watched_folder
    from semsearch.errors import UsageError
    from semsearch.store.location import parse_location
    from semsearch.store.stores import open_store

    try:
        import watchfiles  # noqa: F401 - here: its absence is a usage error before the first build
    except ImportError as exc:
        raise UsageError("semsearch watch needs the watch extra: pip install 'semsearch[watch]'") from exc
    build = _build_command()
    options = {"model": None, "max_tokens": None, "full": False, "exclude": None, "dry_run": False}
    build(docs=docs, index=index, **options, as_json=False, quiet=quiet, verbose=False)
    location = parse_location(index)
    built = open_store(location).peek_meta()
    folder = Path(built.docs_root) if built is not None else docs

    def rebuild() -> None:
        build(docs=folder, index=index, **options, as_json=False, quiet=quiet, verbose=False)

    moved = False
    while True:
        state = _watch_until_moved(folder, location, rebuild, rebuild_first=moved)
        watched_folder(folder, state)
        if state == "removed":
            _wait_for(folder)
            watched_folder(folder, "back")
        moved = True
