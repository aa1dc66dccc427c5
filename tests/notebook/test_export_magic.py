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


def test_export_redact_replaces_secrets_and_says_how_many(nb):
    import pytest

    pytest.importorskip("detect_secrets")
    key, aws = "sk-proj-Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3Fs5Gc0Ya8Ue2Io7Tp4Lk9Mn", "AKIAZ7QW3RT5YU2IO4PL"
    sid = nb.fresh()
    nb.cell(f"Deploy with {aws}, mail ada@example.org")
    nb.cell(f"my key is {key}", options="--note")
    cwd = nb.k.cwd
    r = nb.k.ok(f"%durable export {sid}-shared.jsonl --redact")
    assert r.stdout.splitlines()[-1].startswith("redacted "), r.stdout
    counts = dict(reversed(p.split(" ", 1)) for p in r.stdout.splitlines()[-1].split(": ", 1)[1].split(", "))
    log = nb.path_of(sid).read_text()  # the offline model echoes the prompt: count what the log holds
    assert counts == {"api-key": str(log.count(key)), "aws-access-key": str(log.count(aws))}, r.stdout
    text = (cwd / f"{sid}-shared.jsonl").read_text()
    assert key not in text and aws not in text and "ada@example.org" in text
    assert len(open_session(cwd / f"{sid}-shared.jsonl").agent.entries()) == len(nb.log(sid)) - 1
    r = nb.k.ok(f"%durable export {sid}-shared.md --redact emails")
    assert (
        f"{log.count('ada@example.org')} email" in r.stdout
        and "ada@example.org" not in (cwd / f"{sid}-shared.md").read_text()
    )
    err = one_line_usage_error(nb.k.run(f"%durable export {sid}-x.html --redact nonsense"))
    assert "--redact takes nothing" in err and "not 'nonsense'" in err
    assert not (cwd / f"{sid}-x.html").exists()
