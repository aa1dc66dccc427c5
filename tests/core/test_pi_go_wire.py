"""pi-go wire compatibility, both ways, against bytes pi-go's own code wrote (fixtures/pi-go/SOURCES.md).

pi-go → durable_nb: a log written by pi-go's fs store (every entry kind and content block) loads, and
what the stores write back holds every field it held, value for value (key order aside), through
load → append → reload on every store, a fork and the legacy-meta upgrade. durable_nb → pi-go: what
pi-go read of a durable_nb log agrees with it on every field pi-go knows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from durable_nb import ai, durable, session
from durable_nb.importers.pi_go import upgrade_legacy_meta
from durable_nb.session import JsonlStore, LegacyMetaWarning, codec, created_key

FIXTURES = Path(__file__).parent / "fixtures" / "pi-go"


class Note(session.CustomEntry):
    """pi-go's fidgen registers kind "note" with a json-tagged body (and tags, which stay in data here)."""

    kind: str = "note"
    body: str = ""


@pytest.fixture(autouse=True)
def kinds(monkeypatch):
    """Kinds as fidgen has them: "note" is Note, "artifact" unregistered (other tests register both kinds,
    with fields of their own)."""
    from durable_nb.session import entry

    monkeypatch.setitem(entry._CUSTOM, "note", Note)
    monkeypatch.delitem(entry._CUSTOM, "artifact", raising=False)


def lines(f: Path) -> list[dict]:
    return [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]


def opened(tmp_path: Path, name: str) -> tuple[JsonlStore, str]:
    """A JSONL store holding a copy of the fixture ``name`` (the store reads <id>.jsonl)."""
    shutil.copy(FIXTURES / name, tmp_path / name)
    return JsonlStore(tmp_path), name.removesuffix(".jsonl")


def written(entries: list[session.Entry]) -> list[dict]:
    return [json.loads(codec.encode_line(e)) for e in entries]


def test_every_pi_go_entry_kind_and_block_loads_with_its_meaning(tmp_path):
    store, sid = opened(tmp_path, "pi-go-wire.jsonl")
    by_id = {e.id: e for e in store.load_entries(sid)}
    user = by_id["e1"].message
    assert user.timestamp == "2026-03-02T09:00:01Z" and by_id["e1"].parent_id == ""
    image, pdf, by_url, by_file_id = user.content[1:]
    assert image == ai.Image(b"\x89PNG\r\n\x1a\n", "image/png")
    assert (pdf.data, pdf.name, pdf.mime_type) == (b"%PDF-1.4\n", "report.pdf", "application/pdf")
    assert (by_url.data, by_url.url, by_url.name) == (b"", "https://example.com/q3.pdf", "q3.pdf")
    assert by_file_id.file_id == "file-abc123" and ai.describe_block(by_url).endswith("at https://example.com/q3.pdf>")
    reply = by_id["e2"].message
    think, signed_only, text, call, server = reply.content
    assert think == ai.Thinking(text="The report is a PDF; read it first.", signature="EqQBCkYIBxgCKkDsig==")
    assert signed_only.text == "" and signed_only.signature == "RedactedOnlySig=="
    assert (text.text, text.signature) == ("Reading both.", "txt-sig-1")
    assert call.signature == "tc-sig" and call.arguments == {"pages": [1, 2], "path": "report.pdf"}
    assert (server.server, server.server_type, server.output["raw"]) == (
        True,
        "web_fetch",
        {"status": 200, "bytes": 1234},
    )
    assert (reply.api, reply.provider, reply.usage["cost"]["input"]) == ("anthropic-messages", "anthropic", 0.0036)
    failed = by_id["e4"].message
    assert failed.content == [] and failed.error == "overloaded_error: the server is overloaded"
    assert by_id["e3"].message.is_error and by_id["c1"].tokens_before == 2048
    note, artifact = by_id["n1"], by_id["a1"]
    assert isinstance(note, Note) and note.body == "checked by hand" and note.data == {"tags": ["q3", "finance"]}
    assert artifact.kind == "artifact" and artifact.data == {"Content": "# Proposal", "Title": "draft"}  # Go's names
    # the tree: two tool results of one call are siblings, oldest first
    (root,) = session.tree(by_id.values())
    assert [n.entry.id for n in root.children[0].children] == ["e3", "e3b"]


