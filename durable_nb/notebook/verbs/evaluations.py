"""The verbs about evaluation runs (:mod:`durable_nb.evals`): evals, eval compare.

A run itself starts from a cell: ``%%durable --cases NAME [--grade g1,g2]
[--eval NAME]`` (see :func:`run_cases`).
"""

from __future__ import annotations

from typing import Any

from ... import evals
from ...errors import DurableError, suggest
from ...evals.report import comparison, grid
from ...evals.results import compared
from ..context import Context
from ..options import Call, Option
from ..render import plural
from ..turns import tool_mode
from .registry import verb


@verb(
    "evals [run] [--baseline B]",
    "list the session's evaluation runs: cases, variants, replies stored, finished;\n"
    "with RUN, its grid in the widget (cases × variants; a cell opens its branch),\n"
    "--baseline B marking what regressed, improved or changed against run B",
    options=(Option("--baseline", "evals RUN: the run to compare with", spec={"metavar": "B"}),),
)
def list_runs(ctx: Context, call: Call) -> Any:
    a = ctx.state.agent
    if call.args:
        return grid_widget(ctx, call.args[0], call.baseline)
    if call.baseline is not None:
        raise DurableError("--baseline goes with a run: %durable evals RUN --baseline B")
    found = evals.runs(a.store, a.session_id)
    if not found:
        print("no evaluation runs in this session (%%durable --cases NAME runs the cell over a case table)")
        return
    for r in found:
        pairs = r.cases * r.variants
        state = "finished" if r.finished else f"{r.replied}/{pairs} replied"
        print(f"{r.name}  {plural(r.cases, 'case', 'cases')} × {plural(r.variants, 'variant', 'variants')}  {state}")


@verb("eval compare <run> <baseline>", "the pairs of run RUN that regressed, improved or changed against BASELINE",
      nargs=(3, 3))  # fmt: skip
def compare(ctx: Context, call: Call) -> None:
    action, name, base = call.args
    if action != "compare":
        raise DurableError(f"usage: %durable eval compare RUN BASELINE, not {action!r}{suggest(action, ['compare'])}")
    a = ctx.state.agent
    run, baseline = evals.load(a.store, a.session_id, name), evals.load(a.store, a.session_id, base)
    print(comparison(compared(run, baseline)))


def grid_widget(ctx: Context, name: str, baseline: str | None) -> Any:
    """Return the session widget on the grid of run ``name`` (against run ``baseline``); a run that is not
    there is one line naming the runs the session has, so is a baseline with no pair in common with the
    run. Its static fallback is the grid."""
    from ...evals import grid
    from ...widget import SessionWidget

    a = ctx.state.agent
    if ctx.state.inspected is None:  # a run another process wrote (python -m durable_nb eval) joins the tree
        a.refresh()
    run = evals.load(a.store, a.session_id, name)
    base = evals.load(a.store, a.session_id, baseline) if baseline is not None else None
    if base is not None:
        compared(run, base)  # no pair in common: one line, not a grid marking nothing
    return SessionWidget(a, view="grid", evaluation=grid.state(run, base))


def run_cases(ctx: Context, call: Call, body: str, variants: list[dict[str, Any]] | None) -> evals.EvalRun:
    """Run the cell ``body`` as the template over the notebook's case table ``call.cases``, graded by the
    notebook's graders ``call.grade`` (names), as run ``call.eval`` (default: derived); print the grid.

    Raises :class:`DurableError` (one line) for a name that holds nothing, before anything is written."""
    ns = ctx.ns
    assert call.cases is not None
    if call.cases not in ns:
        names = [
            k for k, v in ns.items() if not k.startswith("_") and isinstance(v, (list, tuple)) or hasattr(v, "columns")
        ]
        raise DurableError(f"--cases {call.cases}: no notebook variable {call.cases!r}{suggest(call.cases, names)}")
    graders = []
    for g in call.grade or ():
        if g not in ns:
            raise DurableError(
                f"--grade {g}: no notebook variable {g!r}{suggest(g, [k for k in ns if not k.startswith('_')])}"
            )
        graders.append(ns[g])
    st = ctx.state
    agent = st.writable("run an evaluation")
    mode = tool_mode(call, ns)
    tools = ctx.tool_list() if mode else ctx.tools(call)
    result = evals.run(body, ns[call.cases], variants=variants, graders=graders, agent=agent, name=call.eval,
                       tools=tools, tool_results=mode or "call")  # fmt: skip
    st.sync()
    print(grid(result))
    return result
