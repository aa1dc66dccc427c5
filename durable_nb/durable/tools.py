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
import inspect
import logging
import re
import threading
import typing
from collections.abc import Callable, Iterable
from typing import Any

import pydantic
import pydantic_core

from .. import ai
from ..errors import DurableError

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI and Anthropic accept as a tool name


class ToolError(DurableError):
    """A callable that cannot be a tool (the message names the tool and the parameter)."""


class ToolArgumentsError(DurableError):
    """A model's arguments that do not fit the tool (one line naming each bad argument)."""


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
        try:
            parsed = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as e:
            raise ToolArgumentsError(f"invalid arguments for {self.name}: {_one_line(e)}") from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

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


def result_text(value: Any) -> str:
    """Return a tool's return value as the text the model reads.

    A ``str`` as is; anything else as JSON (pydantic serialises models,
    dataclasses, dates, sets…); what JSON cannot hold falls back to
    ``str()``. O(size of the value).
    """
    if isinstance(value, str):
        return value
    try:
        return pydantic_core.to_json(value, fallback=str).decode()
    except Exception:  # noqa: BLE001 - a value pydantic cannot walk is still shown
        return repr(value)


def error_text(e: BaseException) -> str:
    """Return the one line the model reads for an exception: ``ValueError: the message``."""
    if isinstance(e, ToolArgumentsError):
        return str(e)
    msg = str(e).strip()
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


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
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (ann, pydantic.Field(default, description=docs.get(p.name) or None))
    try:
        return pydantic.create_model(f"{tool}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    except Exception as e:  # noqa: BLE001 - e.g. a parameter name pydantic reserves
        raise ToolError(f"tool {tool}: its parameters cannot be described ({_one_line(e)})") from None


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
