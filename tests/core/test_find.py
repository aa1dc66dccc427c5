"""The widget's find: session.Finder matches as %durable search does (every word, case-insensitive, whole
words), across every branch, and keeps up with a growing log."""

from __future__ import annotations

from core_helpers import msg

from durable_nb import ai, session
from durable_nb.session import search
from durable_nb.session.search import scan

LOG = [
    msg("u1", "", "Write the Release notes"),
    msg("a1", "u1", "- sessions survive restarts", role="assistant"),
    msg("u2", "a1", "release notes, grouped by audience"),  # branch 1
    msg("u2b", "a1", "RELEASE: notes for teachers"),  # branch 2 (a sibling)
    msg("m", "u2b", "releases are weekly", injected=ai.Injection.META),  # 'releases' is not the word 'release'
    session.CustomEntry(id="n", parent_id="u2b", kind="note", data={"body": "check the release notes"}),
]


def test_every_word_case_insensitive_whole_words_on_every_branch():
    f = session.Finder()
    assert f.find(LOG, "release notes") == ["u1", "u2", "u2b", "n"]
    assert f.find(LOG, "RELEASES") == ["m"]
    assert f.find(LOG, "releas") == []  # a word, not a prefix
    assert f.find(LOG, "note") == ["n"]  # a custom entry is found by its kind and data
    assert f.find(LOG, "teachers release") == ["u2b"]
    assert f.find(LOG, "  ...  ") == [] and f.find(LOG, "") == []


def test_same_hits_as_the_store_search():
    for query in ("release notes", "survive", "note", "check release", "audience grouped"):
        want = [h.entry_id for h in scan([("s", LOG)], query, 100)]
        assert session.Finder().find(LOG, query) == want, query


def test_keeps_up_with_appends_and_a_replaced_log():
    f = session.Finder()
    log = list(LOG[:2])
    assert f.find(log, "notes") == ["u1"]
    log += LOG[2:4]
    assert f.find(log, "notes") == ["u1", "u2", "u2b"]
    other = [msg("x", "", "notes elsewhere")]
    assert f.find(other, "notes") == ["x"]  # not an extension of what it saw: read again


def test_word_rule_is_the_set_of_words_rule():
    texts = ["footnotes notes", "snake_case case", "Straße STRASSE", "x2 2x x", "naïve café", "a-b a_b", "ab", ""]
    queries = ["notes", "case", "snake_case", "strasse", "x", "2", "café", "naïve", "a b", "ab", "b"]
    for t in texts:
        have = set(search.words(t))
        for q in queries:
            qw = search.words(q)
            assert search.matches(qw, t) == all(w in have for w in qw), (t, q)
