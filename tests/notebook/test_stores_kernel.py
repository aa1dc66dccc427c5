"""The notebook on every store, in real kernels: ``%durable store``, ``sessions``, ``search``,
``open`` at a hit, the widget; and two kernels on one PostgreSQL session, where a turn in one
shows up in the other's open widget without anything being run there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kernel import Kernel

STORES = ["jsonl", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
def spec(request, tmp_path):
    return {
        "jsonl": lambda: str(tmp_path / "logs"),
        "sqlite": lambda: f"sqlite://{tmp_path / 'team.db'}",
        "postgres": lambda: request.getfixturevalue("pg_dsn"),
    }[request.param]()


def _out(r) -> str:
    return r.stdout + r.stderr + str(r.error or "") + str(r.displays)


def test_every_store_works_the_same_in_a_notebook(nb, spec, pg_server):
    k = nb.k
    try:
        r = k.ok(f"%durable store {spec}")
        assert (
            r.stdout.startswith("store: ") and "(0 sessions)" in r.stdout
        )  # the notebook's own: made by its first write
        k.ok("%durable new alpha")
        r = nb.cell("the zebra crossing")
        assert r.status == "ok", r
        k.ok("%durable new beta")
        assert nb.cell("a zebra on a branch").status == "ok"
        r = k.ok("%durable sessions")
        assert "2 session(s)" in r.shown and "alpha" in r.shown and "beta" in r.shown
        assert "2 entries" in r.shown  # each: the user message and the offline reply

        r = k.ok("%durable search zebra")
        lines = r.stdout.splitlines()
        opens = [line.strip() for line in lines if line.strip().startswith("%durable open alpha")]
        assert opens, r.stdout  # a hit in alpha, with the line that opens it there
        r = k.ok("%durable search zebra --session beta")
        assert "alpha" not in r.stdout and "%durable open beta" in r.stdout
        assert "no entry holds every word" in k.ok("%durable search unicorn").stdout

        r = k.ok(opens[0])  # open alpha read-only, the leaf at the hit (the user message)
        assert "read-only" in r.stdout
        hit = opens[0].split()[-1]
        assert k.value("get_ipython().find_magic('durable').__self__.state.agent.leaf_id") == hit
        r = k.ok("%durable show")
        assert any("application/vnd.jupyter.widget-view+json" in d["data"] for d in r.displays)
        r = k.run("%durable use alpha")  # inspection ends when the notebook picks a session
        k.ok("%durable close")

        r = k.ok("%durable status")
        assert "session  beta" in r.stdout or "session  alpha" in r.stdout

        # %config takes the same strings; the DSN's password never reaches an output
        k.ok(f"%config DurableMagics.store = {spec!r}")
        shown = k.ok("%config DurableMagics")
        if spec.startswith("postgresql://"):
            assert "durable:***@" in shown.stdout  # the setting is shown masked
        assert "Error" not in _out(k.ok("%durable sessions"))  # the store still opens (with its password)
        for r in (shown, k.ok("%durable store"), k.ok("%durable sessions"), k.ok("%durable")):
            assert pg_server.password not in _out(r)
    finally:
        k.ok("%config DurableMagics.store = '.durable'")


def test_a_store_that_cannot_be_opened_is_one_line_and_changes_nothing(nb, pg_server):
    k = nb.k
    bad = pg_server.dsn(password="Not-The-Pw-4411")
    r = k.run(f"%durable store {bad}")
    assert r.status == "error" and r.reply["ename"] == "UsageError", (r.reply, r.stderr)
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("UsageError: cannot connect to PostgreSQL at postgresql://durable:***@")
    assert "password authentication failed" in line and "Not-The-Pw-4411" not in _out(r) + str(r.reply)
    assert "JSONL folder" in k.ok("%durable store").stdout  # still the notebook's folder


def test_two_kernels_on_one_postgres_session_a_turn_in_one_appears_in_the_others_open_widget(
    pg_dsn, tmp_path, pg_server
):
    a, b = Kernel(tmp_path), Kernel(tmp_path)
    try:
        for k in (a, b):
            k.ok("%load_ext durable_nb")
            k.ok(f"%durable store {pg_dsn}")
            k.ok("%durable use shared")
        b.ok("w = get_ipython().run_line_magic('durable', 'show')\nw")
        assert b.value("w.tree['entries']") == 0
        # a page draws it and asks for its lines (as widget.js does once rendered)
        b.ok(
            "w._handle_msg({'content': {'data': {'method': 'custom', 'content': {'action': 'lines', 'start': 0, 'stop': 50}}}, 'buffers': []})"
        )
        while True:  # drain b's output so far
            try:
                b.kc.get_iopub_msg(timeout=0.2)
            except Exception:
                break

        r = a.run("%%durable\nhello from kernel A, live")
        assert r.status == "ok"

        # Nothing is run in b: its kernel pushes the new lines to its page on its own, receipt by receipt.
        pushed: dict[str, dict] = {}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(pushed) < 2:
            try:
                msg = b.kc.get_iopub_msg(timeout=1)
            except Exception:
                continue
            data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
            if data.get("method") == "custom" and data["content"].get("reply") == "lines":
                for line in data["content"]["lines"]:
                    pushed[line["row"]["id"]] = line["row"]
        rows = list(pushed.values())
        assert [r["role"] for r in rows] == ["user", "assistant"], "kernel B's widget was not updated"
        assert rows[0]["preview"] == "hello from kernel A, live"
        assert b.value("[x['row']['preview'] for x in w.lines(0, 10)][:1]") == ["hello from kernel A, live"]

        # B's leaf stays where B was: its own turn grows a sibling branch, nothing is lost (R14).
        assert b.value("w.leaf_id") == ""
        b.run("%%durable\nhello from kernel B")
        a.ok("from durable_nb.session import open_store as _o")
        entries = a.value(f"[(e.parent_id, e.message.role) for e in _o({pg_dsn!r}).load_entries('shared')]")
        assert len(entries) == 4 and [p for p, _ in entries].count("") == 2  # two roots: two branches
        assert pg_server.password not in str(entries)
    finally:
        a.shutdown()
        b.shutdown()


def test_search_works_on_a_store_of_ones_own_that_has_only_the_contract():
    from durable_nb import session
    from durable_nb.notebook.state import NotebookSession

    class Plain:  # the five methods of session.Store, nothing else
        def __init__(self) -> None:
            self._m = session.MemoryStore()
            for name in ("create_session", "load_session", "load_entries", "append_entries", "list_sessions"):
                setattr(self, name, getattr(self._m, name))

    st = NotebookSession(Plain(), "mine")
    st.own.append("a yak in the notes")
    assert not hasattr(st.store, "search") and isinstance(st.store, session.Store)
    (hit,) = st.search("YAK notes")
    assert (hit.session_id, hit.snippet) == ("mine", "a yak in the notes")


def test_status_lines_name_a_store_in_the_notebooks_folder_relatively(tmp_path):
    """Issue 27 #5: a saved notebook holds no absolute path of the machine it ran on."""
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb")
        k.ok("%durable new rel")
        k.ok("%%durable\nhello")
        outs = [k.ok(f"%durable {verb}").shown for verb in ("status", "sessions", "store", "new rel2", "search hello")]
        said = "\n".join(outs)
        assert outs[0].startswith(f"session  rel  ({Path('.durable', 'rel.jsonl')})"), outs[0]
        assert "2 entries with 'hello' in .durable:" in said and "session(s) in .durable:" in said
        assert "new session rel2 in .durable" in said and "store: JSONL folder .durable (" in said
        assert str(tmp_path) not in said
        other = tmp_path.parent / f"{tmp_path.name}-elsewhere"
        k.ok(f"%durable store {other}")  # outside the notebook's folder: named in full
        assert f"store: JSONL folder {other} (0 sessions)" in k.ok("%durable store").stdout
    finally:
        k.shutdown()
