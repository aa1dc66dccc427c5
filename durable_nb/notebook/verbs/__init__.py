"""The ``%durable`` verbs, each declared once (:func:`verb`): its usage, help, options and what it does.

A verb is a function ``(ctx, call)`` taking the kernel's
:class:`~..context.Context` and the parsed :class:`~..options.Call`; it
reports with ``print`` and may return an object to display; its mistakes
raise :class:`~durable_nb.errors.DurableError` (or ``UsageError``), which the
magic shows as one line. They are grouped by what they work on: sessions
and stores (:mod:`.sessions`), the entry tree (:mod:`.tree`), the next
turns (:mod:`.workbench`), outputs (:mod:`.views`), evaluation runs
(:mod:`.evaluations`), tracing turns (:mod:`.trace`); :data:`VERBS` lists
them in that order, the order ``%durable?`` shows. :func:`specs` gives the
table as data for generated documentation. Adding a verb is adding one
decorated function to one of those modules.
"""

from __future__ import annotations

from .registry import MANY, VERBS, Verb, all_options, cell_specs, specs, verb

# each module registers its verbs as it loads: this order is the order %durable? lists them in
# isort: off
from . import sessions, tree, workbench, views, evaluations, trace  # noqa: F401, E402
# isort: on

__all__ = ["MANY", "VERBS", "Verb", "all_options", "cell_specs", "specs", "verb"]
