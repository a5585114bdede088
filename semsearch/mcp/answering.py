"""The SDK's MCP server, answering every request, each error in one bounded line.

- A tool refuses arguments it does not take (the SDK drops them in silence) and says in one
  line what is wrong with an argument (``arguments``); no error echoes a long argument whole
  (a 1 MB argument, 20,000 paths: at most ``LONGEST_ERROR`` characters, arguments cut short).
- Every line a client sends over stdio gets an answer. The SDK's stdio reader hands a line it
  cannot read as a JSON-RPC message to the server as an exception (not JSON, a lone surrogate
  escape ``"\\ud800"`` its parser refuses even in a ``tools/list``, an object that is no
  request), and the server logs it and drops it: no reply at all, and the client waits forever
  (issue 39). ``AnsweringStream`` stands between the two and answers such a line at once with a
  JSON-RPC error: -32700 (parse error) for a line the SDK cannot parse, -32600 (invalid
  request) for JSON that is no message; with the request's id when Python's own JSON reader
  (which takes a lone surrogate) finds one, else ``null``. The answer quotes nothing of the line.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from semsearch.mcp.arguments import argument_problems, unknown_arguments
from semsearch.util.printable import quoted

LONGEST_ERROR = 2000
"""The most characters of a tool error's message (a message quoting a 1 MB argument is cut)."""


def error_reply(problem: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the SDK's reader could not read (``problem``)."""
    details = problem.errors() if isinstance(problem, ValidationError) else []
    first = details[0] if details else {}
    raw = first.get("input")
    if first.get("type") == "json_invalid":
        parsed = _leniently_parsed(raw if isinstance(raw, str) else "")
        code, said = types.PARSE_ERROR, "Parse error: the line is not JSON the server can read"
        if parsed is not None:  # JSON to Python, not to the SDK: a lone surrogate (\ud800)
            said = (
                "Parse error: the message holds a lone surrogate (\\ud800-\\udfff), which is no Unicode text"
            )
    else:
        parsed = raw
        code, said = (
            types.INVALID_REQUEST,
            "Invalid request: not a JSON-RPC 2.0 request, notification or response",
        )
    error = types.ErrorData(code=code, message=said)
    return types.JSONRPCError(jsonrpc="2.0", id=_request_id(parsed), error=error)


def _leniently_parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _request_id(message: Any) -> str | int | None:
    """The ``id`` of a message, when it is one a reply can carry (a string or an integer)."""
    found = message.get("id") if isinstance(message, dict) else None
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    if isinstance(found, str) and not _encodes(found):
        return None
    return found


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class AnsweringStream:
    """The SDK's read stream, less the lines it could not read: each is answered on
    ``write_stream`` (see the module docstring), and the server sees only messages."""

    def __init__(self, inner: Any, write_stream: Any):
        self.inner, self.write_stream = inner, write_stream

    @property
    def last_context(self) -> Any:
        """The sender's context the SDK's stream carries for the last message, if any."""
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while isinstance(item := await self.inner.receive(), Exception):
            await self.write_stream.send(SessionMessage(error_reply(item)))
        return item

    def __aiter__(self) -> AnsweringStream:
        return self

    async def __anext__(self) -> SessionMessage:
        while isinstance(item := await self.inner.__anext__(), Exception):
            await self.write_stream.send(SessionMessage(error_reply(item)))
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> AnsweringStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()


class AnsweringServer(MCPServer):
    """The SDK's server, but a tool refuses arguments it does not take (the SDK drops them in
    silence) and says in one line what is wrong with an argument (the SDK passes on pydantic's
    multi-line report). The SDK has no hook for that message: ``call_tool``, which serves every
    ``tools/call``, is documented to raise ``ToolError`` for arguments that fail validation, with
    the ``ValidationError`` as its cause, and that error is reworded here."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        """The tool's result; a tool error's message at most ``LONGEST_ERROR`` characters (a
        1 MB argument is never echoed back whole)."""
        try:
            return await self._checked_call(name, arguments, context)
        except ToolError as exc:
            if len(str(exc)) <= LONGEST_ERROR:
                raise
            raise ToolError(f"{str(exc)[:LONGEST_ERROR]}… (cut: {len(str(exc)):,} characters)") from exc

    async def _checked_call(
        self, name: str, arguments: dict[str, Any], context: Context | None
    ) -> CallToolResult | InputRequiredResult:
        tools = await self.list_tools()
        schema = next((tool.input_schema for tool in tools if tool.name == name), None)
        if schema is None:
            raise ToolError(f"Unknown tool: {quoted(name)} (the tools: {', '.join(t.name for t in tools)})")
        if unknown := unknown_arguments(arguments, schema):
            raise ToolError(f"Error executing tool {name}: {unknown}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = argument_problems(exc.__cause__, arguments, schema)
            raise ToolError(f"Error executing tool {name}: {problems}") from exc.__cause__

    async def run_stdio_async(self) -> None:
        """The SDK's stdio serving, but every line the client sends is answered: one the SDK
        cannot read gets a JSON-RPC error (``AnsweringStream``), not silence."""
        from mcp.server.stdio import stdio_server

        lowlevel = self._lowlevel_server
        async with stdio_server() as (read_stream, write_stream):
            answering = AnsweringStream(read_stream, write_stream)
            await lowlevel.run(answering, write_stream, lowlevel.create_initialization_options())
