"""One MCP server's connection: started once, called synchronously, restarted once when it died.

The official ``mcp`` SDK is async; every server's session runs as one task
on a shared event loop in a daemon thread (:func:`_loop`), and the agent's
tool calls wait on it from their own thread. A server is closed by
:meth:`Server.close` and, for those still open, at interpreter exit. This
module imports nothing from Jupyter; it imports ``mcp`` only when a server
starts.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import re
import shlex
import sys
import tempfile
import threading
import urllib.parse
import weakref
from typing import Any

from ..errors import DurableError
from ..models.failures import env_secrets

HANDSHAKE_SECONDS = 20.0  # spawn to the end of list_tools; the time server needs under a second
CLOSE_SECONDS = 5.0
SECRET = re.compile(r"(token|key|secret|password|passwd|pwd|auth|credential|bearer)", re.IGNORECASE)
MASK = "***"
_HEADER = re.compile(r"([A-Za-z0-9_-]+\s*:\s*)\S")  # "Authorization: Bearer ..." (an -H/--header value)
_SCHEME = re.compile(r"((?:bearer|basic|token)\s+)\S", re.IGNORECASE)  # "Bearer <token>" on its own


class McpError(DurableError):
    """An MCP server that cannot be started or reached (one line naming the server)."""


def _missing() -> McpError:
    return McpError("MCP tools need the mcp package: pip install 'durable_nb[mcp]'")


class Server:
    """A connection to one MCP server, from a command (stdio) or a URL (streamable HTTP).

    :meth:`start` spawns or connects, runs the handshake and lists the
    tools (raises :class:`McpError`, one line, when the command does not
    exist, exits at once, or the server does not answer within
    :data:`HANDSHAKE_SECONDS`). :meth:`call` restarts a server whose output
    ended since the last call (one line on stderr) before calling it.
    """

    def __init__(self, argv: list[str] | None, url: str | None, env: dict[str, str] | None) -> None:
        self.argv, self.url, self.env = argv, url, dict(env or {})
        self.where = masked_command(argv, self.env) if argv else masked_url(url or "")
        self.info: dict[str, str] = {}  # the handshake's serverInfo: name, version
        self.tools: list[Any] = []  # mcp.types.Tool, as listed at the first start
        self.restarts = 0
        self._session: Any = None
        self._dead = True
        self._stop: asyncio.Event | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._errlog: Any = None

    def provenance(self) -> dict[str, Any]:
        """Return what a call's entries record of this server: its name and version, and the command or URL
        (secrets masked; env values never)."""
        out: dict[str, Any] = {"server": self.info.get("name", ""), "version": self.info.get("version", "")}
        out["command" if self.argv else "url"] = self.where
        return out

    def start(self) -> None:
        """Start the server and list its tools (blocks; raises :class:`McpError`). Cost: a process spawn
        and two round trips (under a second for ``mcp-server-time``)."""
        try:
            import mcp  # noqa: F401
        except ImportError:
            raise _missing() from None
        ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._task = asyncio.run_coroutine_threadsafe(self._serve(ready), _loop())
        try:
            init, listed = ready.result(HANDSHAKE_SECONDS + CLOSE_SECONDS)
        except concurrent.futures.TimeoutError:
            self.close()
            raise McpError(
                f"the MCP server {self.where} did not answer the handshake in {HANDSHAKE_SECONDS:g} s"
            ) from None
        except McpError:
            raise
        except BaseException as e:
            why = self._why(e)  # before close(), which drops the server's stderr
            self.close()
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise McpError(why) from None
        self.info = {"name": init.server_info.name, "version": init.server_info.version}
        if not self.tools:
            self.tools = list(listed.tools)
        _open.add(self)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call tool ``name``; return the SDK's ``CallToolResult``. Blocks until it answers.

        A server that died since the last call is restarted first (once, one
        line on stderr). Raises :class:`McpError` when it cannot be restarted
        or dies during the call (with its last stderr line, secrets masked;
        the next call restarts it). A
        ``KeyboardInterrupt`` while waiting cancels the request and propagates.
        """
        if self._dead:
            self.close()
            print(f"durable: the MCP server {self._label()} had stopped; restarting it", file=sys.stderr)
            self.restarts += 1
            self.start()
        fut = asyncio.run_coroutine_threadsafe(self._session.call_tool(name, arguments), _loop())
        try:
            return fut.result()
        except KeyboardInterrupt:
            fut.cancel()
            raise
        except Exception as e:  # noqa: BLE001 - the SDK raises its own errors and the transport's
            if self._dead:
                last = self._last_stderr_line()
                said = f"; its last stderr line: {last}" if last else ""
                raise McpError(f"the MCP server {self._label()} died during the call ({_one_line(e)}){said}") from None
            raise McpError(f"the MCP server {self._label()} failed: {_one_line(e)}") from None

    def close(self) -> None:
        """Stop the server (its process ends with its stdin); a closed server is left alone. Waits up to
        :data:`CLOSE_SECONDS`."""
        _open.discard(self)
        task, stop = self._task, self._stop
        self._task, self._stop, self._session, self._dead = None, None, None, True
        if task is not None and not task.done():
            if stop is not None:
                _loop().call_soon_threadsafe(stop.set)
            else:
                task.cancel()
            try:
                task.result(CLOSE_SECONDS)
            except BaseException:  # noqa: BLE001, S110 - closing: whatever it ended with is not the caller's
                pass
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    async def _serve(self, ready: concurrent.futures.Future[Any]) -> None:
        """The server's whole session, as one task: transport, relay, handshake, then wait to be stopped."""
        import anyio
        from mcp import ClientSession

        self._stop = asyncio.Event()
        try:
            async with self._transport() as streams:
                read, write = streams[0], streams[1]
                send, recv = anyio.create_memory_object_stream[Any](64)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._relay, read, send)
                    async with ClientSession(recv, write) as session:
                        with anyio.fail_after(HANDSHAKE_SECONDS):
                            init = await session.initialize()
                            listed = await session.list_tools()
                        self._session, self._dead = session, False
                        ready.set_result((init, listed))
                        await self._stop.wait()
                    tg.cancel_scope.cancel()
        except BaseException as e:  # noqa: BLE001 - handed to start()'s thread
            self._dead = True
            if not ready.done():
                ready.set_exception(_leaf(e))

    async def _relay(self, read: Any, send: Any) -> None:
        """Pass the server's messages on to the session; when its output ends, mark the server dead."""
        async with send:
            async for message in read:
                await send.send(message)
        self._dead = True

    def _transport(self) -> Any:
        if self.argv:
            from mcp import StdioServerParameters
            from mcp.client.stdio import get_default_environment, stdio_client

            env = {**get_default_environment(), **self.env}
            params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=env)
            return stdio_client(params, errlog=self._errlog)
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(self.url or "")

    def _why(self, e: BaseException) -> str:
        """One line for a start that failed: the missing command, the server's last stderr line, or the error."""
        if isinstance(e, FileNotFoundError) and self.argv:
            return f"cannot start the MCP server {self.where}: command not found: {self.argv[0]}"
        if isinstance(e, TimeoutError):
            return f"the MCP server {self.where} did not answer the handshake in {HANDSHAKE_SECONDS:g} s"
        last = self._last_stderr_line()
        if last:
            return f"the MCP server {self.where} exited: {last}"
        return f"cannot start the MCP server {self.where}: {_one_line(e)}"

    def _last_stderr_line(self) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.seek(0)
            lines = [x.strip() for x in self._errlog.read().splitlines() if x.strip()]
        except (OSError, ValueError):
            return ""
        return _redact(lines[-1], self.env)[:300] if lines else ""

    def _label(self) -> str:
        return self.info.get("name") or self.where


