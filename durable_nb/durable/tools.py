"""Tools: any Python callable, described to the model by a JSON Schema pydantic derives from it.

``Tool(fn)`` reads ``fn``'s signature and type hints (pydantic builds the
argument model and its JSON Schema) and its docstring (griffe reads the
summary and each parameter's description, in Google, NumPy or Sphinx
style). The model's arguments are validated against that model before
``fn`` runs; an async ``fn`` is awaited. This module imports nothing from
Jupyter.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import re
import threading
import time
import typing
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import TYPE_CHECKING, Any

from .. import ai
from ..errors import DurableError
from ..models.surrogates import escape_surrogates

if TYPE_CHECKING:
    import pydantic

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI and Anthropic accept as a tool name


class ToolError(DurableError):
    """A callable that cannot be a tool (the message names the tool and the parameter)."""


class ToolArgumentsError(DurableError):
    """A model's arguments that do not fit the tool (one line naming each bad argument)."""


@dataclasses.dataclass
class ToolOutput:
    """A tool's result given as blocks: what a tool that is not plain Python returns (MCP tools do).

    ``content`` becomes the result message's content, ``is_error`` its flag,
    and ``extra`` fields stored on it beside the declared ones (its
    provenance, e.g. ``{"mcp": {...}}``).
    """

    content: list[ai.Block]
    is_error: bool = False
    extra: dict[str, Any] | None = None


class Tool:
    """A callable the model may call: its name, description, JSON Schema and the callable.

    ``name`` defaults to ``fn.__name__``, ``description`` to the docstring's
    summary. Raises :class:`ToolError` when ``fn`` is not callable, its name
    is not a valid tool name (``[A-Za-z0-9_-]``, 1–64 characters: pass
    ``name=`` for a lambda), it takes ``*args`` / ``**kwargs``, or a
    parameter's type has no JSON Schema (the error names the parameter).
    Building costs one pydantic model (about a millisecond); :func:`as_tool`
    caches it per callable.
    """

    def __init__(self, fn: Callable[..., Any], name: str | None = None, description: str | None = None) -> None:
        if isinstance(fn, Tool):
            fn = fn.fn  # type: ignore[has-type]  # Tool.fn is set in __init__, below
        if not callable(fn):
            raise ToolError(f"{fn!r} is not callable: a tool is a function (sync or async) or another callable")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        if not NAME.match(self.name):
            raise ToolError(
                f"{self.name!r} is not a valid tool name (letters, digits, _ and -, up to 64): "
                "give it one with durable.Tool(fn, name='...')"
            )
        summary, params_doc = _docstring(fn)
        self.description = summary if description is None else description
        self._positional: list[str] = []
        self.arguments_model = _arguments_model(self.name, fn, params_doc, self._positional)
        self.parameters: dict[str, Any] = _clean(self.arguments_model.model_json_schema())

    def spec(self) -> ai.ToolSpec:
        """Return what the model is told about the tool."""
        return ai.ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: object) -> dict[str, Any]:
        """Return the arguments as keyword arguments for the callable, converted to its types.

        Raises :class:`ToolArgumentsError` (one line naming each bad
        argument) when they do not fit: wrong type, missing, unexpected, or
        not a JSON object at all.
        """
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"the arguments of {self.name} must be a JSON object, not {type(arguments).__name__}"
            )
        import pydantic  # imported when first needed, not with %load_ext

        try:
            parsed = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as e:
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {_one_line(e)}") from None
        return {f.alias or k: getattr(parsed, k) for k, f in type(parsed).model_fields.items()}

    def __call__(self, arguments: object) -> Any:
        """Validate ``arguments`` and call the tool with them; await it if it is async. Returns its value.

        Raises :class:`ToolArgumentsError` before calling when the arguments
        do not fit; whatever the tool raises propagates (the agent turns it
        into an error result). In a thread with a running event loop (a
        Jupyter kernel) a coroutine runs on its own loop in a worker thread;
        an interrupt (``KeyboardInterrupt``) cancels it and propagates.
        """
        kwargs = self.validate(arguments)
        args = [kwargs.pop(p) for p in self._positional]
        out = self.fn(*args, **kwargs)
        if inspect.isawaitable(out):
            out = _await(out)
        return out

    def __repr__(self) -> str:
        return f"<durable.Tool {self.name}>"


_cache: dict[int, tuple[Callable[..., Any], Tool]] = {}


