"""%durable export in a real kernel: the notebook's session (or an opened log) to .html, .md, .jsonl."""

from __future__ import annotations

from test_kernel import one_line_usage_error

from durable_nb.importers import open_session


def test_export_writes_each_format_and_mistakes_are_one_line(nb):
    sid = nb.fresh()
    nb.cell("Write a haiku about <b>logs</b>.")
    cwd = nb.k.cwd
    r = nb.k.ok(f"%durable export {sid}.html\n%durable export {sid}.md\n%durable export {sid}.jsonl")
    assert r.stdout.count(f"exported session {sid} (2 entries) to ") == 3, r.stdout
    page = (cwd / f"{sid}.html").read_text()
    assert page.startswith("<!doctype html>") and "Content-Security-Policy" in page
    assert "Write a haiku about &lt;b&gt;logs&lt;/b&gt;." in (cwd / f"{sid}.md").read_text()
    back = open_session(cwd / f"{sid}.jsonl").agent
    assert [e.id for e in back.entries()] == [e["id"] for e in nb.log(sid)[1:]]
    assert "must end in .html, .md or .jsonl" in one_line_usage_error(nb.k.run(f"%durable export {sid}.txt"))
    assert "no folder" in one_line_usage_error(nb.k.run("%durable export nowhere/x.html"))
    assert "export <path>" in one_line_usage_error(nb.k.run("%durable export"))