def masked_command(argv: list[str], env: dict[str, str]) -> str:
    """Return ``argv`` as a shell line with secrets masked: the value after a ``--token``-like flag, of
    ``--api-key=…`` / ``TOKEN=…``, of a header argument ``Authorization: …`` / ``X-API-Key: …`` (as
    ``--header`` / ``-H`` take them), the token after ``Bearer`` / ``Basic`` / ``Token``, URLs' user info
    and secret query values, and any env value it holds."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        name, eq, _ = arg.partition("=")
        if eq and SECRET.search(name) and "://" not in name:
            out.append(f"{name}={MASK}")
        elif arg.startswith("-") and SECRET.search(arg):
            out.append(arg)
            hide_next = True
        elif "://" in arg:
            out.append(masked_url(arg))
        elif (m := _HEADER.match(arg)) and SECRET.search(m.group(1)) or (m := _SCHEME.match(arg)):
            out.append(m.group(1) + MASK)
        else:
            out.append(arg)
    return _redact(shlex.join(out), env)


def masked_url(url: str) -> str:
    """Return ``url`` without its password (a user alone, often a token, is masked too) and with the
    values of secret-looking query parameters masked."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        host = netloc.rpartition("@")[2]
        netloc = (f"{parts.username}:{MASK}@" if parts.password is not None else f"{MASK}@") + host
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    q = urllib.parse.urlencode([(k, MASK if SECRET.search(k) else v) for k, v in query], safe="*")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, q, parts.fragment))


def _redact(text: str, env: dict[str, str]) -> str:
    """Return ``text`` with the server's env values and this process's secret env values masked."""
    for value in [*env.values(), *env_secrets()]:
        if len(value) >= 4:
            text = text.replace(value, MASK)
    return text


def _leaf(e: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: what anyio's task groups wrap."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(_leaf(e)).split())
    return msg or type(_leaf(e)).__name__


_open: weakref.WeakSet[Server] = weakref.WeakSet()
_state: dict[str, asyncio.AbstractEventLoop] = {}
_lock = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    """The event loop every server's session runs on (started once, in a daemon thread)."""
    with _lock:
        loop = _state.get("loop")
        if loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="durable-mcp", daemon=True).start()
            _state["loop"] = loop
        return loop


@atexit.register
def _close_all() -> None:
    for server in list(_open):
        server.close()
