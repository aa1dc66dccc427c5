"""%durable annotate in a real kernel: the notebook's session, and a log opened read-only (a sidecar)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from test_kernel import one_line_usage_error

FIXTURES = Path(__file__).parent.parent / "importers" / "fixtures"


def test_annotate_the_session_and_a_read_only_log(nb):
    sid = nb.fresh()
    nb.cell("What is 2+2?")
    target = nb.log(sid)[1]["id"]
    r = nb.k.ok(f"%durable annotate {target[:6]} --score 0.5 --tag tools --tag wrong wrong tool choice")
    assert f"annotated {target} by " in r.stdout and "0.5 #tools #wrong wrong tool choice" in r.stdout, r.stdout
    (note,) = [e for e in nb.log(sid) if e.get("kind") == "annotation"]
    assert note["target_id"] == target and note["tags"] == ["tools", "wrong"] and note["score"] == 0.5
    assert note["note"] == "wrong tool choice" and note["by"]
    assert "--score needs a number" in one_line_usage_error(nb.k.run(f"%durable annotate {target} --score high x"))
    assert "no entry or label" in one_line_usage_error(nb.k.run("%durable annotate zzzzzz a note"))
    assert "needs a note, a score or a tag" in one_line_usage_error(nb.k.run(f"%durable annotate {target}"))

    log = nb.k.cwd / "heavy.jsonl"
    shutil.copy(FIXTURES / "spotter-tool_heavy.jsonl", log)
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    nb.k.ok("%durable open heavy.jsonl")
    r = nb.k.ok("%durable log")
    entry = next(line[2:].split()[0] for line in r.stdout.splitlines()[1:] if "←" in line)
    r = nb.k.ok(f"%durable annotate {entry} --tag reviewed looks right")
    assert "sidecar session" in r.stdout and "the log is not written" in r.stdout, r.stdout
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before
    kept = [e for s in [str(nb.k.cwd / ".durable")] for e in _all_sidecars(Path(s))]
    assert [e.note for e in kept] == ["looks right"] and kept[0].source == str(log.resolve())
    # the read-only log's widget draws its sidecar annotations as chips (the fallback too)
    html = nb.k.ok("%durable show").html()
    row = html.split(f'data-id="{entry}"')[1].split("</tr>")[0]
    assert "#reviewed" in row and "looks right" in row, row


def _all_sidecars(folder: Path):
    from durable_nb.session import JsonlStore

    st = JsonlStore(folder)
    out = []
    for rec in st.list_sessions():
        if rec.id.startswith("annotations-heavy-"):
            out += st.load_entries(rec.id)
    return out
