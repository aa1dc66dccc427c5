"""The registry of custom-entry kinds: per kind, how it is shown, replayed, forked and counted.

A custom entry (design rule R2) is stored and never sent to the model. What
every other layer does with one depends on its kind, and that is declared
once, in one file per kind (:mod:`.label`, :mod:`.note`, :mod:`.aside`,
:mod:`.sidechain`): a new kind is one new file in this package registering
a :class:`Kind` (every module here is imported with the package). The readers are
:func:`~durable_nb.session.entry_kind` and
:func:`~durable_nb.session.is_aside` (listings, counts, the widget's kind
filter, importers), :func:`text` (notebook listings), :func:`replayed`
(:func:`durable_nb.durable.replay.plan`) and :func:`fork_copies`
(:meth:`durable_nb.durable.Agent.fork`). A kind nobody registered is a row
of the tree shown by its kind name, replayed and copied as it is.

The mechanism lives in :mod:`durable_nb.session.kinds` (the session's
rules read it); the kinds register when ``durable_nb`` is imported. Pure;
imports nothing from Jupyter.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..session.kinds import Kind, fork_copies, kind_of, name_of, off_chain, register, replayed, text

for _m in pkgutil.iter_modules(__path__):  # each kind's file registers its kind
    importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["Kind", "fork_copies", "kind_of", "name_of", "off_chain", "register", "replayed", "text"]
