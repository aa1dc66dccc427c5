"""Which cell is running: its tags and ``cellId``, read from the execute request.

JupyterLab 4 and Notebook 7 send the executing cell's metadata (``tags``,
``cellId``, ...) as the execute request's top-level ``metadata``; ipykernel
keeps that request as the shell channel's parent. Terminal IPython, VS Code
and plain nbclient send nothing, so :func:`current_cell` returns no tags and
no id there (the magic's ``--meta``/``--ephemeral``/``--note`` flags cover
those front ends).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    """The running cell: its ``tags`` and ``cell_id`` (``""`` when the front end sent none)."""

    tags: frozenset[str] = frozenset()
    cell_id: str = ""

    @property
    def origin(self) -> str | None:
        """``"cell:<cellId>"``, the origin recorded on the cell's entries, or ``None`` without an id."""
        return f"cell:{self.cell_id}" if self.cell_id else None


def request_metadata(shell: object) -> dict:
    """Return the metadata of the execute request being run, or ``{}`` outside a kernel.

    Passes ``"shell"`` explicitly: on ipykernel 7 the no-argument
    ``get_parent()`` picks the channel from the current thread.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent("shell")
    except (TypeError, AttributeError):  # older ipykernel: no channel argument / no get_parent
        parent = getattr(kernel, "_parent_header", None) or {}
    md = parent.get("metadata") if isinstance(parent, dict) else None
    return md if isinstance(md, dict) else {}


def current_cell(shell: object) -> Cell:
    """Return the running cell's tags and id from ``shell``'s current execute request.

    Tags that are not strings are ignored; a missing or odd ``metadata``
    gives an empty :class:`Cell`. Cost: a dict lookup.
    """
    md = request_metadata(shell)
    tags = md.get("tags") or []
    cell_id = md.get("cellId") or ""
    return Cell(
        tags=frozenset(t for t in tags if isinstance(t, str)) if isinstance(tags, (list, tuple)) else frozenset(),
        cell_id=cell_id if isinstance(cell_id, str) else "",
    )
