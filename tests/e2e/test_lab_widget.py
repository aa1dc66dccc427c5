"""The widget in a real JupyterLab 4 with a real kernel: it renders through anywidget, a receipt-driven
sync updates it live, and "Continue from here" moves the agent's leaf in the kernel."""

from __future__ import annotations

import nbformat

from .lab import kernel_stdout, open_notebook, run_all

CELLS = [
    """from durable_nb import durable, session
agent = durable.Agent(model=lambda m: "Hi! <img src=x onerror=window.__pwned=1>", store=session.MemoryStore(), session_id="lab")
agent.run(durable.meta("Answer briefly.", origin="skill:brief"), durable.ephemeral("It is Monday.", origin="cell:clock"),
          durable.text("Hello?")).wait()
agent""",
    """from durable_nb.widget import sync_widgets
for ev in agent.run("Second question"):
    if ev.type in ("agent_start", "message_end"):
        sync_widgets(agent)""",
]


def test_widget_in_jupyterlab(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab_root / "widget_live.ipynb")

    page.set_viewport_size({"width": 1100, "height": 900})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    open_notebook(page, lab, "widget_live.ipynb")
    run_all(page)
    # the agent displayed itself as the widget; cell 2's receipts updated it live: 6 entries
    page.wait_for_selector(".dnb-widget .dnb-row.dnb-leaf", timeout=30_000)
    page.wait_for_function("document.querySelectorAll('.dnb-widget .dnb-row').length === 6", timeout=30_000)
    rows = page.locator(".dnb-widget .dnb-row")
    assert "meta · skill:brief" in rows.nth(0).inner_text()
    assert "ephemeral · cell:clock" in rows.nth(1).inner_text()
    first_reply = page.locator(".dnb-widget .dnb-row").nth(3)
    assert first_reply.locator(".dnb-preview").text_content() == "Hi! <img src=x onerror=window.__pwned=1>"
    target = first_reply.get_attribute("data-id")
    first_reply.click()
    page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{target}')")
    page.click(".dnb-continue")
    page.wait_for_selector(f'.dnb-widget .dnb-row.dnb-leaf[data-id="{target}"]', timeout=15_000)
    assert kernel_stdout(page, "print(agent.leaf_id)").strip() == target
    page.click('.dnb-widget .dnb-tab[data-view="transcript"]')
    transcript = page.locator(".dnb-widget .dnb-transcript-panel").inner_text()
    assert "Hello?" in transcript and "Answer briefly." not in transcript and "It is Monday." not in transcript
    page.click('.dnb-widget .dnb-tab[data-view="model"]')
    model = page.locator(".dnb-widget .dnb-model-panel").inner_text()
    assert "Answer briefly." in model and "meta · skill:brief" in model
    page.locator(".dnb-widget").screenshot(path=screenshots / "widget_live.png")
    assert page.evaluate("window.__pwned") is None
    assert not [u for u in requests if u.endswith("/x") or "/files/x" in u]
