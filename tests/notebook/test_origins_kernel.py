"""Issue 27 #7 and #13: ephemeral input a re-run no longer sends is said, compare shows what was sent,
and an origin shows as a reader can find it (never a raw JupyterLab cell UUID on every line)."""

from __future__ import annotations

import re
import uuid

from kernel import new_cell_id

LEAF = "__import__('durable_nb.notebook', fromlist=['current']).current().agent.leaf_id"


def test_a_rerun_says_the_ephemeral_input_it_no_longer_sends_and_compare_shows_it(nb):
    nb.fresh()
    e, t = new_cell_id(), new_cell_id()
    nb.cell("Today is Monday.", ["ephemeral"], e)
    r = nb.cell("What day is it?", [], t)
    assert f"[ephemeral · cell:{e}]: Today is Monday." in nb.k.value("_durable")
    first = nb.k.value(LEAF)
    r = nb.cell("What day is it now?", [], t)  # edited and re-run: the reminder was used once
    assert r.status == "ok", r.stderr
    (said,) = [x for x in r.stdout.splitlines() if x.startswith("⚠")]
    assert said == (
        f"⚠ its earlier run was also sent 1 ephemeral input (cell:{e} 'Today is Monday.'), used once and never "
        "stored: this run goes without it; re-run that cell first to send it again"
    )
    assert "ephemeral" not in nb.k.value("_durable")
    second = nb.k.value(LEAF)
    text = nb.k.ok(f"%durable compare {first} {second}").displays[-1]["data"]["text/plain"]
    assert f"{second[:8]} against {first[:8]}: 0 messages the same, 1 changed, 1 removed" in text, text
    assert f"- #1 user [ephemeral]: '(ephemeral input from cell:{e}: sent, its text never stored)'" in text

    # staged again before the re-run: nothing to say, and compare sees the same ephemeral input on both sides
    nb.cell("Today is Monday.", ["ephemeral"], e)
    r = nb.cell("What day is it, really?", [], t)
    assert "⚠" not in r.stdout
    third = nb.k.value(LEAF)
    text = nb.k.ok(f"%durable compare {first} {third}").displays[-1]["data"]["text/plain"]
    assert f"{third[:8]} against {first[:8]}: 1 message the same, 1 changed" in text, text


def test_an_origin_named_by_a_cell_uuid_is_not_printed_on_every_line(nb):
    nb.fresh()
    m, e = str(uuid.uuid4()), str(uuid.uuid4())  # JupyterLab's cell ids
    nb.cell("Answer in French.", ["meta"], m)
    nb.cell("Today is Monday.", ["ephemeral"], e)
    staged = nb.k.ok("%durable staged").stdout
    assert "1. [meta · cell] 'Answer in French.'" in staged and "2. [ephemeral · cell] 'Today is Monday.'" in staged
    nb.cell("What day is it?", [], new_cell_id())
    reply = nb.k.value("_durable")
    assert "user [meta · cell]: Answer in French." in reply and "user [ephemeral · cell]: Today is Monday." in reply
    assert m not in reply and e not in reply and not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", reply)
