"""Spans onto the wire: OTLP protobuf (the OpenTelemetry SDK's encoder), OTLP/JSON files, OTLP/HTTP.

The SDK is the optional extra ``durable_nb[otlp]``; it is imported on first
use, so importing this module costs nothing. A file is OpenTelemetry's file
format: JSON Lines, each line one ``TracesData`` object (``{"resourceSpans":
[...]}``, ids as hex, enums as numbers, per the OTLP/JSON rules), written one
turn at a time. Sending POSTs the protobuf to the collector's
``/v1/traces``, one request per batch of turns; endpoint and headers follow
the standard ``OTEL_EXPORTER_OTLP_*`` variables. Header values never appear in
anything this module prints or raises.
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .. import __version__
from ..errors import DurableError
from .spans import SpanRecord

EXTRA = "pip install 'durable_nb[otlp]'"
DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
BATCH_SPANS = 512  # spans per HTTP request (a turn is never split)
TIMEOUT = 10.0  # seconds per request unless OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT says otherwise


class CollectorError(DurableError):
    """The collector could not be reached or refused the spans (one line, no header values)."""


def _sdk() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags
    except ImportError:
        raise DurableError(f"OpenTelemetry export needs the OpenTelemetry SDK: {EXTRA}") from None
    return encode_spans, Resource, ReadableSpan, InstrumentationScope, SpanContext, Status, StatusCode, TraceFlags


def encode(records: Iterable[SpanRecord]) -> Any:
    """Return ``records`` as one OTLP ``ExportTraceServiceRequest`` protobuf message (resource
    ``service.name=durable_nb`` unless ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` say
    otherwise). Raises :class:`DurableError` naming the extra when the SDK is missing."""
    encode_spans, Resource, ReadableSpan, Scope, SpanContext, Status, StatusCode, TraceFlags = _sdk()
    made = Resource.create({"service.name": "durable_nb"})  # its random service.instance.id left out: stable output
    resource = Resource({k: v for k, v in made.attributes.items() if k != "service.instance.id"})
    scope = Scope("durable_nb", __version__)
    spans = []
    for r in records:
        ctx = SpanContext(r.trace_id, r.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
        parent = SpanContext(r.trace_id, r.parent, is_remote=False) if r.parent else None
        status = Status(StatusCode.ERROR, r.error) if r.error else Status(StatusCode.UNSET)
        spans.append(
            ReadableSpan(
                r.name,
                ctx,
                parent,
                resource,
                r.attributes,
                status=status,
                start_time=r.start_ns,
                end_time=max(r.end_ns, r.start_ns),
                instrumentation_scope=scope,
            )  # fmt: skip
        )
    return encode_spans(spans)


def otlp_json(message: Any) -> dict[str, Any]:
    """Return an OTLP protobuf message as OTLP/JSON: protobuf's JSON mapping (lowerCamelCase names,
    64-bit integers as strings) with enums as numbers and trace / span ids as hex, as OTLP/JSON
    requires (protobuf's own mapping writes bytes as base64)."""
    from google.protobuf import json_format

    data: dict[str, Any] = json_format.MessageToDict(message, use_integers_for_enums=True)
    for rs in data.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for span in ss.get("spans", ()):
                _hex_ids(span)
                for link in span.get("links", ()):
                    _hex_ids(link)
    return data


def _hex_ids(obj: dict[str, Any]) -> None:
    import base64

    for key in ("traceId", "spanId", "parentSpanId"):
        if obj.get(key):
            obj[key] = base64.b64decode(obj[key]).hex()


def write_jsonl(batches: Iterable[list[SpanRecord]], out: IO[bytes]) -> tuple[int, int]:
    """Write each batch of spans as one OTLP/JSON ``TracesData`` line to ``out``; return ``(traces,
    spans)`` written. Holds one batch at a time. Writes one empty ``{"resourceSpans":[]}`` line when
    there is nothing, so the file is still OTLP/JSON."""
    import json

    traces: set[int] = set()
    n = 0
    for batch in batches:
        if not batch:
            continue
        line = json.dumps(otlp_json(encode(batch)), ensure_ascii=False, separators=(",", ":"))
        out.write(line.encode("utf-8") + b"\n")
        traces.update(r.trace_id for r in batch)
        n += len(batch)
    if not n:
        out.write(b'{"resourceSpans":[]}\n')
    return len(traces), n


def endpoint(url: str | None = None) -> str:
    """Return the traces URL to POST to: ``url``, else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (as is),
    else ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, else ``http://localhost:4318/v1/traces``. A
    given ``url`` with no path (``http://127.0.0.1:6006``) gets ``/v1/traces``. Raises
    :class:`DurableError` for a URL that is not http(s), that no request could go to (a mistyped
    port or host), or that holds a user or password, given or from the environment (headers carry
    those: ``OTEL_EXPORTER_OTLP_HEADERS``); the message names the variable it came from and never
    shows the user or password."""
    where, source = "the OTLP endpoint", ""  # source: the variable a URL from the environment came from
    if url:
        parts = _split(url, "")
        if parts.scheme not in ("http", "https"):
            raise DurableError(f"the OTLP endpoint must be an http:// or https:// URL, not {shown(url)!r}")
        if parts.path in ("", "/"):
            url = urllib.parse.urlunsplit(parts._replace(path="/v1/traces"))
    elif os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        url, where = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        source = where
    elif os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        where = source = "OTEL_EXPORTER_OTLP_ENDPOINT"
        url = os.environ[source].rstrip("/") + "/v1/traces"
    else:
        url = DEFAULT_ENDPOINT
    parts = _split(url, source)
    if parts.scheme not in ("http", "https"):
        raise DurableError(f"{where} must be an http:// or https:// URL, not {shown(url)!r}")
    if "@" in parts.netloc:
        raise DurableError(
            f"{where} {shown(url)} holds a user or password: give it in "
            "OTEL_EXPORTER_OTLP_HEADERS (e.g. authorization=Basic ...), not in the URL"
        )
    return url


def _printable(s: str) -> str:
    """Return ``s`` with control characters as ``?`` (a URL printed in one line)."""
    return "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in s)


def _split(url: str, source: str) -> urllib.parse.SplitResult:
    """Return ``url`` split, checked as far as a request needs: a host, a numeric port in range, no
    space or control character. Raises :class:`DurableError` in one line (``source``: the variable it
    came from) for a URL no request could go to, e.g. a mistyped port."""
    where = f" (from {source})" if source else ""
    why = ""  # our words, never Python's: its message may quote a piece of a password
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        parts, why = None, "its host cannot be read (an unclosed [ of an IPv6 address?)"
    if parts is not None:
        try:
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
        except ValueError:
            why = "its port is not a number from 0 to 65535"
        if not why and parts.scheme in ("http", "https") and not parts.hostname:
            why = "it has no host"
    if not why and any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        why = "it holds a space or a control character"
    if why or parts is None:
        raise DurableError(f"the OTLP endpoint {shown(url)}{where} is not a valid URL: {why}")
    return parts


def shown(url: str) -> str:
    """Return ``url`` as it may be printed: without a user or password and without its query."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:  # a mistyped port or host: shown as typed, less what may be secret
        head = re.split(r"[?#]", url, maxsplit=1)[0]
        scheme, sep, rest = head.partition("//")
        if "@" in rest:
            rest = rest.rpartition("@")[2]
        return _printable(scheme + sep + rest) if sep else "<an unreadable URL>"


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110's token)


def headers() -> dict[str, str]:
    """Return the headers ``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` (else ``OTEL_EXPORTER_OTLP_HEADERS``)
    set: ``key=value,key2=value2``, keys lower-cased, values percent-decoded (the standard's format).

    Raises :class:`DurableError` naming the variable and the entry's position or header name, never a
    value, for an entry that is not ``key=value``, a name that is not a header name, or a value holding
    a line break or another control character (which no request could carry)."""
    var = (
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
        if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
        else "OTEL_EXPORTER_OTLP_HEADERS"
    )
    out: dict[str, str] = {}
    for n, item in enumerate(os.environ.get(var, "").split(","), 1):
        if not item.strip():
            continue
        name, eq, value = item.partition("=")
        name = urllib.parse.unquote(name).strip().lower()
        if not eq or not _TOKEN.fullmatch(name):
            raise DurableError(f"{var}: entry {n} is not name=value with a header name (values are not shown)")
        value = urllib.parse.unquote(value).strip()
        if any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in value):
            raise DurableError(f"{var}: the value of {name!r} holds a line break or a control character")
        out[name] = value
    return out


def _timeout() -> float:
    raw = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    try:
        return float(raw) if raw else TIMEOUT  # the standard says ms, the Python SDK reads seconds: so do we
    except ValueError:
        return TIMEOUT


def post(data: bytes, url: str, extra: dict[str, str], timeout: float | None = None) -> None:
    """POST one serialized ``ExportTraceServiceRequest`` to ``url`` with ``extra`` headers. Raises
    :class:`CollectorError` in one line (the URL as :func:`shown` prints it; no header value) when the
    collector cannot be reached, times out or answers anything but 2xx."""
    req = urllib.request.Request(url, data=data, method="POST")
    for k, v in extra.items():
        req.add_header(k, v)
    req.add_header("Content-Type", "application/x-protobuf")
    where = shown(url)
    try:
        with urllib.request.urlopen(req, timeout=timeout or _timeout()) as r:
            r.read()
    except urllib.error.HTTPError as e:
        raise CollectorError(f"the collector at {where} refused the spans: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        reason = getattr(e.reason, "strerror", None) or str(e.reason)
        raise CollectorError(f"cannot reach the collector at {where}: {reason}") from None
    except (TimeoutError, OSError) as e:
        raise CollectorError(f"cannot reach the collector at {where}: {e.strerror or 'timed out'}") from None
    except (ValueError, http.client.HTTPException):  # http.client refused a URL or header (its text may hold one)
        raise CollectorError(f"cannot send to {where}: the URL or a header cannot go into a request") from None


def _batches(turns: Iterable[list[SpanRecord]], size: int) -> Iterator[list[SpanRecord]]:
    batch: list[SpanRecord] = []
    for spans in turns:
        batch.extend(spans)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def send(turns: Iterable[list[SpanRecord]], url: str | None = None, timeout: float | None = None) -> tuple[int, int]:
    """Send spans (lists of them, a turn's at a time) over OTLP/HTTP; return ``(traces, spans)`` sent.

    The endpoint is :func:`endpoint`'s, the headers :func:`headers`'. Raises
    :class:`CollectorError` at the first request that fails (what was sent
    before it stays sent), :class:`DurableError` without the SDK.
    """
    target, extra = endpoint(url), headers()
    traces: set[int] = set()
    n = 0
    for batch in _batches(turns, BATCH_SPANS):
        post(encode(batch).SerializeToString(), target, extra, timeout)
        traces.update(r.trace_id for r in batch)
        n += len(batch)
    return len(traces), n
