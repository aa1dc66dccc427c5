"""The verb that sends the notebook's turns elsewhere as they end: trace."""

from __future__ import annotations

from ..context import Context
from ..options import Call
from ..tracing import switch
from .registry import verb


@verb(
    "trace [mode] [url]",
    "send each turn, as it ends, to an OpenTelemetry collector: trace otlp [URL] (default: the\n"
    "OTEL_EXPORTER_OTLP_ENDPOINT variable, else localhost:4318; headers from OTEL_EXPORTER_OTLP_HEADERS),\n"
    "trace off, or trace alone to see where turns go; a collector that is down costs one warning, never a turn",
)
def trace(ctx: Context, call: Call) -> None:
    print(switch(ctx, list(call.args)))