def as_tool(fn: Callable[..., Any] | Tool) -> Tool:
    """Return ``fn`` as a :class:`Tool` (a ``Tool`` is returned as is); built once per callable."""
    if isinstance(fn, Tool):
        return fn
    hit = _cache.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    tool = Tool(fn)
    _cache[id(fn)] = (fn, tool)  # the callable is kept alive with its entry, so its id cannot be reused
    return tool


def as_tools(fns: Iterable[Callable[..., Any] | Tool]) -> list[Tool]:
    """Return the tools for ``fns``, in order; raises :class:`ToolError` for two tools with one name."""
    tools = [as_tool(f) for f in fns]
    seen: set[str] = set()
    for t in tools:
        if t.name in seen:
            raise ToolError(f"two tools are named {t.name!r}: tool names must be unique")
        seen.add(t.name)
    return tools


MAX_RESULT_VALUES = 1_000_000  # values (items, keys) a tool's result may hold before it is refused
MAX_RESULT_SECONDS = 10.0  # time converting a result may take before it is refused


class ToolResultError(DurableError):
    """A tool's return value that cannot become a result (one line saying what to return instead)."""


def result_text(value: Any) -> str:
    """Return a tool's return value as the text the model reads.

    A ``str`` as is; anything else as JSON (pydantic serialises models,
    dataclasses, dates, sets…); what JSON cannot hold falls back to
    ``str()``. Lone surrogates (a non-UTF-8 file name from ``os.listdir``)
    are written as their ``\\udcXX`` escapes, and the text says so
    (:func:`~durable_nb.models.surrogates.escape_surrogates`). Raises
    :class:`ToolResultError` (the agent makes it an ``is_error`` result)
    for an iterator or another iterable without a length anywhere in the
    value (``itertools.count()``, a generator, a file object: it may never
    end), more than :data:`MAX_RESULT_VALUES` values, or more than
    :data:`MAX_RESULT_SECONDS` spent converting. O(size of the value).
    """
    if isinstance(value, str):
        return storable(value)
    bounded = _Bounded()
    try:
        plain = bounded.plain(value)
    except RecursionError:
        raise ToolResultError("the result is nested too deeply to send; return a flatter value") from None
    import pydantic_core

    try:
        text = pydantic_core.to_json(plain, fallback=str).decode()
    except Exception:  # noqa: BLE001 - a value pydantic cannot walk is still shown
        text = repr(plain)
    return storable(text, bounded.escaped)


def storable(text: str, escaped: int = 0) -> str:
    """Return ``text`` with its lone surrogates as ``\\udcXX`` escapes and, when there were any (or
    ``escaped`` were before), a last line saying so (the bytes of a non-UTF-8 name stay
    recoverable). O(len(text))."""
    fixed, n = escape_surrogates(text)
    n += escaped
    if not n:
        return text
    return (
        f"{fixed}\n[{n} undecodable character{'s' if n != 1 else ''} (lone surrogates, such as the bytes of a "
        "non-UTF-8 file name) written as \\udcXX escapes]"
    )


class _Bounded:
    """Turns a result into lists, dicts and leaves, refusing what could run forever (see :func:`result_text`)."""

    def __init__(self) -> None:
        self.values = 0
        self.escaped = 0  # lone surrogates written as escapes
        self.deadline = time.monotonic() + MAX_RESULT_SECONDS

    def plain(self, v: Any) -> Any:
        self.values += 1
        if self.values > MAX_RESULT_VALUES:
            raise ToolResultError(
                f"the result holds more than {MAX_RESULT_VALUES:,} values; return a summary or a part of it"
            )
        if self.values % 4096 == 0 and time.monotonic() > self.deadline:
            raise ToolResultError(
                f"converting the result took more than {MAX_RESULT_SECONDS:g} s; return a smaller value"
            )
        if isinstance(v, str):
            fixed, n = escape_surrogates(v)
            self.escaped += n
            return fixed
        if v is None or isinstance(v, (bytes, bytearray, int, float, bool)):
            return v
        if isinstance(v, dict):
            return {self.plain(k) if isinstance(k, str) else k: self.plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple, set, frozenset)):
            return [self.plain(x) for x in v]
        if isinstance(v, Iterator) or (isinstance(v, Iterable) and not isinstance(v, Sized)):
            raise ToolResultError(
                f"the tool returned {type(v).__name__}, an iterable without a length that may never end; "
                "return a list (e.g. list(itertools.islice(it, 100))), a str or a dict instead"
            )
        return v  # models, dataclasses, dates...: pydantic's


