"""Every store holds every value the codec writes, and every store matches a search the same way.

Runs on all four stores (``store`` in ``conftest.py``: memory, JSONL,
SQLite, a real PostgreSQL). PostgreSQL's JSONB has no form for a NUL
character or a NaN/Infinity number: the store keeps such an entry escaped
and restores it on read (issue 25 #8).
"""

from __future__ import annotations

import math

from durable_nb import ai, durable, session


def find(pattern: str) -> str:
    """Like ``find . -print0``: NUL-separated paths."""
    return "./a.txt\x00./b\x00.txt\x00"


def _turns():
    replies = iter(
        [
            ai.Message("assistant", [ai.ToolCall("c0", "find", {"pattern": "*\x00*"})]),
            ai.assistant_message("found two files"),
        ]
    )
    return lambda messages, request=None: next(replies)


def test_a_nul_in_a_tool_result_is_stored_and_read_back_by_every_store(store):
    agent = durable.Agent(model=_turns(), store=store, session_id="nul", tools=[find])
    agent.run("list the files").wait()
    stored = store.load_entries("nul")
    assert [session.view.display_text(e) for e in stored][-2:] == [find("*"), "found two files"]
    call = stored[1].message.tool_calls()[0]
    assert call.arguments == {"pattern": "*\x00*"}
    assert stored == agent.entries()
    resumed = durable.Agent(model=_turns(), store=store, session_id="nul", tools=[find])
    assert resumed.leaf_id == agent.leaf_id  # nothing dangling: the next turn goes on from the reply
    assert [h.entry_id for h in store.search("txt", session="nul")] == [stored[2].id]


def test_nan_infinity_and_nul_in_custom_data_are_kept_by_every_store(store):
    data = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "nul": "a\x00b", "keys": {"\x00": 1}}
    e = session.CustomEntry(id="c", kind="numbers", data=data)
    store.create_session("v")
    store.append_entries("v", [e])
    if hasattr(store, "summaries"):  # the SQL stores skip an id they hold with the same content
        store.append_entries("v", [e])  # a retried append: the same entry, not a clash
    (back,) = store.load_entries("v")
    assert back.data["nul"] == "a\x00b" and back.data["keys"] == {"\x00": 1}
    assert math.isnan(back.data["nan"]) and back.data["inf"] == math.inf and back.data["-inf"] == -math.inf
    assert session.codec.same_line(session.encode_line(back), session.encode_line(e))
    if hasattr(store, "summaries"):
        assert [(r.id, n) for r, n, _ in store.summaries()] == [("v", 1)]


# -- one search rule on every store (issue 25 #20) --------------------------------------------
# The rule (durable_nb/session/search.py): every word of the query is a word of the entry's text;
# words are runs of letters, digits and '_' (Python's \w), case-folded; accents count and '_' joins.

TEXTS = {
    "e1": "café au lait",
    "e2": "cafe noir",
    "e3": "see foo_bar here",
    "e4": "foo and bar",
    "e5": "Straße",
    "e6": "naïve ÉCOLE",
    "e7": "cafe\u0301 in NFD",
    "e8": "a " + "long" * 30 + " word",
}
TABLE = [
    ("cafe", ["e2", "e7"]),  # NFD: the combining accent is not a letter, so "cafe" is a word there
    ("café", ["e1"]),
    ("CAFÉ au", ["e1"]),
    ("foo bar", ["e4"]),
    ("foo_bar", ["e3"]),
    ("bar", ["e4"]),
    ("strasse", ["e5"]),
    ("STRASSE", ["e5"]),
    ("naive", []),
    ("naïve école", ["e6"]),
    ("nfd", ["e7"]),
    ("fo", []),
    ("long" * 30, ["e8"]),  # longer than PostgreSQL indexes
    ("LONG" * 30 + " word", ["e8"]),
    ("long" * 29, []),
]


def test_every_store_matches_a_search_by_the_same_rule(store):
    from core_helpers import msg

    store.create_session("words")
    store.append_entries("words", [msg(i, text=t) for i, t in TEXTS.items()])
    got = [(q, sorted(h.entry_id for h in store.search(q))) for q, _ in TABLE]
    assert got == TABLE
    assert [h.entry_id for h in store.search("café", limit=1)] == ["e1"]


def test_a_sqlite_database_made_before_with_its_accent_folding_index_matches_by_the_rule_too(tmp_path):
    import sqlite3

    from core_helpers import msg

    db = sqlite3.connect(tmp_path / "old.db")  # the index of databases made before: accents folded, '_' splits
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_id TEXT NOT NULL DEFAULT '', "
        "created_at TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE entries (session TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, "
        "PRIMARY KEY (session, id));"
        "CREATE VIRTUAL TABLE entries_fts USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2');"
    )
    db.close()
    store = session.SqliteStore(tmp_path / "old.db")
    store.create_session("words")
    store.append_entries("words", [msg(i, text=t) for i, t in TEXTS.items()])
    assert [(q, sorted(h.entry_id for h in store.search(q))) for q, _ in TABLE] == TABLE
    store.close()
