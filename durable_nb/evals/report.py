"""An evaluation run as text and as JUnit XML: the grid a terminal shows and the file CI systems read."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .results import Comparison, EvalRun

MAX_CELL = 28


def grid(run: EvalRun) -> str:
    """Return the run as a table: one row per case, one column per variant; a cell is ``pass``, ``FAIL``
    (the failing graders) or ``ERROR``, then a summary line. O(pairs)."""
    by = {(r.case_index, r.variant): r for r in run.results}
    cases = sorted({r.case_index for r in run.results})
    rows = [["case", *run.variants]]
    for ci in cases:
        row = [str(ci)]
        for v in run.variants:
            r = by.get((ci, v))
            if r is None:
                row.append("")
            elif r.error:
                row.append("ERROR")
            elif r.passed:
                row.append("pass")
            else:
                bad = ",".join(x.grader for x in r.verdicts if not x.passed)
                row.append(f"FAIL {bad}"[:MAX_CELL])
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    passed = sum(r.passed for r in run.results)
    lines.append(f"{run.name}: {passed}/{len(run.results)} passed ({run.pass_rate:.0%})")
    return "\n".join(lines)


def comparison(c: Comparison) -> str:
    """Return a comparison as lines: the summary, then each regressed pair."""
    out = [str(c)]
    out += [f"  regressed: case {r.case_index} × {r.variant}" for r in c.regressed]
    return "\n".join(out)


def junit(run: EvalRun, path: str | Path) -> Path:
    """Write ``run`` as JUnit XML to ``path``: one test suite, one test case per pair (``case N × VARIANT``),
    a failure naming the failing graders' reasons, an error for a pair without a reply. Returns the path."""
    suite = ET.Element("testsuite", name=f"durable_nb eval {run.name}", tests=str(len(run.results)))
    failures = errors = 0
    for r in run.results:
        tc = ET.SubElement(suite, "testcase", classname=f"eval.{run.name}", name=f"case {r.case_index} × {r.variant}")
        if r.ms is not None:
            tc.set("time", f"{r.ms / 1000:.3f}")
        if r.error:
            errors += 1
            ET.SubElement(tc, "error", message=r.error)
        elif not r.passed:
            failures += 1
            bad = [v for v in r.verdicts if not v.passed]
            msg = "; ".join(f"{v.grader}: {v.error or v.reason or 'failed'}" for v in bad)
            ET.SubElement(tc, "failure", message=msg[:500]).text = r.reply[:2000]
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    out = Path(path)
    ET.ElementTree(suite).write(out, encoding="utf-8", xml_declaration=True)
    return out
