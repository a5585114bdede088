"""Text from a user's files made safe to show on a terminal, for every output that is not JSON.

A file name, heading or passage can hold terminal control sequences: ESC and CSI sequences that
clear the screen or move the cursor (forged result lines), OSC sequences that set the window
title or make a hyperlink (OSC 8), a carriage return that overwrites a line, bidirectional
overrides that show ``gnp.exe`` for ``exe.png``. Shown raw, the terminal obeys them. Here each
such character is shown as a visible escape (``\\x1b``, ``\\x9b``, ``\\u202e``), so the sequence is
read, not run: every C0 control (U+0000–U+001F) but the tab and, where the layout needs it, the
line feed; DEL; every C1 control (U+0080–U+009F, the 8-bit CSI and OSC among them); and the
bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). JSON output keeps the
real text (its encoder escapes controls itself).
"""

from __future__ import annotations

import re

_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
"""What is always escaped: the tab (U+0009) and the line feed (U+000A) are not in it."""
_ONE_LINE = re.compile(f"[{_UNSAFE}\n]")
_LINES = re.compile(f"[{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every control and bidi-override character escaped visibly; ``lines``: the
    line feeds stay (a passage, a prompt), else they are escaped too (a name or heading on one
    line of output, where a line feed would forge the next line)."""
    pattern = _LINES if lines else _ONE_LINE
    return pattern.sub(_escape, text) if pattern.search(text) else text


def is_printable(text: str, lines: bool = True) -> bool:
    """True when ``printable`` would leave ``text`` as it is (tests, and callers that check)."""
    return (_LINES if lines else _ONE_LINE).search(text) is None


def safe_line(text: str) -> str:
    """``text`` as one line of terminal output: name bytes that are not UTF-8 shown escaped
    (``readable``), then every control character (``printable``)."""
    return printable(readable(text))


def readable(text: str) -> str:
    """``text`` as JSON files and terminals can hold it: the bytes that are not UTF-8 in a name
    (which ``os.fsdecode`` keeps as lone surrogates) written as ``\\xNN`` (``bad\\xff.md``).

    Unlike U+FFFD, the escapes keep two such names apart (``caf\\xe9.md`` and ``caf\\xe8.md``,
    Latin-1 names), and say which byte is wrong. A name that is valid UTF-8 is left as it is.
    """
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # surrogates that did not come from undecodable bytes
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


_ESCAPED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def unreadable(text: str) -> str:
    """``readable`` undone: each byte it wrote as ``\\xNN`` back as the surrogate that ``os``
    functions turn into that byte, so a name recorded readably (``bad\\xff.md``) opens the file."""
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)


QUOTED_CHARACTERS = 60
"""The most characters of a user's argument an error message quotes."""


def quoted(text: str, most: int = QUOTED_CHARACTERS) -> str:
    """``text`` quoted for an error message (``repr``), cut after ``most`` characters with the
    length said: a 1 MB argument is not echoed back whole."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}… ({len(text):,} characters)"
