"""What a ``%durable`` verb or cell works with: the kernel's session, store, tools and defaults.

One :class:`Context` lives with the magics. It opens the notebook's
:class:`~.state.NotebookSession` when first needed (and again when the store
or session setting changes), resolves the notebook names a cell or verb
gives (tools, models, variants) and keeps what ``%durable tools`` and
``%durable set`` chose for this kernel. The ``%config`` settings themselves
stay on the magics (:class:`Config`).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..durable import Tool, as_tools, check_settings, parse_variants, read_value
from ..errors import DurableError, suggest
from ..session import Store, check_store_path, open_store
from .identity import identity
from .options import Call
from .render import plural
from .state import NotebookSession, default_session_name
from .tags import request_metadata


def resumed_line(st: NotebookSession) -> str:
    """The one line saying a reopened session resumed at the leaf last moved to, not its last entry."""
    a = st.own
    return (
        f"resumed session {a.session_id} at the branch last chosen: leaf {st.resumed_at_choice} "
        f"({plural(a.depth, 'entry', 'entries')} on the active path), not at the last entry written"
    )


class Config(Protocol):
    """The ``%config DurableMagics`` settings a context reads (and ``%durable model`` / ``store`` set)."""

    model: str
    store: str
    session: str
    throttle: float


class Context:
    """The kernel's durable state for the verbs and cells; ``shell`` is IPython's (``None`` outside one).

    ``tool_names`` are the notebook functions ``%durable tools add`` named
    (looked up at each turn), ``settings`` the defaults ``%durable set``
    gave every turn.
    """

    def __init__(self, shell: Any, config: Config) -> None:
        self.shell = shell
        self.config = config
        self.tool_names: dict[str, None] = {}
        self.mcp_servers: dict[str, Any] = {}  # name -> durable.McpTools (%durable tools add --mcp)
        self.settings: dict[str, Any] = {}
        self.secret_store: tuple[str, str] | None = None  # (masked spec shown in .store, the real spec)
        self.tracer: Any = None  # an otlp.live.OtlpPublisher while %durable trace otlp is on (.tracing)
        self._state: NotebookSession | None = None
        self._carry: list = []  # staged entries kept across a %config change of store/session
        self._identity: str | None = None  # the notebook-metadata session id the state was opened for
        self._opened: tuple[str, Store] | None = None  # (spec, store): a SQL store is opened once

    @property
    def ns(self) -> dict[str, Any]:
        """The notebook's namespace (``{}`` outside a shell)."""
        return self.shell.user_ns if self.shell is not None else {}

    @property
    def in_kernel(self) -> bool:
        """Whether a kernel runs the shell (outputs can be updated in place)."""
        return getattr(self.shell, "kernel", None) is not None

    # -- the session and its store ------------------------------------------------

    @property
    def state(self) -> NotebookSession:
        """The notebook's session, opened on first use (store resolved against the current directory).

        Which session: ``%config DurableMagics.session`` if set; else the id the
        notebook's metadata keeps, sent with the execute request by the
        durable_nb extension (see :mod:`.identity`; a copied notebook forks its
        original here, said in one line); else one named after the notebook.
        The state is reopened when the request names another notebook id than
        the one it was opened for; ``%durable use`` stays in force otherwise.
        """
        ident = None if self.config.session else identity(request_metadata(self.shell))
        if self._state is not None and (ident is None or ident.session == self._identity):
            return self._state
        carry = self._state.staged if self._state is not None else self._carry
        sid = ident.session if ident else self.config.session or default_session_name(self.ns)
        self._state = NotebookSession(
            self.open_store(), sid, self.configured_model(), fork_of=ident.fork_of if ident else ""
        )
        self._identity = ident.session if ident else None
        self._state.staged, self._carry = carry, []
        st = self._state
        if st.forked_from:
            n = len(st.own.entries())
            chosen = " (its branch last chosen)" if st.resumed_at_choice else ""
            print(
                f"this notebook is a copy: its session {sid} starts as a fork of {st.forked_from}{chosen} "
                f"({plural(n, 'entry', 'entries')}); {st.forked_from} is left as it was"
            )
        elif st.resumed_at_choice:
            print(resumed_line(st))
        return st

    @property
    def opened(self) -> NotebookSession | None:
        """The session if it is open, else ``None`` (opens nothing)."""
        return self._state

    def reopen(self) -> None:
        """Forget the session (keeping its staged entries): the next use opens the store and session anew."""
        self._carry = self._state.staged if self._state is not None else []
        self._state = None

    def open_store(self, spec: str | None = None) -> Store:
        """Return the store ``spec`` names (the ``store`` setting when ``None``), opened once per spec: see
        :func:`~durable_nb.session.open_store`. Raises ``DurableError`` when it cannot be opened, or when
        it does not exist and its folder does not either (a typo: :func:`~durable_nb.session.check_store_path`)."""
        if spec is None:
            spec = self.config.store
            if self.secret_store is not None and self.secret_store[0] == spec:
                spec = self.secret_store[1]
        if self._opened is None or self._opened[0] != spec:
            check_store_path(spec)
            store = open_store(spec)
            old, self._opened = self._opened, (spec, store)
            if old is not None and hasattr(old[1], "close"):
                old[1].close()
        return self._opened[1]

    def use_store(self, spec: str) -> Store:
        """Open the store ``spec`` names and make it the notebook's (the setting, password masked); return it.

        Nothing changes when it cannot be opened (``DurableError``, one line)."""
        store = self.open_store(spec)
        self.config.store = spec
        return store

    # -- names from the notebook ----------------------------------------------------

    def resolve_tools(self, names) -> list[Tool]:
        """Return the notebook functions ``names`` name as tools, in order.

        Raises ``DurableError`` (one line) for a name the notebook does not
        define (with the nearest callable's name), something that cannot be a
        tool, or two tools with one name. Cost: building each new tool's
        schema once.
        """
        ns = self.ns
        fns = []
        for n in names:
            if n not in ns:
                callables = [k for k, v in ns.items() if callable(v) and not k.startswith("_")]
                raise DurableError(
                    f"no {n!r} in the notebook{suggest(n, callables)}: define the function first, then add it"
                )
            fns.append(ns[n])
        return as_tools(fns)

    def tools(self, call: Call) -> list[Tool]:
        """Return a turn's tools: the call's ``--tools``, else the session's (``%durable tools add``)."""
        if call.tools is not None:
            return self.resolve_tools(call.tools)
        return self.tool_list()

    def tool_list(self) -> list[Tool]:
        """Return the session's tools (``%durable tools add``), looked up in the notebook now."""
        return as_tools(
            [*self.resolve_tools(list(self.tool_names)), *(t for s in self.mcp_servers.values() for t in s)]
        )

    def turn_settings(self, call: Call) -> dict[str, Any]:
        """Return the settings for a turn: the session's defaults, then the cell's options; checked (one line if not)."""
        return check_settings({**self.settings, **{k: read_value(v) for k, v in call.settings}})

    def notebook_model(self, name: str) -> Any:
        """Return the notebook function or model object named ``name``, else ``None``. O(1)."""
        obj = self.ns.get(name) if name else None
        return obj if obj is not None and (callable(obj) or hasattr(obj, "stream")) else None

    def configured_model(self) -> Any:
        """Return the model the ``model`` setting names: a notebook function or model object of that name
        (``%durable model terse``), else the name itself (``None`` when empty: the default). Never raises:
        a bad name is reported by the next turn."""
        return self.notebook_model(self.config.model) or self.config.model or None

    def model_of(self, name: str) -> Any:
        """Return the model a magic's word names: a notebook function or model object of that name, else the
        name itself (``offline``, ``openai:gpt-4.1``: built later). A plain word that is neither is refused in
        one line, with the nearest notebook function suggested."""
        ns = self.ns
        obj = self.notebook_model(name)
        if obj is not None:
            return obj
        if name.isidentifier() and name not in ("offline", "echo"):
            callables = [k for k, v in ns.items() if callable(v) and not k.startswith("_")]
            raise DurableError(
                f"no model {name!r}{suggest(name, [*callables, 'offline'])}: a model is offline, "
                "<provider>:<model> (openai:gpt-4.1-mini) or a function defined in the notebook"
            )
        return name

    def variants(self, call: Call) -> list[dict[str, Any]]:
        """Return the variants a fan-out cell asks for: ``--models`` × ``--variants`` (either alone works).

        ``--variants`` is a notebook name holding a list of dicts (or models),
        else the text :func:`~durable_nb.durable.parse_variants` reads. A
        ``model`` in a variant is read as :meth:`model_of` reads it. Raises
        ``DurableError`` (one line) for a bad name or spec.
        """
        ns = self.ns
        rows: list[dict[str, Any]] = [{}]
        if call.variants is not None:
            spec = call.variants.strip()
            if spec.isidentifier() and "=" not in spec:
                held = ns.get(spec)
                if not isinstance(held, (list, tuple)) or not held:
                    raise DurableError(
                        f"--variants {spec}: {'no' if spec not in ns else 'not a list in'} notebook variable {spec!r}"
                        f"{suggest(spec, [k for k in ns if not k.startswith('_')]) if spec not in ns else ''}; "
                        'give a list of dicts, or write the variants: --variants "temperature=0 | temperature=1"'
                    )
                rows = [dict(v) if isinstance(v, dict) else {"model": v} for v in held]
            else:
                rows = parse_variants(spec)
                for r in rows:
                    if isinstance(r.get("model"), str):
                        r["model"] = self.model_of(r["model"])
        if call.models is not None:
            models = [self.model_of(m) for m in call.models]
            rows = [{**r, "model": m} for m in models for r in rows]
        return rows
