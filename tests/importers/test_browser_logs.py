"""The session browser's rows for llm's database: one per conversation, each opening read-only."""

from __future__ import annotations

from llm_logs import write_logs

from durable_nb.digests import log_digests
from durable_nb.importers.found import known_logs


def test_each_llm_conversation_is_a_row_that_opens_it(shell, tmp_path, monkeypatch):
    from durable_nb.notebook.verbs.sessions import _open_row

    home = tmp_path / "home"
    db = home / ".config" / "io.datasette.llm" / "logs.db"
    db.parent.mkdir(parents=True)
    write_logs(db)
    rows = log_digests(known_logs(home=home, env={}))
    assert rows and all(r.tool == "llm" and r.read_only and r.ref.startswith(f"{db} ") for r in rows)
    assert all(r.turns and r.models for r in rows) and len({r.ref for r in rows}) == len(rows)
    monkeypatch.chdir(tmp_path)
    ctx = shell.find_magic("durable").__self__.ctx
    try:
        said = _open_row(ctx, rows[0].ref)
        conversation = rows[0].ref.rsplit(" ", 1)[1]
        assert said.startswith(f"%durable open {db} {conversation}\nopened {db}"), said
        assert ctx.state.inspected is not None and "read-only" in said
    finally:
        ctx.state.close()
