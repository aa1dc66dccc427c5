"""The widget in a real JupyterLab 4 with a real kernel: it renders through anywidget, a receipt-driven
sync updates it live, and "Continue from here" moves the agent's leaf in the kernel."""

from __future__ import annotations

import nbformat

from .lab import kernel_stdout, open_notebook, run_all

CELLS = [
    """%load_ext durable_nb
from durable_nb import durable, session
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


# Contrast of every visible text element of the widget against the background it is drawn on.
CONTRAST = """root => {
  const rgb = s => {  // "rgb(r, g, b)", "rgba(r, g, b, a)" or, from color-mix, "color(srgb r g b / a)" in 0..1
    const n = (s.match(/[\\d.]+/g) || []).map(Number);
    return s.startsWith('color(') ? [n[0] * 255, n[1] * 255, n[2] * 255, n.length > 3 ? n[3] : 1] : n.slice(0, 4);
  };
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const bgOf = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(bgOf(el));
    out.push({cls: el.className, text: el.textContent.trim().slice(0, 30),
              ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)});
  }
  return {bg: lum(bgOf(root)), items: out};
}"""


TOOLS = """from durable_nb import ai
agent.append(session.MessageEntry(message=ai.Message("assistant", [ai.ToolCall("c1", "search", {"q": "x"})])),
             session.MessageEntry(message=ai.Message("tool_result", [ai.Text("no such index")], tool_call_id="c1",
                                                     is_error=True)))
agent"""


def test_widget_text_is_legible_in_jupyterlab_light_and_dark_themes(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (CELLS[0], TOOLS)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab_root / "widget_themes.ipynb")
    page.set_viewport_size({"width": 1100, "height": 1000})
    open_notebook(page, lab, "widget_themes.ipynb")
    run_all(page)
    widget = page.locator(".dnb-widget").last
    page.wait_for_function(
        "document.querySelectorAll('.dnb-widget')[1]?.querySelectorAll('.dnb-row').length === 6", timeout=30_000
    )
    widget.locator(".dnb-row").nth(1).click()  # the ephemeral entry: its details too
    assert widget.locator(".dnb-row .dnb-badge.dnb-failed").inner_text() == "result · error"  # drawn as a failure

    def check(theme: str, dark: bool) -> None:
        for view in ("tree", "model"):
            widget.locator(f'.dnb-tab[data-view="{view}"]').click()
            seen = widget.evaluate(CONTRAST)
            assert (seen["bg"] < 0.1) if dark else (seen["bg"] > 0.8), f"{theme}: background luminance {seen['bg']}"
            poor = [i for i in seen["items"] if i["ratio"] < 4.5]  # WCAG AA for text
            assert len(seen["items"]) > 10 and not poor, (theme, view, poor)
            widget.screenshot(path=screenshots / f"widget_{theme}_{view}.png")

    check("light", dark=False)
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    try:
        page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        page.wait_for_timeout(500)  # the theme's variables settle
        check("dark", dark=True)
    finally:
        page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
