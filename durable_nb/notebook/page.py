"""Whether a page that saves the session widget's whole fallback is attached to this kernel.

    page.listen(shell)      # at %load_ext: the comm target, and a question to the attached pages
    page.saves_fallback()   # True once a page with durable_nb's extension answered

A session widget's output carries a static fallback (:mod:`durable_nb.widget.fallback`) for
renderers without the widget. A notebook run without a page (nbconvert, papermill,
:func:`durable_nb.run_notebook`) or in a front end without durable_nb's extension keeps the display
message as the kernel sent it, so that fallback must be whole (~160 KB at 300k entries). A notebook
in JupyterLab or Notebook 7 with the extension is saved by the page, which writes the widget's whole
fallback into the output as it saves (js/labextension/src/output.ts): there the display can carry a
short one and paint sooner (#32).

The kernel learns it from the page, never guesses: at ``%load_ext durable_nb`` it registers the comm
target :data:`TARGET` and opens a comm of that target towards the front ends (data
``{"ask": 1}``); the extension's notebook pages answer by opening a comm of the same target with
``{"fallback": "at-save"}``. Front ends without the extension ignore or close the question; nbclient
ignores it. Once one page answered, :func:`saves_fallback` stays true for the kernel's life (a
reloaded page is the same notebook; a restarted kernel asks again at its ``%load_ext``). The answer
arrives when the kernel is next free: a ``%durable show`` queued right behind ``%load_ext`` (Run
All) still sends the whole fallback. O(1).
"""

from __future__ import annotations

from typing import Any

TARGET = "durable_nb.page"
AT_SAVE = "at-save"  # the page writes the whole fallback into the output when it saves the notebook

_answers: set[str] = set()  # comm ids of the pages that said they save the fallback


def listen(shell: object) -> None:
    """Register :data:`TARGET` with ``shell``'s kernel and ask the attached pages (see the module doc).
    Nothing outside a kernel (terminal IPython: no comm manager). Idempotent (``%reload_ext``)."""
    manager = getattr(getattr(shell, "kernel", None), "comm_manager", None)
    if manager is None:
        return
    manager.register_target(TARGET, _opened)
    try:
        from comm import create_comm  # ipykernel already imported it: no import cost

        create_comm(target_name=TARGET, data={"ask": 1})
    except Exception:  # a kernel without comms: the fallback stays whole
        return


def _opened(comm: Any, msg: dict[str, Any]) -> None:
    """A page opened a comm of :data:`TARGET`: note whether it saves the whole fallback."""
    data = (msg.get("content") or {}).get("data") or {}
    if isinstance(data, dict) and data.get("fallback") == AT_SAVE:
        _answers.add(str(getattr(comm, "comm_id", "")))


def saves_fallback() -> bool:
    """Whether a page with durable_nb's extension, which saves the whole fallback, answered. O(1)."""
    return bool(_answers)


def forget() -> None:
    """Forget every answer (tests; a kernel's answers otherwise last its life)."""
    _answers.clear()
