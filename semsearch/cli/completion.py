"""``semsearch --install-completion [SHELL]`` and ``--show-completion [SHELL]``.

Typer's own flags take no shell name: ``semsearch --install-completion nosuchshell`` installed
completion for the shell it ran in and edited ``~/.bashrc``, and an unsupported shell was said on
stdout with exit 1 ("no answer" here). So a word after either flag is read here as the shell: a
supported one is used, anything else refused (a usage error, exit 2, nothing written), and so is
an unsupported shell detected when none is named. The work itself is Typer's.
"""

from __future__ import annotations

from collections.abc import Sequence

from semsearch.errors import UsageError

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
"""What Typer writes completion for."""
FLAGS = ("--install-completion", "--show-completion")
PROG = "semsearch"
COMPLETE_VAR = "_SEMSEARCH_COMPLETE"


def requested(args: Sequence[str]) -> tuple[str, str | None] | None:
    """The flag and the shell named after it (None: none named) when ``args`` start with one
    of ``FLAGS`` (``--install-completion zsh`` or ``--install-completion=zsh``); else None."""
    if not args:
        return None
    flag, equals, named = args[0].partition("=")
    if flag not in FLAGS:
        return None
    if equals:
        return flag, named
    return flag, args[1] if len(args) > 1 and not args[1].startswith("-") else None


def complete(flag: str, named: str | None) -> None:
    """Install or print the completion script for ``named`` (else the detected shell), or raise
    ``UsageError`` for a shell Typer has no completion for."""
    from typer._completion_shared import _get_shell_name, get_completion_script, install

    shell = named if named is not None else _get_shell_name()
    if shell not in SHELLS:
        said = f"unknown shell {named!r}" if named is not None else f"no completion for this shell ({shell})"
        raise UsageError(f"{flag}: {said}; name one of {', '.join(SHELLS)}")
    if flag == "--show-completion":
        print(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell))
        return
    shell, path = install(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
    print(f"{shell} completion installed in {path}; it takes effect in a new terminal")