def error_text(e: BaseException) -> str:
    """Return the one line the model reads for an exception: ``ValueError: the message``
    (lone surrogates in it escaped, see :func:`storable`)."""
    if isinstance(e, (ToolArgumentsError, ToolResultError)):
        return storable(str(e))
    msg = str(e).strip()
    return storable(f"{type(e).__name__}: {msg}" if msg else type(e).__name__)


def _docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """Return the docstring's summary text and ``{parameter: description}`` (griffe, any common style)."""
    doc = inspect.getdoc(fn)
    if not doc:
        return "", {}
    import griffe

    logging.getLogger("griffe").setLevel(logging.ERROR)  # it warns about unannotated parameters
    summary, params = "", {}
    for section in griffe.Docstring(doc).parse("auto"):
        if section.kind.value == "text" and not summary:
            summary = section.value
        elif section.kind.value == "parameters":
            params.update({p.name: p.description for p in section.value})
    return summary.strip(), params


def _arguments_model(
    tool: str, fn: Callable[..., Any], docs: dict[str, str], positional: list[str]
) -> type[pydantic.BaseModel]:
    import pydantic

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise ToolError(f"tool {tool}: its signature cannot be read ({e})") from None
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back to the raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            star = "*" if p.kind == p.VAR_POSITIONAL else "**"
            raise ToolError(f"tool {tool}: parameter {star}{p.name} cannot be described to a model; name each argument")
        if p.kind == p.POSITIONAL_ONLY:
            positional.append(p.name)
        ann = hints.get(p.name, p.annotation)
        if ann is inspect.Parameter.empty:
            ann = Any
        if isinstance(ann, str):
            raise ToolError(f"tool {tool}: the type of parameter {p.name!r} ({ann!r}) cannot be resolved")
        try:
            pydantic.TypeAdapter(ann).json_schema()
        except Exception as e:  # noqa: BLE001 - pydantic raises several kinds here
            raise ToolError(
                f"tool {tool}: the type of parameter {p.name!r} ({_type_name(ann)}) cannot be described as "
                f"JSON Schema ({type(e).__name__}); use str, int, float, bool, lists, dicts, enums or pydantic models"
            ) from None
        if p.name in (ai.RAW_ARGUMENTS, ai.ARGUMENTS_ERROR):
            raise ToolError(
                f"tool {tool}: parameter {p.name!r} is reserved (it marks arguments a model sent that are not a "
                "JSON object); rename it"
            )
        default = ... if p.default is p.empty else p.default
        # each field under a name of ours, the parameter's name as its alias: every Python name works
        # (pydantic takes model_config, model_* and _private names as its own otherwise)
        fields[_field(len(fields))] = (ann, pydantic.Field(default, alias=p.name, description=docs.get(p.name) or None))
    try:
        return pydantic.create_model(f"{tool}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    except Exception as e:  # noqa: BLE001 - e.g. a parameter name pydantic reserves
        raise ToolError(f"tool {tool}: its parameters cannot be described ({_one_line(e)})") from None


def _field(i: int) -> str:
    """The argument model's name for the ``i``-th parameter (the parameter's own name is its alias)."""
    return f"arg{i}"


def _type_name(ann: object) -> str:
    return getattr(ann, "__qualname__", None) or repr(ann)


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated ``title`` strings (noise to a model); keep everything else."""
    if isinstance(schema, dict):
        return {
            k: _clean(v) if k != "properties" else {n: _clean(s) for n, s in v.items()}
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def _one_line(e: BaseException) -> str:
    import pydantic

    if isinstance(e, pydantic.ValidationError):
        parts = []
        for err in e.errors(include_url=False):
            loc = ".".join(str(x) for x in err["loc"]) or "arguments"
            parts.append(f"{loc}: {err['msg']}" + (f" (got {err['input']!r})" if err["type"] != "missing" else ""))
        return "; ".join(parts)
    return " ".join(str(e).split())


def _await(awaitable: Any) -> Any:
    """Run an awaitable to completion from synchronous code; return its result."""

    async def main() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # A loop already runs in this thread (a Jupyter kernel): run ours in a worker thread.
    loop = asyncio.new_event_loop()
    task = loop.create_task(main())
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = loop.run_until_complete(task)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = e
        finally:
            loop.close()

    worker = threading.Thread(target=work, name="durable-tool", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop finished in between
            pass
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
