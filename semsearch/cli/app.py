"""The command line's application object and the one place where errors become a one-line
message and an exit code (1 is kept for "no answer"); the commands are in ``cli``."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Annotated

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from semsearch.cli.render import terminal as render
from semsearch.errors import SemsearchError, path_problem

EXIT_NO_ANSWER = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
"""128 + SIGTERM, as a shell reports a process that ``kill`` ended."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a CI timeout, a service manager) met by a build: raised where the build
    is, as Ctrl-C's interrupt is, so that it keeps its journal and releases its lock."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within: SIGTERM raises ``Terminated`` (by default it ends the process at once, leaving
    the build's lock file behind and saying nothing)."""
    import signal  # here: a few milliseconds that only a build pays

    def terminated(signum: int, frame: object) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread (a library caller's worker): left as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def standard_streams() -> None:
    """Before any command: a standard stream the shell closed (``semsearch ask q >&-``) is
    /dev/null, so that its file descriptor can never become a file the command opens, and
    output to it goes nowhere as to a reader that went away (the exit code still says whether
    there was an answer). Characters the output's encoding cannot hold (``PYTHONIOENCODING=ascii``)
    are written as ``\\uXXXX`` escapes instead of failing the command."""
    import sys

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        stream = getattr(sys, name)
        if stream is None:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            stream = open(fd, mode, encoding="utf-8", closefd=False)  # noqa: SIM115 - for the process
            setattr(sys, name, stream)
        if mode == "w" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


LEAVE_AT_ONCE = frozenset({"ask", "info"})
"""Commands that leave nothing for the interpreter's shutdown to do once they have finished:
each closed its index (and, for ``ask --refresh``, its build wrote, swapped and unlocked the
index before the search) and flushed its output, so the process may end at once (``Finished``)."""


class Finished(SystemExit):
    """The exit code of a command of ``LEAVE_AT_ONCE`` that ran to its end (an answer, none, or
    its ``--help``). Caught as any ``SystemExit`` in process (``CliRunner``); the console script
    ends the process with it at once (``leave``)."""


def leave(code: int) -> None:
    """End the process now, with ``code``, skipping the interpreter's shutdown: its collections
    and finalizers cost a cold ``ask`` ~10% of its CPU (``bench/bench_cold.py``) and have nothing
    left to do. Only the standard streams are flushed (a reader gone away changes nothing)."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe, a full disk: nothing more can be said
            stream.flush()
    os._exit(code)


class _Group(TyperGroup):
    """The one place where errors become a one-line message and an exit code (1 is kept for
    "no answer"); an unexpected exception is a bug, reported in one line too."""

    finished: str | None = None
    """The command that ran to its end (or printed its help), if one did."""

    def main(self, *args, **kwargs):
        """Usage errors as one line with Click's own suggestion, not a boxed panel."""
        kwargs.pop("standalone_mode", None)
        _completion(args[0] if args else kwargs.get("args"))
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except TyperException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `semsearch`: the help is printed
                raise SystemExit(exc.exit_code) from None
            where = exc.ctx.command_path if getattr(exc, "ctx", None) else "semsearch"
            given = args[0] if args else kwargs.get("args")
            message = " ".join(exc.format_message().split()) + _dash_hint(exc, where, given)
            render.error(f"{message} (see `{where} --help`)")
            raise SystemExit(exc.exit_code) from None
        except typer.Abort:
            render.error("interrupted")
            raise SystemExit(EXIT_INTERRUPTED) from None
        except SystemExit as exc:
            # Outside the commands (help, --version), a closed pipe ends in Click's or Rich's
            # sys.exit(1), which means "no answer" here: the reader had what it wanted.
            if exc.code == EXIT_NO_ANSWER:
                render.silence_stdout()
                raise SystemExit(0) from None
            raise
        except BrokenPipeError:
            render.silence_stdout()
            raise SystemExit(0) from None
        except OSError as exc:
            if not _output_failed(exc):
                raise
            raise SystemExit(EXIT_ERROR) from None
        code = code if isinstance(code, int) else 0
        raise (Finished if self.finished in LEAVE_AT_ONCE else SystemExit)(code)

    def invoke(self, ctx):
        try:
            try:
                result = super().invoke(ctx)
            finally:
                render.flush_stdout()
            self.finished = ctx.invoked_subcommand
            return result
        except typer.Exit as exc:
            if exc.exit_code in (0, EXIT_NO_ANSWER):  # an answer, none, or a command's --help
                self.finished = ctx.invoked_subcommand
            raise
        except typer.Abort:
            raise
        except TyperException as exc:  # usage errors: Typer's own message, the command's --help
            self._name_the_command(exc, ctx)
            raise
        except BrokenPipeError:  # the reader stopped reading (`| head -1`): it had what it wanted
            render.silence_stdout()
            return None
        except SemsearchError as exc:
            from semsearch import hints  # here: only an error needs it

            render.error(hints.message(exc))
        except OSError as exc:
            if problem := path_problem(exc):
                render.error(problem)
            elif not _output_failed(exc):
                _unexpected(exc)
        except Terminated:
            render.error("terminated")
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            render.error("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            _unexpected(exc)
        raise typer.Exit(EXIT_ERROR)

    def _name_the_command(self, exc: TyperException, ctx: typer.Context) -> None:
        """A usage error met parsing a command's options (``ask x --index`` with no value) has
        no context of its own: give it the command's, so its hint is `semsearch ask --help`."""
        name = ctx.invoked_subcommand
        command = self.get_command(ctx, name) if name else None
        if command is not None and getattr(exc, "ctx", None) is None:
            exc.ctx = typer.Context(command, info_name=name, parent=ctx)


def _completion(args: Sequence[str] | None) -> None:
    """``--install-completion [SHELL]`` and ``--show-completion [SHELL]`` (``cli_completion``):
    done, or refused in one line, before Typer would read the flags."""
    import sys

    from semsearch.cli import completion as cli_completion

    request = cli_completion.requested(sys.argv[1:] if args is None else list(args))
    if request is None:
        return
    try:
        cli_completion.complete(*request)
    except SemsearchError as exc:
        render.error(str(exc))
        raise SystemExit(EXIT_ERROR) from None
    except BrokenPipeError:  # --show-completion | head
        render.silence_stdout()
        raise SystemExit(0) from None
    except OSError as exc:  # a home folder that cannot be written
        render.error(f"cannot install completion: {exc.strerror}: {exc.filename}")
        raise SystemExit(EXIT_ERROR) from None
    render.flush_stdout()
    raise SystemExit(0)


def _dash_hint(exc: TyperException, where: str, given: Sequence[str] | None) -> str:
    """An unknown option given to ``ask`` may be the start of a question (``ask "--reload"``,
    ``ask "-5 stopni"``, ``ask -q Was ist das``): how to ask it, after ``--``; nothing for other
    errors and commands. ``given``: the command line's arguments (None: ``sys.argv``'s)."""
    import shlex
    import sys

    option = getattr(exc, "option_name", None)
    if type(exc).__name__ != "NoSuchOption" or not option or not where.endswith(" ask"):
        return ""
    words = _question_from(list(sys.argv[1:] if given is None else given), exc) or [option]
    return (
        f'; a question that starts with "-" goes after `--`: {where} -- {" ".join(map(shlex.quote, words))}'
    )


def _question_from(arguments: list[str], exc: TyperException) -> list[str]:
    """The words of the command line from the first that starts with "-" and is no option of the
    command, up to the next that starts with "-" (the question as typed, quoted or not)."""
    command = exc.ctx.command if getattr(exc, "ctx", None) else None
    known = {
        name for param in (command.params if command else []) for name in (*param.opts, *param.secondary_opts)
    }
    for start, argument in enumerate(arguments):
        if argument == "--":
            break
        if argument.startswith("-") and argument.split("=", 1)[0] not in known:
            end = next(
                (i for i in range(start + 1, len(arguments)) if arguments[i].startswith("-")), len(arguments)
            )
            return arguments[start:end]
    return []


_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EPIPE}


def _output_failed(exc: OSError) -> bool:
    """stdout on a full disk or a dead terminal is not a bug: said in one line (True); any other
    OSError is left to the caller (False)."""
    if exc.filename is not None or exc.errno not in _OUTPUT_ERRNOS:
        return False
    render.silence_stdout()  # what stays buffered would fail again at exit
    render.error(f"cannot write the output: {exc.strerror}")
    return True


def _unexpected(exc: Exception) -> None:
    """An exception semsearch did not expect is a bug: one line (the traceback on request)."""
    if os.environ.get("SEMSEARCH_DEBUG"):
        raise exc
    render.error(
        f"unexpected {type(exc).__name__}: {exc} (a bug in semsearch; SEMSEARCH_DEBUG=1 shows the traceback)"
    )


app = typer.Typer(
    cls=_Group,
    help="Semantic search over a folder of Markdown files, offline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from semsearch import __version__

        print(f"semsearch {__version__}")
        render.flush_stdout()  # a closed pipe met now, not at interpreter exit
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Semantic search over a folder of Markdown files, offline."""
