"""An OTLP endpoint from the environment that holds a user and password: refused in one line, never shown."""

from __future__ import annotations

import pytest

from durable_nb import durable
from durable_nb.__main__ import main
from durable_nb.errors import DurableError
from durable_nb.otlp.live import OtlpPublisher
from durable_nb.otlp.wire import post
from durable_nb.session import JsonlStore

SECRET = "sk-lf-9f2Qx7Lm0aB3"
# Langfuse authenticates with its public:secret key pair; pasted into the URL it looks like this (no port)
WITH_USER = f"https://pk-lf-1234:{SECRET}@cloud.langfuse.example/api/public/otel"


def test_the_cli_refuses_an_env_endpoint_with_a_password_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    durable.Agent(store=JsonlStore(tmp_path / ".durable"), session_id="sent").run("hello").wait()
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.setenv(var, WITH_USER)
        assert main(["export", "sent", "--to", "otlp"]) == 1
        err = capsys.readouterr().err
        assert SECRET[:6] not in err and len(err.strip().splitlines()) == 1
        assert var in err and "OTEL_EXPORTER_OTLP_HEADERS" in err


def test_the_live_publisher_refuses_it_up_front(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", WITH_USER)
    with pytest.raises(DurableError) as e:
        OtlpPublisher(durable.Agent(session_id="live"))
    assert SECRET[:6] not in str(e.value) and "OTEL_EXPORTER_OTLP_ENDPOINT" in str(e.value)


def test_a_url_http_client_cannot_parse_is_a_collector_error_without_it():
    from durable_nb.otlp.wire import CollectorError

    with pytest.raises(CollectorError) as e:
        post(b"", f"http://me:{SECRET}@localhost/v1/traces", {}, 1)
    assert SECRET[:6] not in str(e.value)
