"""The verbs that set up the next turns: model, tools, set, staged, clear, dry-run."""

from __future__ import annotations

from ...durable import check_settings, read_value
from ...errors import DurableError, suggest
from ...models import build
from ..context import Context
from ..options import Call, Option
from ..render import dry_run_text, model_label, plural, staged_text, tools_text
from .registry import MANY, verb


@verb("model [name]", "show or set the model (offline, openai:..., ...)")
def model(ctx: Context, call: Call) -> None:
    if call.args:
        if ctx.notebook_model(call.args[0]) is None:  # a notebook function is taken as --models takes it
            build(call.args[0])  # builds the client, sends nothing; a bad name raises ModelError
        ctx.config.model = call.args[0]
        ctx.state.model = ctx.configured_model()  # also when the name is unchanged but its function was redefined
    print(f"model: {ctx.state.own.model_name()}")


@verb(
    "tools [add NAME... | remove NAME...] [--mcp CMD] [--mcp-url URL] [--name N] [--approve ask]",
    "list the session's tools with their schemas, or add / remove\nnotebook functions by name (a turn runs the ones the model calls);\n"
    "add --mcp CMD / --mcp-url URL adds an MCP server's tools (remove N stops it)",
    nargs=(0, MANY),
    options=(
        Option("--mcp", "tools add: an MCP server's command, run over stdio", spec={"metavar": "CMD"}),
        Option("--mcp-url", "tools add: an MCP server's streamable-HTTP URL", spec={"metavar": "URL"}),
        Option("--name", "tools add: the MCP server's name here (default: its own)", spec={"metavar": "N"}),
        Option("--approve", "tools add: always (default) or ask before each MCP call", spec={"metavar": "WHEN"}),
    ),
)
def tools(ctx: Context, call: Call) -> None:
    if not call.args:
        if call.mcp or call.mcp_url:
            raise DurableError("usage: %durable tools add --mcp CMD (or --mcp-url URL)")
        print(tools_text(ctx.tool_list()))
        return
    action, names = call.args[0], call.args[1:]
    if action == "add" and (call.mcp or call.mcp_url):
        _add_mcp(ctx, call, names)
        return
    if action not in ("add", "remove"):
        raise DurableError(
            f"usage: %durable tools [add NAME... | remove NAME...], not {action!r}{suggest(action, ['add', 'remove'])}"
        )
    if not names:
        what = "a function in the notebook" if action == "add" else "a tool (%durable tools lists them)"
        raise DurableError(f"%durable tools {action} needs the name of {what}")
    if action == "add":
        added = ctx.resolve_tools(names)  # all or nothing: a bad name adds none
        taken = _taken(ctx, mcp_only=True)
        for t in added:
            if t.name in taken:
                raise DurableError(
                    f"the tool {t.name!r} is already a tool here ({taken[t.name]}): "
                    "two tools cannot share a name; remove that server first"
                )
        for name in names:
            ctx.tool_names[name] = None
        print(f"tools: {', '.join(ctx.tool_names)} (added {', '.join(t.name for t in added)})")
        return
    for n in names:
        if n not in ctx.tool_names and n not in ctx.mcp_servers:
            known = ", ".join([*ctx.tool_names, *ctx.mcp_servers]) or "none yet"
            raise DurableError(
                f"no tool {n!r}{suggest(n, [*ctx.tool_names, *ctx.mcp_servers])}; the tools are: {known}"
            )
    for n in names:
        if n in ctx.mcp_servers:
            ctx.mcp_servers.pop(n).close()
        else:
            del ctx.tool_names[n]
    print(f"removed {', '.join(names)}; tools: {', '.join(t.name for t in ctx.tool_list()) or 'none'}")


def _add_mcp(ctx: Context, call: Call, names: tuple[str, ...]) -> None:
    """``%durable tools add --mcp CMD`` / ``--mcp-url URL``: start the server, keep its tools under its name."""
    from ...durable import mcp_tools

    if names or (call.mcp and call.mcp_url):
        raise DurableError("%durable tools add --mcp CMD (or --mcp-url URL) takes one server and no function names")
    if call.approve not in (None, "always", "ask"):
        raise DurableError(f"--approve takes always or ask, not {call.approve!r}")
    if call.name in ctx.mcp_servers:
        raise DurableError(f"an MCP server is already named {call.name!r}: %durable tools remove {call.name} first")
    found = mcp_tools(call.mcp, url=call.mcp_url, name=call.name, approve=call.approve)
    key = call.name or found.server.info.get("name") or "mcp"
    if key in ctx.mcp_servers:
        found.close()
        raise DurableError(f"an MCP server is already named {key!r}: give this one --name N")
    taken = _taken(ctx)
    clash = next((t.name for t in found if t.name in taken), None)
    if clash is not None:
        found.close()
        raise DurableError(
            f"the MCP server {key}'s tool {clash!r} is already a tool here ({taken[clash]}): "
            "two tools cannot share a name; remove that one first"
        )
    ctx.mcp_servers[key] = found
    print(f"MCP server {key} ({found.server.where}): {', '.join(t.name for t in found) or 'no tools'}")


def _taken(ctx: Context, mcp_only: bool = False) -> dict[str, str]:
    """Return ``{tool name: whose it is}`` of the session's tools: each MCP server's and (unless
    ``mcp_only``) the notebook functions added, those that still resolve. O(tools)."""
    out = {t.name: f"of the MCP server {k}" for k, s in ctx.mcp_servers.items() for t in s}
    if not mcp_only:
        for n in ctx.tool_names:
            try:
                out.update({t.name: f"the notebook function {n}" for t in ctx.resolve_tools([n])})
            except DurableError:  # a function since deleted: the next turn says so
                pass
    return out


@verb(
    "set [KEY=VALUE...]",
    "show or set the session's default settings for turns:\ntemperature, max_tokens, top_p, seed, stop, or any provider "
    "setting\n(KEY= removes one; a cell's --temperature etc. wins for that turn)",
    nargs=(0, MANY),
)
def set_(ctx: Context, call: Call) -> None:
    new = dict(ctx.settings)
    for pair in call.args:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise DurableError(f"usage: %durable set KEY=VALUE (like temperature=0.2), not {pair!r}")
        if value == "":
            new.pop(key, None)
        else:
            new[key] = read_value(value)
    ctx.settings = check_settings(new)  # a bad value changes nothing (one line)
    if ctx.settings:
        print("settings: " + ", ".join(f"{k}={v!r}" for k, v in ctx.settings.items()))
    else:
        print("no settings: the provider's defaults (%durable set temperature=0.2 sets one)")


@verb("staged", "list the staged meta and ephemeral entries")
def staged(ctx: Context, call: Call) -> None:
    print(staged_text(ctx.state.staged))


@verb("clear", "drop the staged meta and ephemeral entries")
def clear(ctx: Context, call: Call) -> None:
    n = ctx.state.clear()
    ctx.state.sync()
    print(f"cleared {plural(n, 'staged entry', 'staged entries')}")


@verb("dry-run", "the messages the next turn would send (no cell)")
def dry_run(ctx: Context, call: Call) -> None:
    st = ctx.state
    msgs, new = st.preview(None, None)
    print(dry_run_text(msgs, new, model_label(st.own.model)))
