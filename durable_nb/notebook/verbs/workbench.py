"""The verbs that set up the next turns: model, tools, set, staged, clear, dry-run."""

from __future__ import annotations

from ...durable import check_settings, read_value
from ...errors import DurableError, suggest
from ...models import build
from ..context import Context
from ..options import Call
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
    "tools [add NAME... | remove NAME...]",
    "list the session's tools with their schemas, or add / remove\nnotebook functions by name (a turn runs the ones the model calls)",
    nargs=(0, MANY),
)
def tools(ctx: Context, call: Call) -> None:
    if not call.args:
        print(tools_text(ctx.tool_list()))
        return
    action, names = call.args[0], call.args[1:]
    if action not in ("add", "remove"):
        raise DurableError(
            f"usage: %durable tools [add NAME... | remove NAME...], not {action!r}{suggest(action, ['add', 'remove'])}"
        )
    if not names:
        raise DurableError(f"%durable tools {action} needs the name of a function in the notebook")
    if action == "add":
        added = ctx.resolve_tools(names)  # all or nothing: a bad name adds none
        for name in names:
            ctx.tool_names[name] = None
        print(f"tools: {', '.join(ctx.tool_names)} (added {', '.join(t.name for t in added)})")
        return
    for n in names:
        if n not in ctx.tool_names:
            known = ", ".join(ctx.tool_names) or "none yet"
            raise DurableError(f"no tool {n!r}{suggest(n, ctx.tool_names)}; the tools are: {known}")
    for n in names:
        del ctx.tool_names[n]
    print(f"removed {', '.join(names)}; tools: {', '.join(ctx.tool_names) or 'none'}")


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
