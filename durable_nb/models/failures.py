"""Provider failures as one clear line: who failed, the status, and what to do.

The official SDKs (and most of the SDKs ``llm`` plugins use) are generated
by the same tool, so their errors share a shape: status errors carry
``status_code`` and a decoded ``body``; network failures are an
``APIConnectionError`` (``APITimeoutError`` is one); a stream cut mid-reply
raises the HTTP library's own error. :func:`provider_error` reads that shape
by duck typing, so it needs no SDK import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from ..errors import ModelError

MAX_DETAIL = 240


def cut_short(provider: str, base_url: str, field: str) -> ModelError:
    """Return the error for a stream that ended without its ``field`` (a stop or finish
    reason): the connection was cut, so the reply is not stored as if it were whole."""
    return ModelError(
        f"{provider}: the reply from {safe_url(base_url)} ended before it finished (no {field}) — run the cell again"
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
) -> ModelError | None:
    """Return a one-line :class:`ModelError` for a provider failure, or ``None``.

    ``key_hint`` names where the key comes from (``"OPENAI_API_KEY"``);
    ``url_hint`` says how to point at another server. ``None`` means ``exc``
    is not a provider failure (a bug, an interrupt):
    let it propagate. Auth (401/403), bad model (404), rate limit (429),
    overload (529/503/5xx), other statuses, connection and timeout failures
    each get their own advice. The server's own message is kept, cut to
    ``MAX_DETAIL`` characters, on one line, with every string in ``secrets``
    (the API key in use) masked, since servers may echo a key back.
    """
    where = safe_url(base_url)
    status = getattr(exc, "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    if isinstance(status, int) and status < 400:  # an error event inside a 200 stream
        kind = _error_type(exc)
        text = (
            f"{provider}: {kind or 'error'} from {where} while streaming: {_detail(exc)} — "
            f"try again (run the cell again)"
        )
    elif isinstance(status, int):
        detail = _detail(exc)
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
    elif "APIConnectionError" in names:
        timeout = "APITimeoutError" in names
        reason = _one_line(str(exc.__cause__ or exc)) if not timeout else "timed out"
        text = f"{provider}: cannot reach {where} ({reason}) — is the server running? To use another, {url_hint}"
    elif "APIError" in names:  # an error event inside the stream
        text = f"{provider}: error from {where} while streaming: {_detail(exc)} — try again (run the cell again)"
    elif type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "requests", "urllib3"):
        text = f"{provider}: the connection to {where} failed mid-reply ({type(exc).__name__}: {_one_line(str(exc))})"
    else:
        return None
    return ModelError(redact(text, secrets))


def _detail(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _one_line(err["message"])
        if isinstance(err, str):
            return _one_line(err)
    return _one_line(getattr(exc, "message", None) or str(exc))


def _error_type(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    kind = err.get("type") if isinstance(err, dict) else None
    return kind if isinstance(kind, str) else ""


def _one_line(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= MAX_DETAIL else s[:MAX_DETAIL] + "…"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Return ``text`` with every non-trivial secret (4+ characters) replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


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
