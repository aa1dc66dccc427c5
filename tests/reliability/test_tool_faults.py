"""Tools under hostile values (issue 25): lone surrogates from a non-UTF-8 file name, results
that never end, arguments nested too deeply, parameter names pydantic takes for its own."""

from __future__ import annotations

import codecs
import itertools
import os
import threading
import time

import pytest

from durable_nb import ai, durable
from durable_nb.session import JsonlStore, MessageEntry


def calling(name: str, arguments: dict | None = None, raw: str | None = None):
    """A model that calls tool ``name`` once (with ``arguments``, or the streamed JSON ``raw``), then says done."""

    def model(messages):
        if messages[-1].role == "user":
            args = ai.tool_arguments(raw) if raw is not None else dict(arguments or {})
            return ai.Message(role="assistant", content=[ai.ToolCall("c1", name, args)])
        return "done"

    return model


def _result(agent: durable.Agent) -> ai.Message:
    (r,) = [e.message for e in agent.entries() if isinstance(e, MessageEntry) and e.message.role == "tool_result"]
    return r


@pytest.fixture
def odd_name(tmp_path):
    """A folder holding one file whose name is not UTF-8 (``caf\\xe9.txt`` in Latin-1)."""
    d = tmp_path / "files"
    d.mkdir()
    open(os.path.join(os.fsencode(d), b"caf\xe9.txt"), "wb").close()
    return d


# -- 9. a lone surrogate in a tool result or in tool arguments -----------------------------


def test_a_non_utf8_file_name_in_a_tool_result_is_stored_escaped_and_said(tmp_path, odd_name):
    def listing() -> str:
        """The files, one per line."""
        return "\n".join(os.listdir(odd_name))

    def names() -> list[str]:
        """The files."""
        return os.listdir(odd_name)

    def fails() -> str:
        """Fails naming the file."""
        raise ValueError(f"cannot read {os.listdir(odd_name)[0]}")

    store = JsonlStore(tmp_path / "store")
    for fn in (listing, names, fails):
        a = durable.Agent(model=calling(fn.__name__), store=store, tools=[fn])
        a.run("list the files").wait()  # the turn goes on: no UnicodeEncodeError
        text = _result(a).text()
        assert "caf\\udce9.txt" in text.replace("\\\\", "\\") and "1 undecodable character" in text, text
        assert _result(a).is_error is (fn is fails)
        back = _result(durable.Agent(store=store, session_id=a.session_id)).text()  # stored, and read back
        assert back == text
        escaped = text.split("caf", 1)[1].split(".txt")[0].replace("\\\\", "\\")
        assert codecs.decode(escaped, "unicode_escape").encode("utf-8", "surrogateescape") == b"\xe9"


def test_a_lone_surrogate_in_tool_arguments_is_kept_escaped_and_counted(tmp_path):
    seen = []

    def read(path: str) -> str:
        """Read a file."""
        seen.append(path)
        return "ok"

    store = JsonlStore(tmp_path / "store")
    a = durable.Agent(model=calling("read", {"path": "caf\udce9.txt", "caf\udce9": 1}), store=store, tools=[read])
    a.run("read it").wait()
    call = a.entries()[1].message.tool_calls()[0]
    assert call.arguments["path"] == "caf\\udce9.txt"  # the byte recoverable, not U+FFFD
    assert call.extra == {"escaped_surrogates": 2}  # the entry says so
    again = durable.Agent(store=store, session_id=a.session_id).entries()[1].message.tool_calls()[0]
    assert again.arguments == call.arguments and again.extra == call.extra


# -- 11. a tool returning an iterable that never ends --------------------------------------


def test_an_unbounded_iterable_result_is_refused_not_iterated(tmp_path):
    r, w = os.pipe()
    os.write(w, b"a line\n")  # the write end stays open: reading the pipe to its end never returns
    pipe = os.fdopen(r)

    def counter():
        """Count."""
        return itertools.count()

    def stream():
        """A pipe."""
        return pipe

    def nested():
        """A generator inside a dict."""
        return {"rows": (i for i in itertools.count())}

    def fine():
        """Sized values are converted."""
        return {"rows": list(itertools.islice(itertools.count(), 3)), "set": {1}, (1, 2): "pair"}

    for fn in (counter, stream, nested, fine):
        a = durable.Agent(model=calling(fn.__name__), tools=[fn])
        done = threading.Event()
        worker = threading.Thread(target=lambda a=a: (a.run("go").wait(), done.set()), daemon=True)
        start = time.monotonic()
        worker.start()
        assert done.wait(20), f"{fn.__name__}: the run did not finish"
        assert time.monotonic() - start < 10
        res = _result(a)
        if fn is fine:
            assert not res.is_error and res.text() == '{"rows":[0,1,2],"set":[1],"1,2":"pair"}'
        else:
            assert res.is_error, res.text()
            assert "without a length that may never end" in res.text() and "return a list" in res.text()
    os.close(w)
    pipe.close()


def test_a_result_too_big_to_convert_is_refused_in_one_line(monkeypatch):
    from durable_nb.durable import tools

    monkeypatch.setattr(tools, "MAX_RESULT_VALUES", 1000)

    def big():
        """Many values."""
        return list(range(5000))

    a = durable.Agent(model=calling("big"), tools=[big])
    a.run("go").wait()
    assert _result(a).is_error and "more than 1,000 values" in _result(a).text()


# -- 16. arguments nested too deeply --------------------------------------------------------


def test_deeply_nested_tool_arguments_give_an_error_result_not_a_recursion_error():
    assert (
        ai.ToolCall("c", "t", ai.tool_arguments("[" * 100_000)).malformed()
        == "the arguments are JSON nested too deeply to read"
    )
    obj = '{"a":' * 100_000 + "1" + "}" * 100_000
    assert "nested too deeply" in ai.tool_arguments(obj)["_error"]

    def t(a: object = None) -> str:
        """Anything."""
        return "ran"

    a = durable.Agent(model=calling("t", raw=obj), tools=[t])
    a.run("go").wait()  # the run goes on
    res = _result(a)
    assert res.is_error and "nested too deeply" in res.text()


# -- 21. every valid parameter name -------------------------------------------------------


def test_every_python_parameter_name_reaches_the_schema_and_the_tool():
    got = {}

    def configure(model_config: str, model_fields: int = 1, schema: str = "", _private: str = "", copy: bool = False):
        """Configure.

        Args:
            model_config: the configuration's name.
        """
        got.update(model_config=model_config, model_fields=model_fields, schema=schema, _private=_private, copy=copy)
        return "ok"

    tool = durable.Tool(configure)
    assert list(tool.parameters["properties"]) == ["model_config", "model_fields", "schema", "_private", "copy"]
    assert tool.parameters["required"] == ["model_config"]
    assert tool.parameters["properties"]["model_config"]["description"] == "the configuration's name."
    args = {"model_config": "dev", "model_fields": 2, "schema": "s", "_private": "p", "copy": True}
    a = durable.Agent(model=calling("configure", args), tools=[configure])
    a.run("go").wait()
    assert not _result(a).is_error and got == args
    with pytest.raises(durable.ToolArgumentsError, match="model_config: Field required"):
        tool.validate({})
    with pytest.raises(durable.ToolArgumentsError, match="nope"):
        tool.validate({"model_config": "x", "nope": 1})

    def reserved(_raw: str) -> str:
        return _raw

    with pytest.raises(durable.ToolError, match="parameter '_raw' is reserved"):
        durable.Tool(reserved)
