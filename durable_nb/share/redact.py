"""Share without secrets: a copy of a session whose strings have their secrets replaced.

    r = Redactor(emails=True)
    agent2, source2 = r.session(agent, source)    # every writer then works on the copy
    print(r.summary())                           # "redacted 3 strings: 2 api-key, 1 home" (never the values)

What is replaced, in every string an export writes (entry text, thinking, tool arguments and
results, origins, errors, summaries, custom fields, file names and URLs, the source's name):

- **secrets** found by `detect-secrets <https://github.com/Yelp/detect-secrets>`_'s detectors
  (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, ``password = "…"``, basic-auth
  URLs, quoted high-entropy strings …), plus unquoted tokens of 20+ letters and digits whose
  entropy passes detect-secrets's own base64 limit (today's ``sk-proj-…`` / ``sk-ant-…`` keys),
  each as ``[redacted:<kind>]``;
- **env**: the value (8+ characters) of every environment variable whose name holds KEY, TOKEN,
  SECRET or PASSWORD, as ``[redacted:$NAME]``, and any run of its first 10+ characters (a key cut
  short, ``sk-proj-Qm7v…``), as far as it goes on matching;
- **home**: the user's home folder, as ``~``;
- **emails** (only when asked): e-mail addresses, as ``[redacted:email]``.

Only string values change: ids, parent ids, times, roles, kinds, tool names, signatures and
attached bytes are left as they are, so the tree, and a ``.jsonl`` export, reopen the same.
Needs the ``redact`` extra (``detect-secrets``), imported on first use only. Cost: about 1 MB of
text a second (detect-secrets's regular expressions on every line; its keyword detector, the slowest,
only on lines holding one of its words).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DurableError
from ..models.failures import prefix_runs
from ..session import MemoryStore, decode, encode

WHAT = ("emails",)  # what --redact may add to the default (secrets, env, home)
MISSING = 'redaction needs detect-secrets: pip install "durable_nb[redact]"'
MIN_ENV = 8  # shorter values of secret-named variables are left alone (they would match everywhere)
MIN_ENV_RUN = 10  # a run of an env secret's first characters this long is redacted too (past "sk-proj-")
MIN_TOKEN = 20  # shortest unquoted token the entropy check looks at
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # what a finding widens over
_UNQUOTED = re.compile(rf"[A-Za-z0-9_\-]{{{MIN_TOKEN},}}")  # no "/": a long path is not a key
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_NOT_SECRETS = {"Public IP (ipv4)"}  # an address is not a credential
_KEYWORD = "Secret Keyword"  # the slowest detector: run only on a line holding one of its words (below)
_KEYWORDISH = re.compile("key|pass|pwd|secret|contrase", re.IGNORECASE)  # in every word of its DENYLIST
# what the entropy rule leaves alone: the values of keys naming an id (toolUseID, session_id, uuid), and
# the providers' ids in text (a tool call's, a message's, a request's): random-looking, never secret
_ID_KEY = re.compile(r"(?:^|[_\-.])(?:id|ids|uuid|ID|IDS|UUID)$|[a-z0-9](?:Id|ID|Ids|IDs|Uuid|UUID)$")
_ID_PREFIXES = ("toolu_", "srvtoolu_", "call_", "msg_", "chatcmpl-", "resp_", "req_", "run_", "fc_", "rs_")

# The fields that are structure, not text, at each level of an encoded entry: never changed.
_ENTRY_KEYS = {"type", "id", "parent_id", "created_at", "kind", "first_kept_id", "tokens_before"}
_MESSAGE_KEYS = {"role", "injected", "tool_call_id", "tool_name", "is_error", "usage", "stop_reason", "model"}
_MESSAGE_KEYS |= {"timing", "api", "provider", "timestamp"}
_BLOCK_KEYS = {"type", "id", "name", "signature", "redacted", "data", "mime_type", "server", "server_type", "file_id"}


def parse_what(value: str | None) -> tuple[str, ...]:
    """Return what ``--redact VALUE`` adds to the default: ``()`` for a bare ``--redact`` (``value``
    ``""`` or ``None``), ``("emails",)`` for ``emails``. Raises :class:`DurableError` in one line
    for anything else."""
    words = [w for w in re.split(r"[,\s]+", value or "") if w]
    bad = [w for w in words if w not in WHAT]
    if bad:
        raise DurableError(
            f"--redact takes nothing (secrets, secret env values, the home folder) or 'emails' (those and "
            f"e-mail addresses), not {bad[0]!r}"
        )
    return tuple(dict.fromkeys(words))


def redactor_for(value: str | None) -> Redactor | None:
    """Return the :class:`Redactor` that ``--redact [VALUE]`` asks for (``value`` ``None``: no
    ``--redact``, so ``None``). Raises :class:`DurableError` in one line for a bad value or a
    missing detect-secrets."""
    if value is None:
        return None
    return Redactor(emails="emails" in parse_what(value))


def _detectors() -> list[Any]:
    """Return an instance of every detect-secrets detector but :data:`_NOT_SECRETS`; raises
    :class:`DurableError` (:data:`MISSING`) when detect-secrets is not installed."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:
        raise DurableError(MISSING) from None
    classes: dict[str, Any] = get_mapping_from_secret_type_to_class()
    return [cls() for t, cls in classes.items() if t not in _NOT_SECRETS]