@pytest.mark.parametrize("name", ["pi-go-wire.jsonl", "pi-go-meta.jsonl"])
def test_a_pi_go_log_is_written_back_field_for_field_by_every_store(tmp_path, store, name):
    src, sid = opened(tmp_path, name)
    original = lines(FIXTURES / name)[1:]
    if "meta" in name:
        with pytest.warns(LegacyMetaWarning, match="1 entry carries"):
            entries = src.load_entries(sid)
    else:
        entries = src.load_entries(sid)
    assert written(entries) == original
    store.create_session("copy", entries=entries[:2])
    store.append_entries("copy", entries[2:])
    with pytest.warns(LegacyMetaWarning) if "meta" in name and isinstance(store, JsonlStore) else _nothing():
        again = store.load_entries("copy")
    assert again == entries and written(again) == original


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_fork_of_a_pi_go_log_keeps_every_field_and_gets_pi_go_timestamps(tmp_path):
    src, sid = opened(tmp_path, "pi-go-wire.jsonl")
    agent = durable.Agent(store=src, session_id=sid)
    agent.branch("e5")
    child = agent.fork("child")
    copied = lines(tmp_path / "child.jsonl")[1:]
    on_path = {d["id"]: d for d in lines(FIXTURES / "pi-go-wire.jsonl")[1:]}
    path_ids = ["e1", "e2", "e3b", "e5"]
    assert len(copied) == len(path_ids) == len(child.entries())
    for old_id, new in zip(path_ids, copied):
        old = dict(on_path[old_id])
        assert new.pop("id") != old.pop("id")
        new.pop("parent_id", None), old.pop("parent_id", None)
        assert new == old  # message, timestamps, signatures, server output, usage: all of it


def test_upgrade_legacy_meta_of_a_pi_go_log_moves_the_flag_and_keeps_everything_else(tmp_path):
    dst = JsonlStore(tmp_path / "out")
    upgrade_legacy_meta(FIXTURES / "pi-go-meta.jsonl", dst, "upgraded")
    got = {d["id"]: d for d in lines(tmp_path / "out" / "upgraded.jsonl")[1:]}
    original = {d["id"]: d for d in lines(FIXTURES / "pi-go-meta.jsonl")[1:]}
    skill = got["m1"]
    assert "meta" not in skill and skill["message"]["injected"] == "meta"
    assert skill["message"]["timestamp"] == original["m1"]["message"]["timestamp"]
    assert got["m4"] == original["m4"] and got["m4"]["body"] == "kept through the upgrade"
    assert got["m2"] == original["m2"] and got["m3"] == original["m3"]


def test_durable_nb_layout_is_stable_and_pi_go_reads_every_field_it_knows():
    ours = lines(FIXTURES / "durable-nb-wire.jsonl")[1:]
    entries = [codec.decode(d) for d in ours]
    assert written(entries) == ours  # re-encoding our own log changes nothing
    read = {d["id"]: d for d in lines(FIXTURES / "durable-nb-wire.read-by-pi-go.jsonl")}
    assert list(read) == [d["id"] for d in ours]  # pi-go read every entry of it

    def agree(theirs, mine, where):
        if isinstance(theirs, dict):
            assert isinstance(mine, dict), where
            for k, v in theirs.items():
                if k == "created_at":
                    assert created_key(v) == created_key(mine[k]), where
                else:
                    agree(v, mine.get(k), f"{where}.{k}")
        elif isinstance(theirs, list):
            assert isinstance(mine, list) and len(mine) == len(theirs), where
            for i, (a, b) in enumerate(zip(theirs, mine)):
                agree(a, b, f"{where}[{i}]")
        else:
            assert theirs == mine, where

    for d in ours:
        agree(read[d["id"]], d, d["id"])
    # what pi-go left out is what it has no field for (our injection, timing, usage keys; the label's
    # fields, a kind its reader did not register), never a field it has
    dropped = {k for d in ours if d["type"] == "message" for k in d["message"]} - {
        k for d in read.values() if d["type"] == "message" for k in d["message"]
    }
    assert dropped == {"injected", "origin", "timing", "usage"}
