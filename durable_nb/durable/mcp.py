"""Tools from MCP servers: ``durable.mcp_tools("python -m mcp_server_time")`` for ``Agent(tools=…)``.

Each server tool is a :class:`McpTool`: its schema is the server's, the
model's arguments are checked against it (``jsonschema``) before the call,
the result becomes blocks (text, images, structured content as JSON when
there is no text, resource links as text) and ``isError`` an ``is_error``
result. The result's entry records, under ``"mcp"``, the server's name and
version, its command or URL (secrets masked), the approval and the call's
duration; the call's entry records the server. This module imports nothing
from Jupyter.
"""

from __future__ import annotations

import base64
import builtins
import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import ai
from .mcp_server import McpError, Server
from .tools import NAME, Tool, ToolArgumentsError, ToolOutput, error_text, storable

Approve = str | Callable[[ai.ToolCall], bool] | None
REFUSED = "refused by the user"


class McpTools(list[Tool]):
    """The tools of one MCP server (a list: pass it as ``tools=`` or add it to ``agent.tools``).

    ``server`` is the connection; :meth:`close` stops the server (also done
    at interpreter exit). ``refused`` lists one line per server tool that
    could not be offered (a bad name or a schema that is not JSON Schema).
    """

    def __init__(self, server: Server, tools: list[Tool], refused: list[str]) -> None:
        super().__init__(tools)
        self.server = server
        self.refused = refused

    def close(self) -> None:
        """Stop the server; calling a tool afterwards restarts it."""
        self.server.close()

    def __repr__(self) -> str:
        return f"<durable.McpTools {self.server._label()}: {', '.join(t.name for t in self)}>"


def mcp_tools(
    command: str | Sequence[str] | None = None,
    *,
    url: str | None = None,
    env: dict[str, str] | None = None,
    name: str | None = None,
    approve: Approve = None,
) -> McpTools:
    """Start an MCP server and return its tools (see :class:`McpTools`); blocks until it lists them.

    ``command`` is a list or a shell-style string (split with ``shlex``) run
    over stdio with ``env`` added to a minimal environment; ``url`` a
    streamable-HTTP endpoint instead. ``name`` labels the server in the
    entries (default: the name it gives in the handshake). ``approve`` is
    ``"always"`` (the default), ``"ask"`` (``input()`` before each call,
    saying which tool runs with which arguments) or a callable ``(call) ->
    bool``. Raises :class:`~durable_nb.durable.mcp_server.McpError` (one
    line) for a missing command, a server that exits at once or does not
    answer, a URL that refuses, or bad options; needs the ``mcp`` extra.
    """
    if (command is None) == (url is None):
        raise McpError("durable.mcp_tools takes a command or url=, exactly one of them")
    _check_approve(approve)
    argv: list[str] | None = None
    if command is not None:
        try:
            argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        except ValueError as e:
            raise McpError(f"cannot read the command {command!r}: {e}") from None
        if not argv:
            raise McpError("durable.mcp_tools: the command is empty")
    server = Server(argv, url, env)
    server.start()
    if name:
        server.info["label"] = name
    tools: list[Tool] = []
    refused: list[str] = []
    for spec in server.tools:
        try:
            tools.append(McpTool(server, spec, approve))
        except McpError as e:
            refused.append(str(e))
            print(f"durable: {e}", file=sys.stderr)
    return McpTools(server, tools, refused)


