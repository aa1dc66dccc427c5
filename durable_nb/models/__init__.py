"""Models: the protocol the agent calls, the offline default, and name lookup.

A model is either

- an object with ``stream(messages, request=None) -> Iterable[str | ai.Message]``:
  it yields text deltas (``str``) as they arrive and finally the assistant
  :class:`~durable_nb.ai.Message` (if it yields none, the agent assembles one
  from the deltas). ``request`` is an :class:`~durable_nb.ai.Request` (system
  prompt, tools, settings); a model whose ``stream`` takes only ``messages``
  keeps working and is called without it (see :func:`open_stream`); or
- any plain callable ``f(messages) -> str | ai.Message`` (a fake model in one
  line); or
- a name: ``"offline"`` (the default) or ``"<provider>:<model>"`` such as
  ``"openai:gpt-4.1-mini"``, ``"anthropic:claude-sonnet-4-5"`` or
  ``"llm:<model-id>"``; ``openai`` and ``anthropic`` also take
  ``"<provider>:<model>@<base URL>"`` (a local server, a proxy);
  ``None`` means ``$DURABLE_NB_MODEL`` or offline.

:func:`build` turns any of these into a :class:`Model`. Provider SDKs are
imported only when their model is built.

``messages`` is read-only. The agent hands every model call the model view
of the active path plus the run's messages so far as a read-only
:class:`~collections.abc.Sequence` (``durable.active.Context``) that shares
the agent's cached view instead of copying it: a turn costs what it adds,
whatever the session's size. Read it as a list (``len``, ``messages[-1]``,
iteration, slices, ``messages + [m]`` gives a new list); any attempt to
change it (``append``, ``pop``, item assignment, ...) raises ``TypeError``,
so a model can never change what the agent sends next. A model that wants a
list of its own takes ``list(messages)`` (O(n), its own choice). The
messages are the session's own objects: never modify one in place (build a
new one with ``msgspec.structs.replace``). A provider converting the
messages into its request is O(n) by nature; the agent adds nothing per
message on top.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol, Union, runtime_checkable

from .. import ai
from ..errors import ModelError
from .offline import OfflineModel

ENV_VAR = "DURABLE_NB_MODEL"


@runtime_checkable
class Model(Protocol):
    """What the agent calls: stream text deltas, then the assistant message.

    ``messages`` is a read-only sequence shared with the agent (see the module
    docs): read it, never change it or its messages.
    """

    def stream(self, messages: Sequence[ai.Message]) -> Iterable[str | ai.Message]: ...


def accepts_request(fn: Callable) -> bool:
    """True when ``fn`` can be called as ``fn(messages, request)``.

    That is: it takes a second positional parameter, a parameter named
    ``request``, or ``*args``. A callable whose signature cannot be read is
    called the old way (messages only). Cached per function (a bound
    method by its function), so a loop step does not read a signature.
    """
    func = getattr(fn, "__func__", fn)
    try:
        return _accepts(func, func is not fn)
    except TypeError:  # an unhashable callable: read it every time
        return _accepts.__wrapped__(func, func is not fn)


@functools.lru_cache(maxsize=1024)
def _accepts(fn: Callable, bound: bool) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if bound:
        params = params[1:]  # self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (
        len(positional) >= 2
        or any(p.kind == p.VAR_POSITIONAL for p in params)
        or any(p.name == "request" and p.kind != p.VAR_KEYWORD for p in params)
    )


def open_stream(
    model: Model, messages: Sequence[ai.Message], request: ai.Request | None = None
) -> Iterable[str | ai.Message]:
    """Return ``model.stream(messages, request)``, or ``model.stream(messages)`` for an old model.

    An old model (``stream(messages)`` only) gets no request: it never sees
    the system prompt, tools or settings. Nothing is sent until the result is
    iterated (for a generator). O(1) beyond reading ``stream``'s signature.
    """
    if request is not None and accepts_request(model.stream):
        return model.stream(messages, request)  # type: ignore[call-arg]  # its signature was just checked
    return model.stream(messages)


ModelLike = Union[Model, Callable[[Sequence[ai.Message]], str | ai.Message], str, None]


class CallableModel:
    """Adapts a plain callable ``f(messages) -> str | ai.Message`` to :class:`Model`.

    ``f`` gets the messages exactly as the agent passes them: the read-only
    sequence (see the module docs), not a copy, so a call costs O(1) in the
    session's size. ``f`` may also take the request (``f(messages, request)``).
    """

    def __init__(self, fn: Callable[[Sequence[ai.Message]], str | ai.Message]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "callable")

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        out = (
            self.fn(messages, request)  # type: ignore[call-arg]  # accepts_request checked it
            if request is not None and accepts_request(self.fn)
            else self.fn(messages)
        )
        if isinstance(out, ai.Message):
            if out.text():
                yield out.text()
            yield out
        elif isinstance(out, str):
            yield out
        else:
            raise ModelError(f"model function {self.name} returned {type(out).__name__}; return a str or ai.Message")


# name -> (module, factory function name, pip extra)
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("durable_nb.models.openai_chat", "build", "openai"),
    "anthropic": ("durable_nb.models.anthropic_messages", "build", "anthropic"),
    "llm": ("durable_nb.models.llm_plugin", "build", "llm"),
}


def build(model: ModelLike) -> Model:
    """Return a :class:`Model` for ``model`` (see the module docs).

    Raises :class:`~durable_nb.errors.ModelError` for an unknown name, a
    missing optional SDK (naming the extra to install) or an object that is
    neither a model nor a callable. Building a provider model constructs its
    client but sends nothing.
    """
    if model is None:
        model = os.environ.get(ENV_VAR) or "offline"
    if isinstance(model, str):
        return build_named(model)
    if isinstance(model, Model):
        return model
    if callable(model):
        return CallableModel(model)
    raise ModelError(
        f"{model!r} is not a model: pass a name, a callable f(messages) -> str, or an object with stream()"
    )


def build_named(spec: str) -> Model:
    """Return the model named ``spec`` (``"offline"`` or ``"<provider>:<model>"``)."""
    spec = spec.strip()
    if spec in ("offline", "offline:", "echo"):
        return OfflineModel()
    provider, _, name = spec.partition(":")
    if provider not in PROVIDERS:
        known = ", ".join(["offline", *(f"{p}:<model>" for p in PROVIDERS)])
        raise ModelError(f"unknown model {spec!r}: use one of {known}")
    if not name:
        raise ModelError(f"model {spec!r} names no model: write {provider}:<model-name>")
    import importlib

    module, factory, extra = PROVIDERS[provider]
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise ModelError(f"model {spec!r} needs the {extra!r} extra: pip install 'durable_nb[{extra}]' ({e})") from None
    return getattr(mod, factory)(name)


def split_base_url(name: str) -> tuple[str, str | None]:
    """Split ``"<model>@<base URL>"`` into the model and the URL (``None`` when absent).

    Only an ``@`` followed by ``http://`` or ``https://`` starts a URL, so a
    model name that itself holds ``@`` (``claude-x@20250101``) stays whole:
    ``"llama3.2:3b@http://127.0.0.1:11434/v1"`` gives
    ``("llama3.2:3b", "http://127.0.0.1:11434/v1")``.
    """
    for scheme in ("@http://", "@https://"):
        i = name.rfind(scheme)
        if i > 0:
            return name[:i], name[i + 1 :]
    return name, None


def model_name(model: object) -> str:
    """Return a short display name for a built model."""
    return str(getattr(model, "name", None) or type(model).__name__)


__all__ = [
    "ENV_VAR",
    "CallableModel",
    "Model",
    "ModelLike",
    "OfflineModel",
    "PROVIDERS",
    "build",
    "accepts_request",
    "build_named",
    "model_name",
    "open_stream",
    "split_base_url",
]
