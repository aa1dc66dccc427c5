"""The workbench in a real JupyterLab 4 with a real kernel: the widget's find reveals a match on a branch that
is not active, two leaves picked in the widget are compared side by side with their diff, and
``%durable compare`` draws the same compare view."""

from __future__ import annotations

import nbformat

from .lab import kernel_stdout, open_notebook, run_all

SETUP = """%load_ext durable_nb
%durable new lab-workbench
from durable_nb import durable
from durable_nb.notebook import current
agent = current().agent
for i in range(10):
    agent.run(f"Question {i}: what about item {i}?").wait()
early = agent.path()[6].id
agent.branch(early)
agent.run("Where do zebras sleep?").wait()  # a branch off the active path, drawn far above the leaf
zebra = agent.leaf_id
agent.branch(early)
for i in range(40):
    agent.run(f"Later question {i}").wait()
agent.run(durable.meta("Answer in one line."), "And item 41?", settings={"temperature": 0.7}).wait()
latest = agent.leaf_id
agent.label("zebra", zebra)
agent.label("latest", latest)
print("ids", agent.entry(zebra).parent_id, zebra)"""

CELLS = [SETUP, "%durable show", "%durable compare zebra latest"]


def test_find_and_compare_in_jupyterlab(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab_root / "workbench.ipynb")
    page.set_viewport_size({"width": 1200, "height": 1000})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    open_notebook(page, lab, "workbench.ipynb")
    ran = run_all(page, timeout_ms=90_000)
    out = "".join("".join(o.get("text", "")) for o in ran["cells"][0]["outputs"])
    question, zebra = out.split("ids ", 1)[1].split()[:2]

    show = page.locator(".jp-Cell").nth(1).locator(".dnb-widget")
    show.locator(".dnb-row.dnb-leaf").wait_for(timeout=30_000)
    assert show.locator(f'.dnb-row[data-id="{question}"]').count() == 0  # not drawn yet: far from the leaf

    # -- find: the match on the early branch is scrolled to, selected and highlighted ---------------
    show.locator(".dnb-find-input").fill("zebras")
    show.locator(".dnb-find-input").press("Enter")
    details = """id => [...document.querySelectorAll('.dnb-details')].some(d => d.innerText.includes(id))"""
    hit = show.locator(f'.dnb-row[data-id="{question}"]')
    hit.wait_for(timeout=15_000)
    page.wait_for_function(details, arg=question)
    assert show.locator(".dnb-find-count").text_content() == "1 of 2"  # the question, and the reply listing it
    cls = hit.get_attribute("class")
    assert "dnb-hit-current" in cls and "dnb-active" not in cls
    assert kernel_stdout(page, f"print(agent.on_path({question!r}))").strip() == "False"
    assert "on active pathno" in show.locator(".dnb-details").inner_text().replace("\n", "")
    show.screenshot(path=screenshots / "lab_find_other_branch.png")
    show.locator(".dnb-find-next").click()
    page.wait_for_function(details, arg=zebra)
    assert show.locator(".dnb-find-count").text_content() == "2 of 2"

    # -- pick the match and the active leaf, compare them --------------------------------------------
    show.locator(".dnb-pick").click()
    show.locator(".dnb-follow").click()  # back to the leaf
    leaf = show.locator(".dnb-row.dnb-leaf")
    leaf.click()  # the active path's leaf (a label entry: its side is the reply above it)
    page.wait_for_function(details, arg=leaf.get_attribute("data-id"))
    show.locator(".dnb-pick").click()
    show.locator(".dnb-compare-go").click()
    side = show.locator(".dnb-compare-panel .dnb-compare-side")
    side.first.wait_for(timeout=15_000)
    assert side.count() == 2
    diff = show.locator(".dnb-compare-diff").inner_text()
    assert "setting temperature: (not set) → 0.7" in diff and "added" in diff
    assert "Where do zebras sleep?" in side.nth(0).inner_text() and "And item 41?" in side.nth(1).inner_text()
    show.screenshot(path=screenshots / "lab_compare_picked.png")

    # -- %durable compare: the same view, opened on it ------------------------------------------------
    shown = page.locator(".jp-Cell").nth(2).locator(".dnb-widget")
    shown.locator(".dnb-compare-panel .dnb-compare-side").first.wait_for(timeout=15_000)
    shown.scroll_into_view_if_needed()
    assert shown.locator('.dnb-tab[data-view="compare"]').get_attribute("aria-pressed") == "true"
    names = shown.locator(".dnb-compare-title").all_inner_texts()
    assert names[0].startswith(f"zebra ({zebra[:8]})") and names[1].startswith("latest (")
    assert "setting temperature: (not set) → 0.7" in shown.locator(".dnb-compare-diff").inner_text()
    shown.screenshot(path=screenshots / "lab_durable_compare.png")
    assert not [u for u in requests if "127.0.0.1" not in u and "localhost" not in u]  # nothing left the machine