class McpTool(Tool):
    """One tool of an MCP server, called through its :class:`~durable_nb.durable.mcp_server.Server`."""

    def __init__(self, server: Server, spec: Any, approve: Approve = None) -> None:
        from jsonschema import SchemaError, validators

        if not NAME.match(spec.name):
            raise McpError(f"the MCP tool {spec.name!r} is left out: its name is not a valid tool name")
        schema = dict(spec.input_schema or {"type": "object"})
        try:
            cls = validators.validator_for(schema)
            cls.check_schema(schema)
        except SchemaError as e:
            raise McpError(
                f"the MCP tool {spec.name} is left out: its schema is not JSON Schema ({e.message})"
            ) from None
        self.validator = cls(schema)
        self.fn = self
        self.name = spec.name
        self.description = spec.description or ""
        self.parameters = schema
        self._positional = []
        self.server = server
        self.approve: Approve = approve or "always"

    @property
    def provenance(self) -> dict[str, Any]:
        """What the entries record of the server (see :meth:`Server.provenance`), labelled by ``name=``."""
        out = self.server.provenance()
        if "label" in self.server.info:
            out["name"] = self.server.info["label"]
        return out

    def validate(self, arguments: object) -> dict[str, Any]:
        """Return ``arguments`` when they fit the server's schema; raises :class:`ToolArgumentsError`
        (one line naming each bad argument) otherwise."""
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"the arguments of {self.name} must be a JSON object, not {type(arguments).__name__}"
            )
        errors = sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            parts = [f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message}" for e in errors]
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {'; '.join(parts)}")
        return arguments

    def __call__(self, arguments: object) -> ToolOutput:
        """Validate and call, as :meth:`run_call` does for a call with these arguments."""
        return self.run_call(ai.ToolCall(name=self.name, arguments=self.validate(arguments)))

    def run_call(self, call: ai.ToolCall) -> ToolOutput:
        """Validate ``call``'s arguments, ask for approval, call the server; return the result's blocks.

        Raises :class:`ToolArgumentsError` when the arguments do not fit (no
        call is made). A refusal, an error result, or a server that cannot be
        reached, or a result that cannot be read (an image that is not base64)
        is an ``is_error`` output with the server recorded; ``KeyboardInterrupt``
        propagates.
        """
        arguments = self.validate(call.arguments)
        record = {**self.provenance, "approval": self._decide(call)}
        if record["approval"] == "refused":
            return ToolOutput([ai.Text(REFUSED)], True, {"mcp": record})
        start = time.perf_counter()
        try:
            result = self.server.call(self.name, arguments)
        except Exception as e:  # noqa: BLE001 - the model reads why
            record["duration_ms"] = round((time.perf_counter() - start) * 1000, 3)
            return ToolOutput([ai.Text(error_text(e))], True, {"mcp": record})
        record["duration_ms"] = round((time.perf_counter() - start) * 1000, 3)
        try:
            blocks = result_blocks(result)
        except Exception as e:  # noqa: BLE001 - e.g. an image whose data is not base64: the model reads why
            reason = " ".join(str(e).split()) or type(e).__name__
            why = McpError(f"the MCP server {self.server._label()} sent a result that cannot be read: {reason}")
            return ToolOutput([ai.Text(error_text(why))], True, {"mcp": record})
        return ToolOutput(blocks, bool(result.is_error), {"mcp": record})

    def _decide(self, call: ai.ToolCall) -> str:
        """``"always"``, ``"approved"`` or ``"refused"`` for this call."""
        if self.approve == "always":
            return "always"
        if self.approve == "ask":
            args = json.dumps(call.arguments, ensure_ascii=False)
            answer = builtins.input(f"Run MCP tool {self.name} on {self.provenance['server']} with {args}? [y/N] ")
            return "approved" if answer.strip().lower() in ("y", "yes") else "refused"
        assert callable(self.approve)
        return "approved" if self.approve(call) else "refused"

    def __repr__(self) -> str:
        return f"<durable.McpTool {self.name} on {self.server._label()}>"


def result_blocks(result: Any) -> list[ai.Block]:
    """Return an MCP ``CallToolResult`` as blocks: text as text, images as images, resource links and
    embedded text resources as text, audio and binary resources as a line saying what was left out; the
    structured content as JSON text when no text came with it. O(size of the result)."""
    from mcp import types

    blocks: list[ai.Block] = []
    for c in result.content:
        if isinstance(c, types.TextContent):
            blocks.append(ai.Text(storable(c.text)))
        elif isinstance(c, types.ImageContent):
            blocks.append(ai.Image(base64.b64decode(c.data), c.mime_type))
        elif isinstance(c, types.ResourceLink):
            blocks.append(ai.Text(f"[resource {c.name}: {c.uri}]" + (f" {c.description}" if c.description else "")))
        elif isinstance(c, types.EmbeddedResource) and isinstance(c.resource, types.TextResourceContents):
            blocks.append(ai.Text(storable(c.resource.text)))
        else:
            kind = getattr(c, "type", type(c).__name__)
            mime = getattr(c, "mime_type", None) or getattr(getattr(c, "resource", None), "mime_type", None) or ""
            blocks.append(ai.Text(f"[{kind} {mime} content left out]".replace("  ", " ")))
    if result.structured_content is not None and not any(isinstance(b, ai.Text) for b in blocks):
        blocks.append(ai.Text(json.dumps(result.structured_content, ensure_ascii=False)))
    return blocks or [ai.Text("")]


def provenance_line(record: object) -> str:
    """Return an MCP call's recorded provenance (a call's or a result's ``extra["mcp"]``) as one line, e.g.
    ``clock (mcp-time 1.2.0) · python -m mcp_server_time · 12 ms · approval: always``: the ``name=`` label
    and the server's own name and version, its masked command or URL, the round trip, the approval; what
    is not recorded is left out (``""`` for a record that is not a dict). O(1)."""
    if not isinstance(record, dict):
        return ""
    server, version = str(record.get("server") or ""), str(record.get("version") or "")
    name = str(record.get("name") or server or "MCP server")
    own = " ".join(x for x in (server, version) if x)
    who = f"{name} ({own})" if server and name != server else " ".join(x for x in (name, version) if x)
    ms = record.get("duration_ms")
    parts = [
        who,
        str(record.get("command") or record.get("url") or ""),
        f"{ms:.0f} ms" if isinstance(ms, (int, float)) else "",
        f"approval: {record['approval']}" if record.get("approval") else "",
    ]
    return " · ".join(p for p in parts if p)


def _check_approve(approve: Approve) -> None:
    if approve is None or callable(approve) or approve in ("always", "ask"):
        return
    raise McpError(f"approve must be 'always', 'ask' or a callable (call) -> bool, not {approve!r}")


__all__ = ["REFUSED", "McpError", "McpTool", "McpTools", "mcp_tools", "provenance_line", "result_blocks"]
