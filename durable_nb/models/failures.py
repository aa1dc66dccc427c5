"""Provider failures as one clear line: who failed, the status, and what to do.

The official SDKs (and most of the SDKs ``llm`` plugins use) are generated
by the same tool, so their errors share a shape: status errors carry
``status_code`` and a decoded ``body``; network failures are an
``APIConnectionError`` (``APITimeoutError`` is one); a stream cut mid-reply
raises the HTTP library's own error. :func:`provider_error` reads that shape
by duck typing, so it needs no SDK import.

Keys never reach an error text, not even in part: :func:`redact` masks every
configured key (and any run of its first characters, escaped or not) in the
whole text *before* it is cut to one line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from ..errors import DurableError, ModelError

MAX_DETAIL = 240
MIN_KEY_PREFIX = 6  # a run of a key's first characters this long is masked too
READ_TIMEOUT_ENV = "DURABLE_NB_READ_TIMEOUT"
DEFAULT_READ_TIMEOUT = 60.0
_HTTP_LIBRARIES = ("httpx", "httpx2", "httpcore", "requests", "urllib3", "h11")
_SECRET_VAR = re.compile(r"(API_KEY|AUTH_TOKEN|_TOKEN|_SECRET|_PASSWORD)$")
_CONTROL_AND_SPACE = "".join(map(chr, range(33))) + "\x7f"


def read_timeout() -> float:
    """Return how long (seconds) a provider may stay silent before the turn fails.

    ``$DURABLE_NB_READ_TIMEOUT`` when set (a positive number), else
    :data:`DEFAULT_READ_TIMEOUT`. It bounds each wait for data (the answer's
    headers, every gap between two pieces of a stream), not the whole reply.
    Raises :class:`ModelError` for a value that is not a positive number.
    """
    raw = os.environ.get(READ_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_READ_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ModelError(f"{READ_TIMEOUT_ENV}={raw!r} is not a number of seconds: set it to e.g. 60, or unset it")
    return value


def cut_short(provider: str, base_url: str, field: str, received: int = 0) -> ModelError:
    """Return the error for a stream that ended without its ``field`` (a stop or finish
    reason): the connection was cut, so the reply is not stored as if it were whole.
    ``received`` is how many characters of text had arrived."""
    after = f" after {received} characters" if received else ""
    return ModelError(
        f"{provider}: the reply from {safe_url(base_url)} was cut off{after}, before it finished "
        f"(no {field}) — run the cell again"
    )


def provider_error(
    provider: str,
    exc: BaseException,
    *,
    model: str,
    base_url: str,
    key_hint: str,
    url_hint: str,
    secrets: Iterable[str | None] = (),
    received: int = 0,
    timeout: float | None = None,
) -> ModelError | None:
    """Return a one-line :class:`ModelError` for a provider failure, or ``None``.

    ``key_hint`` names where the key comes from (``"OPENAI_API_KEY"``);
    ``url_hint`` says how to point at another server. ``None`` means ``exc``
    is not a provider failure (a bug, an interrupt):
    let it propagate. Auth (401/403), bad model (404), rate limit (429),
    overload (529/503/5xx), other statuses, connection and timeout failures
    each get their own advice. ``received`` (characters of reply text that
    had arrived) makes a connection failure "cut off after N characters"
    instead of "cannot reach"; ``timeout`` (the read timeout in use) is
    named when the server went silent. A stream event that is not JSON is
    named as such. The server's own message is kept, with every string in
    ``secrets`` (the key in use) and every key in the environment masked
    (see :func:`redact`; servers may echo a key back), then cut to
    ``MAX_DETAIL`` characters on one line.
    """
    given = [s for s in secrets if s]
    secrets = [*given, *env_secrets()]
    where = safe_url(base_url)

    def line(s: str) -> str:
        return _one_line(redact(s, secrets))

    status = getattr(exc, "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    if isinstance(status, int) and status < 400:  # an error event inside a 200 stream
        kind = _error_type(exc)
        text = (
            f"{provider}: {kind or 'error'} from {where} while streaming: {line(_detail(exc))} — "
            f"try again (run the cell again)"
        )
    elif isinstance(status, int):
        detail = line(_detail(exc))
        if status in (401, 403):
            todo = (
                f"check {key_hint} (read from the environment; keep keys out of the notebook)"
                if status == 401
                else f"the key in {key_hint} may not use {model!r}"
            )
            text = (
                f"{provider}: {status} {'authentication failed' if status == 401 else 'permission denied'} "
                f"at {where}: {detail} — {todo}"
            )
        elif status == 404:
            text = (
                f"{provider}: 404 model {model!r} not found at {where}: {detail} — check the model name "
                f"(a local server lists its models at <base URL>/models)"
            )
        elif status == 429:
            text = (
                f"{provider}: 429 rate limited at {where}: {detail} — wait a moment and run the cell again, "
                f"or check your plan's limits"
            )
        elif status >= 500:
            text = (
                f"{provider}: {status} server error at {where}: {detail} — the service is busy or down; try again later"
            )
        else:
            text = f"{provider}: {status} request refused at {where}: {detail}"
    elif "APIConnectionError" in names or _from_http_library(exc):
        cause = (exc.__cause__ or exc.__context__ or exc) if "APIConnectionError" in names else exc
        silent = "APITimeoutError" in names or "Timeout" in type(cause).__name__
        if silent:
            waited = f"{timeout:g} s" if timeout else "the read timeout"
            reason = f"no data for {waited}; set {READ_TIMEOUT_ENV} to wait longer"
        else:
            reason = line(f"{type(cause).__name__}: {cause}" if received else str(cause))
        if not received and any(s != s.strip(_CONTROL_AND_SPACE) for s in given):
            text = (
                f"{provider}: the key in {key_hint} begins or ends with a space or control character "
                f"(a pasted line break?), which no HTTP header may hold — set it again without it"
            )
        elif received:
            text = f"{provider}: the reply from {where} was cut off after {received} characters ({reason}) — run the cell again"
        elif silent:
            text = f"{provider}: {where} did not answer ({reason}) — is the server stuck? To use another, {url_hint}"
        else:
            text = f"{provider}: cannot reach {where} ({reason}) — is the server running? To use another, {url_hint}"
    elif "APIError" in names:  # an error event inside the stream
        text = f"{provider}: error from {where} while streaming: {line(_detail(exc))} — try again (run the cell again)"
    elif isinstance(exc, json.JSONDecodeError):  # the SDK could not parse a stream event
        after = f", after {received} characters of reply" if received else ""
        text = (
            f"{provider}: {where} sent a stream event that is not JSON ({exc.msg} at character {exc.pos}{after}) "
            f"— does that server speak the {provider} API? To use another, {url_hint}"
        )
    else:
        return None
    return ModelError(redact(text, secrets))


def _from_http_library(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in _HTTP_LIBRARIES


def _detail(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", None) or exc)


def _error_type(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    kind = err.get("type") if isinstance(err, dict) else None
    return kind if isinstance(kind, str) else ""


def _one_line(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= MAX_DETAIL else s[:MAX_DETAIL] + "…"


def env_secrets() -> list[str]:
    """Return the values of environment variables that hold secrets (``*_API_KEY``,
    ``*_AUTH_TOKEN``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``).

    Every provider error is masked with these too, whichever provider failed.
    Values shorter than 8 characters are not keys and are left out.
    """
    return [v for k, v in os.environ.items() if len(v) >= 8 and _SECRET_VAR.search(k.upper())]


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Return ``text`` with every secret masked as ``***``, whole or in part.

    For each secret of 4+ characters (stripped of surrounding whitespace and
    control characters, such as a pasted trailing ``\\r``), every run of
    text that starts with its first :data:`MIN_KEY_PREFIX` characters (all
    of them, for a shorter secret) is masked as far as it goes on matching
    the key: the whole key, a key cut off by an ellipsis, the key inside
    ``b'Bearer sk-...\\r'``. The key's JSON and ``repr`` escaped forms are
    masked the same way. Redact before cutting a text short, never after.
    O(len(text)) per secret.
    """
    for secret in secrets:
        core = (secret or "").strip(_CONTROL_AND_SPACE)
        if len(core) < 4:
            continue
        for form in {core, json.dumps(core)[1:-1], repr(core)[1:-1]}:
            text = prefix_runs(text, form, "***", MIN_KEY_PREFIX)[0]
    return text


