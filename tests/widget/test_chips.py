"""Bookkeeping entries (labels, verdicts, annotations, leaf moves) are chips on the entry they name:
never a row, never a transcript line, never the leaf a person sees; the next turn after a label still
continues the chain. The data in the layout, the lines, the views, the static fallback and the page."""

from __future__ import annotations

from durable_nb import durable
from durable_nb.kinds.leaf_move import move_leaf
from durable_nb.kinds.verdict import VerdictEntry
from durable_nb.session import entry_kind, new_id, now
from durable_nb.session.kinds import bookkeeping, shown_leaf, target_of
from durable_nb.share.page import page_data
from durable_nb.widget import SessionWidget, fallback
from durable_nb.widget.chips import Chips


def whats(w):
    return [(line["row"]["what"], line["depth"], line["mark"]) for line in w.lines(0, 999)]


def labelled_agent():
    a = durable.Agent(model="offline")
    a.run("one").wait()
    reply = a.leaf_id
    a.label("v1")  # the agent's leaf moves onto the label entry
    return a, reply


def test_a_label_is_no_row_and_the_leaf_badge_stays_on_the_labelled_reply(recording):
    a, reply = labelled_agent()
    label = a.entry(a.leaf_id)
    assert bookkeeping(label) and target_of(label) == reply and entry_kind(label) == "label"
    assert shown_leaf(a.leaf_id, lambda i: a.entry(i)) == reply
    w = SessionWidget(a)
    assert whats(w) == [("user", 0, "root"), ("assistant", 0, "cont")]  # no "custom · label" row
    assert w.tree["leaf_line"] == 1 and w.leaf_id == label.id  # the agent's leaf is untouched
    assert w.views["at"] == reply and w.views["title"] == "assistant message"  # the details are the reply's
    assert all(t["type"] != "custom" for t in w.views["transcript"])  # never a transcript line
    assert w.labels == {"v1": reply}  # drawn as a chip from the labels


def test_a_turn_after_a_label_continues_the_chain(recording):
    a, reply = labelled_agent()
    label_id = a.leaf_id
    w = SessionWidget(a)
    a.run("two").wait()
    w.sync()
    assert a.entry(a.path()[-2].id).parent_id == label_id  # the turn hangs under the label entry, as before
    assert whats(w) == [("user", 0, "root"), ("assistant", 0, "cont"), ("user", 0, "cont"), ("assistant", 0, "cont")]
    assert w.views["at"] == a.leaf_id and w.tree["leaf_line"] == 3
    assert [m["role"] for m in w.views["model"]] == ["user", "assistant", "user", "assistant"]
    # a fresh widget lays it out the same (build, not add)
    assert whats(SessionWidget(a)) == whats(w)


def test_annotations_latest_per_author_win_all_kept(recording):
    a, reply = labelled_agent()
    w = SessionWidget(a)
    a.annotate(reply, note="wrong tool", tags=["wrong-tool"], score=0.2, by="ana")
    a.annotate(reply, note="fine after all", score=0.9, by="ana")  # a correction: the latest of ana's wins
    a.annotate(reply, tags=["style"], by="bob")
    before = len(w.comm.sent)
    w.sync()
    assert "tree" in w.comm.updates(before)[-1]  # the reply's line changed: the page fetches it again
    assert w.tree["changed_from"] <= 1
    (line,) = [x for x in w.lines(0, 9) if x["row"]["id"] == reply]
    chips = line["chips"]
    assert [(c["kind"], c["by"], c["count"]) for c in chips] == [("annotation", "ana", 2), ("annotation", "bob", 1)]
    assert chips[0]["note"] == "fine after all" and chips[0]["score"] == 0.9 and "tags" not in chips[0]
    assert chips[1]["tags"] == ["style"]
    assert len(whats(w)) == 2  # still no row for any of them
    assert sum(1 for e in a.entries() if entry_kind(e) == "annotation") == 3  # all kept


def test_verdict_chips_and_leaf_moves_are_never_rows():
    a = durable.Agent(model="offline")
    a.run("q").wait()
    reply = a.leaf_id
    for passed, score in ((False, 0.1), (True, 1.0)):
        v = VerdictEntry(id=new_id(), parent_id=reply, created_at=now(), target_id=reply, run="r", grader="exact",
                         passed=passed, score=score)  # fmt: skip
        a.append(v, move=False)
    move_leaf(a, a.path()[0].id)
    move_leaf(a, reply)
    chips = Chips.of(a.entries())
    assert [(c["kind"], c["grader"], c["passed"], c["count"]) for c in chips.on(reply)] == [
        ("verdict", "exact", True, 2)
    ]
    w = SessionWidget(a)
    assert [x["row"]["what"] for x in w.lines(0, 9)] == ["user", "assistant"]


def test_the_static_fallback_and_the_page_show_chips_and_the_leaf_on_the_reply():
    a, reply = labelled_agent()
    a.annotate(reply, note="<b>bold</b> claim", tags=["check"], score=3, by="ana")
    html = SessionWidget(a)._repr_mimebundle_()[0]["text/html"]
    row = html.split(f'data-id="{reply}"')[1].split("</tr>")[0]
    assert "[# v1]" in row and "[leaf]" in row and "★ 3 #check · ana: &lt;b&gt;bold&lt;/b&gt; claim" in row
    assert "custom · label" not in html and "custom · annotation" not in html
    assert f"leaf {reply[:8]}" in html  # the header names the reply, not the label entry
    data = page_data(a)
    assert [x["row"]["what"] for x in data["lines"]] == ["user", "assistant"]
    assert data["shown_leaf"] == reply and data["state"]["tree"]["leaf_line"] == 1
    assert data["lines"][1]["chips"][0]["tags"] == ["check"]
    assert fallback.chip_text(data["lines"][1]["chips"][0]) == "★ 3 #check · ana: <b>bold</b> claim"
