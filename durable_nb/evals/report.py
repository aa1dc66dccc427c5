"""An evaluation run as text and as JUnit XML: the grid a terminal shows and the file CI systems read."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from .results import Comparison, EvalRun

MAX_CELL = 28
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # what XML 1.0 cannot hold


def _xml(text: str) -> str:
    """Return ``text`` with the characters XML 1.0 cannot hold (control bytes such as ESC, NUL; lone
    surrogates) as ``\\xNN`` / ``\\uNNNN``, so the file stays well-formed whatever a model replied. O(len)."""
    return _NOT_XML.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


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
    a failure naming the failing graders' reasons, an error for a pair without a reply. Characters XML
    cannot hold (a reply's ANSI colours) are written escaped (``\\x1b``). Returns the path."""
    suite = ET.Element("testsuite", name=_xml(f"durable_nb eval {run.name}"), tests=str(len(run.results)))
    failures = errors = 0
    for r in run.results:
        tc = ET.SubElement(suite, "testcase", classname=_xml(f"eval.{run.name}"),
                           name=_xml(f"case {r.case_index} × {r.variant}"))  # fmt: skip
        if r.ms is not None:
            tc.set("time", f"{r.ms / 1000:.3f}")
        if r.error:
            errors += 1
            ET.SubElement(tc, "error", message=_xml(r.error))
        elif not r.passed:
            failures += 1
            bad = [v for v in r.verdicts if not v.passed]
            msg = "; ".join(f"{v.grader}: {v.error or v.reason or 'failed'}" for v in bad)
            ET.SubElement(tc, "failure", message=_xml(msg[:500])).text = _xml(r.reply[:2000])
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    out = Path(path)
    ET.ElementTree(suite).write(out, encoding="utf-8", xml_declaration=True)
    return out
