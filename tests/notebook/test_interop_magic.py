"""%durable export to other tools' formats in a real kernel (its event loop running: Inspect's writer
copes), and %durable open of the Inspect log it wrote: each sample a branch, read-only."""

from __future__ import annotations

import json

import pytest
from test_kernel import one_line_usage_error

pytest.importorskip("inspect_ai")


def test_export_to_pi_atif_and_inspect_and_open_the_eval(nb):
    sid = nb.fresh()
    nb.cell("Say <b>hi</b>.")
    cwd = nb.k.cwd
    r = nb.k.ok(f"%durable export {sid}.pi.jsonl\n%durable export {sid}.atif.json\n%durable export {sid}.eval")
    assert r.stdout.count(f"exported session {sid} (2 entries) to ") == 3, r.stdout
    assert json.loads((cwd / f"{sid}.pi.jsonl").read_text().splitlines()[0])["harness"] == "durable_nb"
    assert json.loads((cwd / f"{sid}.atif.json").read_text())["steps"][0]["message"] == "Say <b>hi</b>."
    r = nb.k.ok(f"%durable open {sid}.eval")
    assert r.stdout.startswith("opened ") and f"{sid}.eval read-only (inspect, " in r.stdout, r.stdout
    r = nb.k.ok("%durable status")
    assert "READ-ONLY" in r.stdout
    assert "only as inspect" in one_line_usage_error(nb.k.run(f"%durable export {sid}.md --run x"))
    nb.k.ok("%durable close")
