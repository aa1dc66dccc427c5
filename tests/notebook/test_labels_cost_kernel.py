"""Labels and cost through the magics in a real ipykernel: labels work wherever an entry id does and
survive a restart; the footer and %durable status price a real SDK's reply with genai-prices' own figure."""

from __future__ import annotations

import re

from genai_prices import Usage, calc_price
from kernel import Kernel, new_cell_id
from test_kernel import one_line_usage_error

from durable_nb.cost import format_cost
from tests.providers.provider_wire import WireServer, openai_stream


def leaf(k) -> str:
    return k.value("__import__('durable_nb.notebook').notebook.current().agent.leaf_id")


def target(k, name: str) -> str:
    return k.value(f"__import__('durable_nb.notebook').notebook.current().agent.labels()[{name!r}]")


def test_labels_work_wherever_an_entry_id_does_and_survive_a_restart(tmp_path):
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb")
        k.ok("%durable new lab")
        one, two = new_cell_id(), new_cell_id()
        k.ok("%%durable\nfirst try", (), one)
        first = leaf(k)
        r = k.ok("%durable label v1")
        assert r.stdout.strip().startswith(f"label v1 → {first} (assistant ")
        k.ok("%durable rewind")
        k.ok("%%durable\nsecond try", (), two)  # a sibling branch: v1 is off the active path now
        second = leaf(k)
        k.ok("%durable label v2")
        user = k.value("__import__('durable_nb.notebook').notebook.current().agent.path()[0].id")
        k.ok(f"%durable label question {user[:6]}")  # a prefix names the entry
        listing = k.ok("%durable labels").stdout
        assert re.search(rf"^  v1 +{first} +assistant", listing, re.M)  # not on the active path
        assert re.search(rf"^\* v2 +{second} +assistant", listing, re.M)
        assert "labels   v1 → " in k.ok("%durable status").stdout
        log = k.ok("%durable log").stdout
        assert re.search(rf"^  {first} .*\[v1\]$", log, re.M) and re.search(rf"^\* {user} .*\[question\]$", log, re.M)

        # branch, open ... at, fork ... at take a label
        assert f"leaf is now {first}" in k.ok("%durable branch v1").stdout
        assert leaf(k) == first
        k.ok("%durable open lab v2")
        assert leaf(k) == second
        k.ok("%durable close")
        k.ok("w = get_ipython().run_line_magic('durable', 'show v2')")  # the widget opens at the label's entry
        assert k.value("w.selected_id") == second and leaf(k) == first  # the leaf stays
        k.ok("%durable fork lab-v2 v2")
        assert k.value("[m.text() for m in __import__('durable_nb.notebook').notebook.current().agent.messages()]")[
            0
        ] == ("second try")
        k.ok("%durable use lab")

        # relabel moves, unlabel removes, an entry may carry several names
        k.ok("%durable label v1 v2")
        assert target(k, "v1") == target(k, "v2") == second
        k.ok("%durable unlabel v2")
        assert "v2" not in k.value("__import__('durable_nb.notebook').notebook.current().agent.labels()")

        # newcomers' mistakes: one line each, with did-you-mean
        assert "needs a name" in one_line_usage_error(k.run("%durable label"))
        line = one_line_usage_error(k.run("%durable label my best try"))
        assert "one word" in line and "my-best" in line
        assert "one word" in one_line_usage_error(k.run("%durable label 'my best'"))
        assert "did you mean 'v1'" in one_line_usage_error(k.run("%durable branch v11"))
        assert "no entry or label 'deadbeef'" in one_line_usage_error(k.run("%durable label x deadbeef"))
        assert "did you mean 'question'" in one_line_usage_error(k.run("%durable unlabel questoin"))

        # a kernel restart reloads labels from the store
        k.restart()
        k.ok("%load_ext durable_nb")
        k.ok("%durable use lab")
        assert k.value("__import__('durable_nb.notebook').notebook.current().agent.labels()") == {
            "v1": second,
            "question": user,
        }
        k.ok("%durable branch question")
        assert leaf(k) == user
    finally:
        k.shutdown()


def test_footer_and_status_price_a_real_sdk_reply_with_the_tables_figure(tmp_path):
    k = Kernel(tmp_path)
    try:
        with WireServer() as wire:
            wire.add(
                openai_stream(["Hello"], model="gpt-4o-mini-2024-07-18", usage=(1234, 56)),
                openai_stream(["Again"], model="gpt-4o-mini-2024-07-18", usage=(1400, 20)),
            )
            k.ok("%load_ext durable_nb")
            k.ok(f"%durable model openai:gpt-4o-mini@{wire.url}/v1")
            r = k.ok("%%durable\nhi", (), new_cell_id())
            one = calc_price(Usage(input_tokens=1234, output_tokens=56), "gpt-4o-mini-2024-07-18").total_price
            assert f"— gpt-4o-mini-2024-07-18 · 1,234 in / 56 out tokens · {format_cost(one)} · " in r.stdout
            k.ok("%durable rewind")
            k.ok("%%durable\nhi again", (), new_cell_id())
            two = calc_price(Usage(input_tokens=1400, output_tokens=20), "gpt-4o-mini-2024-07-18").total_price
            k.ok("%durable model offline")
            k.ok("%%durable --chat\nand offline", (), new_cell_id())  # unpriced: the branch's cost is unknown
            status = k.ok("%durable status").stdout
        assert (
            f"cost     branch   1,400 in / 20 out tokens · cost unknown (1 of 2 replies unpriced; {format_cost(two)}"
            in (status)
        )
        assert (
            f"session  2,634 in / 76 out tokens · cost unknown (1 of 3 replies unpriced; {format_cost(one + two)}"
            in (status)
        )
        messages = k.value(
            "[__import__('msgspec').to_builtins(e.message) for e in "
            "__import__('durable_nb.notebook').notebook.current().agent.path() if hasattr(e, 'message')]"
        )
        assert messages[1]["usage"] == {"input_tokens": 1400, "output_tokens": 20}
    finally:
        k.shutdown()