def prefix_runs(text: str, key: str, label: str, min_run: int) -> tuple[str, int]:
    """Return ``text`` with every run of ``key``'s first ``min_run`` or more characters (all of a
    shorter key), as far as it goes on matching, replaced by ``label``, and how many there were:
    a key quoted whole or cut short. The one home of that rule (provider errors, ``--redact``).
    O(len(text))."""
    head = key[:min_run]
    pieces: list[str] = []
    i = 0
    while (j := text.find(head, i)) >= 0:
        k = len(head)
        while k < len(key) and j + k < len(text) and text[j + k] == key[k]:
            k += 1
        pieces += [text[i:j], label]
        i = j + k
    return ("".join(pieces) + text[i:], len(pieces) // 2) if pieces else (text, 0)


def safe_url(url: str) -> str:
    """Return ``url`` without user info, query or fragment (fit to show in an error).

    A string that is not a URL (a plugin's description) is returned as it is.
    """
    try:
        p = urlsplit(str(url))
    except ValueError:
        return "<invalid URL>"
    if not p.scheme or not p.netloc:
        return str(url)
    host = p.hostname or ""
    if p.port:
        host += f":{p.port}"
    return urlunsplit((p.scheme, host, p.path.rstrip("/"), "", ""))


def failure_line(e: BaseException) -> str:
    """Return a failure as the one line a notebook shows: a :class:`~durable_nb.errors.DurableError`'s
    message, any other exception as ``Type: message``; every key of the environment masked
    (:func:`redact`, before anything else) and line breaks and white space runs folded to one space.
    O(len(text)) per key."""
    cause = str(e) if isinstance(e, DurableError) else f"{type(e).__name__}: {e}"
    return " ".join(redact(cause, env_secrets()).split())
