"""Sessions as OpenTelemetry traces: OTLP/JSON files, OTLP/HTTP to a collector, and live per turn.

- :mod:`.spans`: which traces and spans a session makes (pure).
- :mod:`.attributes`: their GenAI-convention and OpenInference attributes (pure).
- :mod:`.wire`: OTLP protobuf / JSON / HTTP through the OpenTelemetry SDK
  (the ``durable_nb[otlp]`` extra, imported on first use).
- :mod:`.live`: :class:`~.live.OtlpPublisher`, each turn sent as it ends.

Importing this package imports no OpenTelemetry module. docs/otlp.md has
the mapping and what is lost.
"""

from .spans import SpanRecord, branch_ends, session_spans, turn_spans

__all__ = ["SpanRecord", "branch_ends", "session_spans", "turn_spans"]
