"""The session browser in a real JupyterLab 4 with a real kernel: `%durable sessions` draws the table
through anywidget (its own bundle), a header sorts it, a click opens the row read-only in the kernel."""

from __future__ import annotations

import nbformat

from .lab import kernel_stdout, open_notebook, run_all
from .test_lab_widget import CONTRAST

CELLS = [
    "%load_ext durable_nb\n%durable new alpha",
    "%%durable\nhello from alpha",
    "%durable new beta",
    "%%durable\nhello from beta",
    "%%durable\nand a second turn",
    "%durable sessions",
]


def test_session_browser_in_jupyterlab(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab_root / "browser.ipynb")
    page.set_viewport_size({"width": 1200, "height": 900})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    open_notebook(page, lab, "browser.ipynb")
    run_all(page)
    page.wait_for_selector(".dnb-browser .dnb-browser-row", timeout=30_000)
    rows = page.locator(".dnb-browser .dnb-browser-row")
    assert rows.count() == 2
    assert [rows.nth(i).get_attribute("data-ref") for i in range(2)] == ["beta", "alpha"]  # newest first
    assert rows.nth(0).locator("td").nth(2).inner_text() == "2"  # beta's turns
    page.locator('.dnb-browser th[data-col="name"] button').click()
    page.wait_for_function("document.querySelector('.dnb-browser-row').dataset.ref === 'alpha'")
    page.locator('.dnb-browser-row[data-ref="alpha"]').click()
    page.wait_for_selector('.dnb-browser-row.dnb-opened[data-ref="alpha"]', timeout=15_000)
    status = page.locator(".dnb-browser-status").inner_text()
    assert status.startswith("%durable open alpha\nopened ") and "read-only" in status, status
    said = kernel_stdout(page, "get_ipython().run_line_magic('durable', 'status')")
    assert "read-only copy of" in said and "alpha" in said, said
    page.locator('.dnb-browser-row[data-ref="beta"]').click()  # the notebook's own row: back to it
    page.wait_for_function(
        "document.querySelector('.dnb-browser-status').innerText.startsWith(\"back to the notebook's session beta\")"
    )
    assert "read-only" not in kernel_stdout(page, "get_ipython().run_line_magic('durable', 'status')")
    page.locator(".dnb-browser").screenshot(path=screenshots / "session-browser-lab.png")
    legible(page, "light", dark=False)
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    try:
        page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        page.wait_for_timeout(500)  # the theme's variables settle
        legible(page, "dark", dark=True)
        page.locator(".dnb-browser").screenshot(path=screenshots / "session-browser-lab-dark.png")
    finally:
        page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    assert not [u for u in requests if not u.startswith((lab.base, f"blob:{lab.base}"))]  # anywidget's module: a blob


def legible(page, theme: str, dark: bool) -> None:
    """Every text of the browser at least 4.5:1 against its background (WCAG AA), in ``theme``."""
    seen = page.locator(".dnb-browser").evaluate(CONTRAST)
    assert (seen["bg"] < 0.1) if dark else (seen["bg"] > 0.8), f"{theme}: background luminance {seen['bg']}"
    poor = [i for i in seen["items"] if i["ratio"] < 4.5]
    assert len(seen["items"]) > 10 and not poor, (theme, poor)
