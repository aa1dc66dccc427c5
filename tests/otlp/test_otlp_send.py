"""Sending over OTLP/HTTP: the command line's --to otlp and the live publisher, against a collector in a
thread (one that answers, one that refuses, none at all); header values never shown."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from durable_nb import durable
from durable_nb.__main__ import main
from durable_nb.otlp.live import OtlpPublisher
from durable_nb.session import JsonlStore

SECRET = "sk-very-secret-123"


def names(body: bytes) -> list[str]:
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    return [s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]


def stored(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    a = durable.Agent(store=JsonlStore(tmp_path / ".durable"), session_id="sent")
    a.run("hello").wait()


def test_to_otlp_posts_protobuf_with_the_env_headers(collector, tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer%20{SECRET},x-team=a")
    assert main(["export", "sent", "--to", "otlp", "--endpoint", collector.url]) == 0
    out = capsys.readouterr()
    assert "sent session sent to http://127.0.0.1" in out.out and "1 trace, 3 spans" in out.out
    assert SECRET not in out.out + out.err
    (path, headers, body) = collector.requests[0]
    assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
    assert headers["authorization"] == f"Bearer {SECRET}" and headers["x-team"] == "a"
    assert names(body) == ["session sent", "invoke_agent durable_nb", "chat offline"]


def test_the_endpoint_comes_from_the_environment_too(collector, tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.removesuffix("/v1/traces"))
    assert main(["export", "sent", "--to", "otlp"]) == 0
    assert len(collector.requests) == 1 and collector.requests[0][0] == "/v1/traces"


def test_a_refusing_collector_is_one_line_without_the_headers(collector, tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    collector.status = 401
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization={SECRET}")
    url = collector.url + f"?key={SECRET}"
    assert main(["export", "sent", "-o", "x.otlp.json", "--to", "otlp", "--endpoint", url]) == 1
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert out.err.strip().splitlines() == [
        f"error: the collector at {collector.url} refused the spans: HTTP 401 Unauthorized"
    ]
    assert (tmp_path / "x.otlp.json").stat().st_size > 0  # the file export still happened
    with_user = collector.url.replace("127.0.0.1", f"me:{SECRET}@127.0.0.1")
    assert main(["export", "sent", "--to", "otlp", "--endpoint", with_user]) == 1
    err = capsys.readouterr().err
    assert SECRET not in err and len(err.strip().splitlines()) == 1


def test_a_collector_that_is_down_is_one_line_and_the_file_is_written(closed_port, tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    assert main(["export", "sent", "-o", "x.otlp.json", "--to", "otlp", "--endpoint", closed_port]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: cannot reach the collector at {closed_port}: Connection refused"]
    assert "invoke_agent" in (tmp_path / "x.otlp.json").read_text()


def test_endpoint_without_to_and_nothing_to_do_are_usage_errors(tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    import pytest

    for argv in (["export", "sent"], ["export", "sent", "-o", "x.otlp.json", "--endpoint", "http://x"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
    assert main(["export", "sent", "--to", "otlp", "--endpoint", "ftp://x/"]) == 1
    assert "must be an http:// or https:// URL" in capsys.readouterr().err


def test_the_publisher_sends_each_turn_as_it_ends(collector):
    a = durable.Agent(session_id="live")
    pub = OtlpPublisher(a, collector.url)
    for ev in a.run("one"):
        pub(ev)
    for ev in a.run("two"):
        pub(ev)
    assert pub.flush(10)
    assert [names(body) for _, _, body in collector.requests] == [["invoke_agent durable_nb", "chat offline"]] * 2
    assert pub.sent == 2 and pub.failed == 0
    pub.close()


def test_a_collector_that_is_down_costs_one_warning_never_a_turn(closed_port):
    said: list[str] = []
    a = durable.Agent(session_id="live")
    pub = OtlpPublisher(a, closed_port, warn=said.append)
    for text in ("one", "two", "three"):
        for ev in a.run(text):
            pub(ev)
        assert pub.flush(10)
    assert len(a.messages()) == 6  # every turn ran and was stored
    assert pub.failed == 3 and len(said) == 1
    assert (
        said[0].startswith("warning: trace not sent: cannot reach the collector at") and "Connection refused" in said[0]
    )
    pub.close()


def test_a_malformed_header_variable_is_one_line_without_its_value(collector, tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    for raw in (f"Authorization Bearer {SECRET}", f"authorization=Bearer%0A{SECRET}", f"bad name={SECRET}"):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", raw)
        assert main(["export", "sent", "--to", "otlp", "--endpoint", collector.url]) == 1
        out = capsys.readouterr()
        assert SECRET not in out.out + out.err
        assert out.err.startswith("error: OTEL_EXPORTER_OTLP_HEADERS: ") and len(out.err.strip().splitlines()) == 1
    assert collector.requests == []


def test_each_fan_out_variant_is_a_trace_of_its_own(collector):
    from durable_nb import ai

    def a_model(messages):
        return ai.assistant_message("from a", model="a")

    def b_model(messages):
        return ai.assistant_message("from b", model="b")

    agent = durable.Agent(session_id="fan")
    pub = OtlpPublisher(agent, collector.url)
    agent.fan_out(durable.meta("shared context"), "q", variants=[a_model, b_model], on_event=lambda b, ev: pub(ev))
    assert pub.flush(10) and pub.sent == 2
    reqs = []
    for _, _, body in collector.requests:
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        reqs.append([s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans])
    names = sorted(s.name for spans in reqs for s in spans)
    assert names == ["chat a", "chat b", "invoke_agent durable_nb", "invoke_agent durable_nb"]
    assert len({s.trace_id for spans in reqs for s in spans}) == 2
    assert len({s.span_id for spans in reqs for s in spans}) == 4
    pub.close()


def test_a_mistyped_endpoint_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    stored(tmp_path, monkeypatch)
    bad = ["http://127.0.0.1:6oo6/v1/traces", "http://[::1:6006/v1/traces", "http://127.0.0.1:99999", "http://a b/"]
    for url in bad:
        assert main(["export", "sent", "--to", "otlp", "--endpoint", url]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: the OTLP endpoint ") and "is not a valid URL" in err[0]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:43l8")
    assert main(["export", "sent", "--to", "otlp"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "OTEL_EXPORTER_OTLP_ENDPOINT" in err[0] and "is not a valid URL" in err[0]
