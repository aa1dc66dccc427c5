"""PostgreSQL connection strings: telling one apart from a path, reading it, showing it masked.

A DSN is a libpq URI (``postgresql://ann:pw@db/team``, ``postgres://``) or
a libpq key/value string (``host=db user=ann password='a b'``,
``service=team``). It is read by libpq's own rules (psycopg's
``conninfo_to_dict``), never by a pattern, so every spelling libpq accepts
(``%2f`` or ``%2F``, a %-encoded ``?pass%77ord=``, quoted values) yields
the one password it will send, and what is shown is rebuilt from the parsed
parameters with the password replaced by ``***``: no byte of the original
spelling of the password can reach a message. A DSN libpq refuses is never
echoed (its words may be a passphrase).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from ..errors import DurableError

# libpq's connection keywords (PostgreSQL 17, ``PQconndefaults``): a string whose first
# ``key=`` is one of these is a key/value DSN, whatever else it holds.
KEYWORDS = frozenset(
    """host hostaddr port dbname user password passfile require_auth channel_binding connect_timeout
    client_encoding options application_name fallback_application_name keepalives keepalives_idle
    keepalives_interval keepalives_count tcp_user_timeout replication sslmode sslnegotiation
    sslcompression sslcert sslkey sslcertmode sslpassword sslkeylogfile sslrootcert sslcrl sslcrldir
    sslsni requirepeer ssl_min_protocol_version ssl_max_protocol_version gssencmode krbsrvname gsslib
    gssdelegation service target_session_attrs load_balance_hosts min_protocol_version
    max_protocol_version scram_client_key scram_server_key oauth_issuer oauth_client_id
    oauth_client_secret oauth_scope""".split()
)
URI_PREFIXES = ("postgresql://", "postgres://")
_FIRST_KEY = re.compile(r"\s*([A-Za-z_]+)\s*=")
_QUOTED = re.compile(r'"[^"]*"')
SECRET_KEYS = ("password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key")


def is_dsn(spec: str) -> bool:
    """True when ``spec`` is a PostgreSQL DSN: a ``postgresql://`` / ``postgres://`` URI, or a string
    whose first ``key=`` is a libpq keyword (``host=``, ``user=``, ``service=``...; ``dbname=`` is
    not needed). Reads nothing, needs no psycopg."""
    s = spec.strip()
    if s.startswith(URI_PREFIXES):
        return True
    m = _FIRST_KEY.match(s)
    return m is not None and m.group(1) in KEYWORDS


def missing_psycopg(e: ImportError) -> DurableError:
    """Return the one-line error for a missing psycopg or psycopg_pool (``e``), naming the extra."""
    return DurableError(
        f"the PostgreSQL store needs psycopg 3 and psycopg_pool ({e.name} is missing): "
        "pip install 'durable_nb[postgres]'"
    )


def parse(dsn: str) -> dict[str, str]:
    """Return the parameters libpq reads from ``dsn`` (``conninfo_to_dict``), values as strings.

    Raises :class:`DurableError` when psycopg is missing or libpq refuses the
    string; that message never holds a word of ``dsn`` (libpq's reason is
    given with what it quotes replaced by ``***``)."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError as e:
        raise missing_psycopg(e) from None
    try:
        return {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    except psycopg.Error as e:
        why = _QUOTED.sub(lambda m: m.group() if len(m.group()) <= 3 else '"***"', " ".join(str(e).split()))
        raise DurableError(
            f"cannot read the PostgreSQL DSN (libpq: {why}; the DSN is not shown, it may hold a password): "
            "write postgresql://user@host/dbname, or key=value pairs with a value holding spaces "
            "in single quotes (password='a b')"
        ) from None


def split_dsn(dsn: str) -> tuple[str, str | None, str]:
    """Return ``(conninfo without the password, the password or None, the DSN as shown)``.

    The conninfo is what libpq connects with (the password goes separately);
    the shown form is :func:`shown_of` the parsed parameters. Raises
    :class:`DurableError` as :func:`parse` does."""
    from psycopg.conninfo import make_conninfo

    params = parse(dsn)
    shown = shown_of(dsn, params)
    password = params.pop("password", None)
    return make_conninfo("", **params), password, shown


def shown_of(dsn: str, params: dict[str, str]) -> str:
    """Return how messages show a DSN whose parsed parameters are ``params``: a URI for a URI,
    key/value pairs otherwise, every secret parameter (a password) as ``***``."""
    from psycopg.conninfo import make_conninfo

    params = {k: ("***" if k in SECRET_KEYS else v) for k, v in params.items()}
    if not dsn.strip().startswith(URI_PREFIXES):
        return make_conninfo("", **params)
    user, password = params.pop("user", None), params.pop("password", None)
    host, port = params.get("host", ""), params.get("port", "")
    netloc = ""
    if host and not host.startswith("/") and "," not in host + port:
        netloc = (f"[{host}]" if ":" in host else quote(host, safe="")) + (f":{quote(port, safe='')}" if port else "")
        params.pop("host")
        params.pop("port", None)
    if user is not None:
        netloc = quote(user, safe="") + (":***" if password is not None else "") + "@" + netloc
    path = "/" + quote(params.pop("dbname"), safe="") if "dbname" in params else ""
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='/*')}" for k, v in params.items())
    return f"postgresql://{netloc}{path}" + (f"?{query}" if query else "")


def shown_dsn(spec: str) -> str:
    """Return ``spec`` as messages and settings show it: a DSN with its password masked (parsed by libpq's
    rules), anything else as it is. A DSN libpq cannot read, or without psycopg, is shown as
    ``postgresql://***`` (nothing of it)."""
    if not is_dsn(spec):
        return spec
    try:
        params = parse(spec)
    except DurableError:
        return "postgresql://***"
    if not any(k in params for k in SECRET_KEYS):
        return spec
    return shown_of(spec, params)


def mask(text: str, password: str | None) -> str:
    """Return ``text`` (a server's message) with ``password``, as given and URL-encoded, replaced by ``***``."""
    if not password:
        return text
    from urllib.parse import quote_plus

    forms = {password, quote(password, safe=""), quote_plus(password), quote(password, safe="").lower()}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text