def _slug(secret_type: str) -> str:
    """``"AWS Access Key"`` -> ``"aws-access-key"``; the entropy detectors -> ``"api-key"``."""
    if "High Entropy" in secret_type:
        return "api-key"
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


class Redactor:
    """Replaces secrets in strings and keeps the counts (:attr:`counts`: label -> replacements).

    ``emails=True`` replaces e-mail addresses too. ``environ`` (default ``os.environ``) and
    ``home`` (default the user's home) are what the env and home rules read. Building one loads
    detect-secrets (about 0.1 s); raises :class:`DurableError` (:data:`MISSING`) without it.
    """

    def __init__(
        self, *, emails: bool = False, environ: Mapping[str, str] | None = None, home: str | Path | None = None
    ) -> None:
        detectors = _detectors()
        self._detectors = [d for d in detectors if d.secret_type != _KEYWORD]
        self._keyword = [d for d in detectors if d.secret_type == _KEYWORD]
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        self._entropy = Base64HighEntropyString()
        self._heuristic = heuristic
        self.emails = emails
        env = os.environ if environ is None else environ
        named = {v: k for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= MIN_ENV}
        self._env = sorted(named.items(), key=lambda kv: -len(kv[0]))  # longest value first
        h = str(Path.home() if home is None else home).rstrip("/\\")
        self._home = re.compile(re.escape(h) + r"(?![\w.\-])") if len(h) > 1 else None
        self.counts: Counter[str] = Counter()

    def text(self, s: str, an_id: bool = False) -> str:
        """Return ``s`` with its secrets replaced (see the module); counts each replacement. ``an_id``:
        ``s`` is the value of a key naming an id, which the entropy rule leaves alone (the named
        detectors still apply: an AWS access key id is a secret). O(len(s)) per detector and line."""
        for value, name in self._env:
            s, n = prefix_runs(s, value, f"[redacted:${name}]", MIN_ENV_RUN)
            self._count("env", n)
        s = self._secrets(s, not an_id)
        if self._home is not None:
            s, n = self._home.subn("~", s)
            self._count("home", n)
        if self.emails:
            s, n = _EMAIL.subn("[redacted:email]", s)
            self._count("email", n)
        return s

    def _count(self, label: str, n: int) -> None:
        if n:
            self.counts[label] += n

    def _secrets(self, s: str, entropy: bool = True) -> str:
        """Return ``s`` with what the detectors find replaced by ``[redacted:<kind>]``: each finding
        widened to the whole token it sits in (a detector may name only a token's prefix)."""
        s, n = _PEM.subn("[redacted:private-key]", s)
        self._count("private-key", n)
        spans: list[tuple[int, int, str]] = []
        start = 0
        for line in s.split("\n"):
            run = self._detectors + self._keyword if _KEYWORDISH.search(line) else self._detectors
            found = {(d.secret_type, p.secret_value) for d in run for p in d.analyze_line("", line, 0)}
            if entropy:
                found |= {("High Entropy", m.group()) for m in _UNQUOTED.finditer(line) if self._random(m.group())}
            for kind, value in found:
                if value and not self._false_positive(value, line):
                    spans += _spans(s, start, start + len(line), value, _slug(kind))
            start += len(line) + 1
        if not spans:
            return s
        out, at = [], 0
        first = lambda sp: (sp[0], -sp[1], sp[2] == "api-key", sp[2])  # noqa: E731  (a named kind first)
        for a, b, label in sorted(spans, key=first):
            if a < at:  # inside a span already replaced
                continue
            out += [s[at:a], f"[redacted:{label}]"]
            self.counts[label] += 1
            at = b
        return "".join(out) + s[at:]

    def _false_positive(self, value: str, line: str) -> bool:
        """True for what detect-secrets's own default filters drop: a UUID, ``abcdef…`` or ``0123…``,
        a template (``${X}``, ``{{x}}``, ``<x>``), ``$VAR``, no letter or digit, an id (``…_id = "…"``)."""
        h = self._heuristic
        return (
            h.is_potential_uuid(value)
            or h.is_sequential_string(value)
            or h.is_templated_secret(value)
            or h.is_prefixed_with_dollar_sign(value)
            or h.is_not_alphanumeric_string(value)
            or h.is_likely_id_string(value, line)
        )

    def _random(self, token: str) -> bool:
        """True for a token that mixes letters and digits and looks random by detect-secrets's base64
        entropy limit (an English identifier or a date-stamped model name does not)."""
        if token.startswith(_ID_PREFIXES):
            return False
        has = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        return has and self._entropy.calculate_shannon_entropy(token) > self._entropy.entropy_limit

    def value(self, v: Any, an_id: bool = False) -> Any:
        """Return ``v`` (any JSON value) with every string in it redacted; dict keys and other values
        kept. A string under a key naming an id (``toolUseID``, ``session_id``) is ``an_id`` (:meth:`text`)."""
        if isinstance(v, str):
            return self.text(v, an_id)
        if isinstance(v, list):
            return [self.value(x, an_id) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x, isinstance(k, str) and bool(_ID_KEY.search(k))) for k, x in v.items()}
        return v

    def _fields(self, d: dict[str, Any], keep: set[str]) -> dict[str, Any]:
        return {k: (v if k in keep else self.value(v)) for k, v in d.items()}

    def entry(self, e: Any) -> Any:
        """Return a redacted copy of the entry ``e``: only string values of its text fields change
        (the structure fields above are kept), so it decodes back to the same shape. O(size of e)."""
        d = self._fields(encode(e), _ENTRY_KEYS | {"message"})
        m = d.get("message")
        if isinstance(m, dict):
            m = self._fields(m, _MESSAGE_KEYS | {"content"})
            if isinstance(m.get("content"), list):
                m["content"] = [self._fields(b, _BLOCK_KEYS) if isinstance(b, dict) else b for b in m["content"]]
            d["message"] = m
        return decode(d)

    def session(self, agent: Any, source: str = "") -> tuple[Any, str]:
        """Return ``(copy, source)``: an agent on a memory store holding ``agent``'s entries redacted
        (same ids, same tree, same leaf, same session record) and ``source`` redacted. Nothing is
        written anywhere else. O(size of the log)."""
        from ..durable import Agent
        from .export import session_record

        rec = session_record(agent, source)
        store = MemoryStore()  # handed the entries as they are: an ephemeral one (a live agent's) too
        store.adopt_session(
            agent.session_id, [self.entry(e) for e in agent.entries()], rec["parent_id"], rec["created_at"]
        )
        copy = Agent(store=store, session_id=agent.session_id)
        if agent.leaf_id and copy.leaf_id != agent.leaf_id:
            copy.branch(agent.leaf_id)
        return copy, self.text(source)

    def summary(self) -> str:
        """Return one line naming how many strings of each kind were replaced (never a value)."""
        n = sum(self.counts.values())
        if not n:
            return "redacted nothing: no secret, secret env value, home folder" + (
                " or e-mail address" if self.emails else ""
            ) + " found"  # fmt: skip
        parts = ", ".join(f"{c} {k}" for k, c in sorted(self.counts.items(), key=lambda kc: (-kc[1], kc[0])) if c)
        return f"redacted {n} {'string' if n == 1 else 'strings'}: {parts}"


def _spans(s: str, lo: int, hi: int, value: str, label: str) -> list[tuple[int, int, str]]:
    """Return the spans of ``value`` in ``s[lo:hi]``, each widened to the token around it (a trailing
    full stop left out)."""
    out = []
    i = s.find(value, lo, hi)
    while i >= 0:
        a, b = i, i + len(value)
        while a > lo and s[a - 1] in _TOKEN:
            a -= 1
        while b < hi and s[b] in _TOKEN:
            b += 1
        while b < hi and s[b] == "=":  # base64 padding
            b += 1
        while b > i + len(value) and s[b - 1] == ".":
            b -= 1
        out.append((a, b, label))
        i = s.find(value, i + len(value), hi)
    return out
