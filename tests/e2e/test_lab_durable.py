"""In real JupyterLab: tagged cells take effect, the widget renders, and a click in it reaches Python."""

from __future__ import annotations

import json
import re

from .lab import open_notebook, run_all, stream_text, write_notebook

MARKER = "EPHEMERAL-7f3a reminder: the build is red right now"
CELLS = [
    ("setup", "%load_ext durable_nb\n%durable new e2e", []),
    ("skill", "%%durable\nSkill: answer like a release manager.", ["meta"]),
    ("reminder", f"%%durable\n{MARKER}", ["ephemeral"]),
    ("ask-1", "%%durable\nCan we ship today?", []),
    ("ask-2", "%%durable\nAnd tomorrow?", []),
    ("show", "%durable show", []),
    ("leaf", "from durable_nb.notebook import current\nprint('LEAF', current().agent.leaf_id)", []),
]


def load_log(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_tags_widget_and_click_in_jupyterlab(lab, lab_root, page, screenshots):
    write_notebook(lab_root / "durable_e2e.ipynb", CELLS)
    open_notebook(page, lab, "durable_e2e.ipynb")
    ran = run_all(page)

    # 1. The tags took effect: read the store the kernel wrote beside the notebook.
    store_file = lab_root / ".durable" / "e2e.jsonl"
    entries = load_log(store_file)
    metas = [e for e in entries if e.get("message", {}).get("injected") == "meta"]
    assert [(m["message"]["origin"], m["message"]["content"][0]["text"]) for m in metas] == [
        ("cell:skill", "Skill: answer like a release manager.")
    ]
    assert not any(e.get("message", {}).get("injected") == "ephemeral" for e in entries)
    # the ephemeral cell's text is stored nowhere but inside the offline replies that quote it
    assert not [
        e for e in entries if "EPHEMERAL-7f3a" in json.dumps(e) and e.get("message", {}).get("role") != "assistant"
    ]
    users = [e for e in entries if e.get("message", {}).get("role") == "user" and "injected" not in e["message"]]
    assert [u["message"]["origin"] for u in users] == ["cell:ask-1", "cell:ask-2"]
    assert users[0]["parent_id"] == metas[0]["id"]  # chained past the ephemeral entry
    replies = [e for e in entries if e.get("message", {}).get("role") == "assistant"]
    first_reply = replies[0]["message"]["content"][0]["text"]  # the offline model lists what it received
    assert "[meta · cell:skill]: Skill: answer like a release manager." in first_reply
    assert f"[ephemeral · cell:reminder]: {MARKER}" in first_reply
    second_reply = replies[1]["message"]["content"][0]["text"]
    assert "[meta · cell:skill]" in second_reply
    assert not re.search(r"^\d+\. user \[ephemeral", second_reply, re.M)  # seen for one run only
    cells = {c["id"]: c for c in ran["cells"]}
    assert "LEAF " + replies[1]["id"] in stream_text(cells["leaf"])

    # 2. The widget rendered in the page, with the session's entries.
    widget = page.locator(".dnb-widget")
    widget.wait_for(state="visible", timeout=20_000)
    widget.scroll_into_view_if_needed()
    row = widget.locator(f'.dnb-row[data-id="{replies[0]["id"]}"]')
    row.wait_for(state="visible", timeout=10_000)
    assert widget.locator(".dnb-row").count() >= len(entries)
    assert widget.locator(f'.dnb-row.dnb-leaf[data-id="{replies[1]["id"]}"]').count() == 1

    # 3. A click in the widget reaches Python: select the first reply, "Continue from here".
    row.click()
    widget.locator(".dnb-continue").click()
    widget.locator(f'.dnb-row.dnb-leaf[data-id="{replies[0]["id"]}"]').wait_for(timeout=10_000)  # Python synced back
    page.screenshot(path=screenshots / "durable_e2e.png")
    widget.screenshot(path=screenshots / "widget.png")

    leaf_cell = page.locator(".jp-Notebook .jp-CodeCell").nth(len(CELLS) - 1)
    leaf_cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")
    out = leaf_cell.locator(".jp-OutputArea-output")
    page.wait_for_function(
        "([el, want]) => el.innerText.includes(want)",
        arg=[out.element_handle(), "LEAF " + replies[0]["id"]],
        timeout=20_000,
    )
    assert re.search(r"LEAF [0-9a-f]{12}", out.inner_text()).group(0) == "LEAF " + replies[0]["id"]
