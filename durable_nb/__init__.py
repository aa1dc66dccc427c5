"""durable_nb: durable agent sessions in Jupyter.

``durable_nb.ai`` (messages), ``durable_nb.session`` (entries, views, stores)
and ``durable_nb.durable`` (the agent) import nothing from Jupyter.
``%load_ext durable_nb`` registers the ``%%durable`` and ``%durable`` magics.
"""

from . import ai, durable, kinds, session  # kinds: every custom-entry kind registers itself
from .errors import DurableError
from .frames import annotations, frame
from .sidecar import annotate

__version__ = "0.1.0"
__all__ = [
    "DurableError",
    "ai",
    "annotate",
    "annotations",
    "frame",
    "durable",
    "kinds",
    "session",
    "__version__",
    "load_ipython_extension",
]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through a real kernel
    """Register the magics (``%load_ext durable_nb``)."""
    from .notebook import load_ipython_extension as load

    load(ipython)
