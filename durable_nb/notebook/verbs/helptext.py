"""The text ``%durable?`` shows: the cell magic, one row per verb (from the verb table), the settings."""

from __future__ import annotations

import textwrap

from .registry import VERBS

WIDTH = 100  # characters per line of a verb's help
USAGE_COLUMN = 30  # usages up to this long line up their help in one column

CELL_HELP = """Run a turn of the notebook's durable session, or manage the session.

Cell magic -- the cell body is the user message; the reply streams below:

    %%durable [--meta | --ephemeral | --note | --system] [--chat] [--out VAR] [--no-interpolate]
              [--dry-run] [--tools A,B] [--temperature T] [--max-tokens N] [--param KEY=VALUE]
              [--models A,B,C] [--variants "temperature=0 | temperature=1"]

  A cell tagged (or flagged) `meta` or `ephemeral` does not call the model:
  it stages an injected entry for the next turn. `note` appends a note entry
  that is kept but never sent. `system` sets the session's system prompt (an
  entry on the active path; edit and re-run the cell for a sibling branch).
  Flags win over tags. A turn runs the tools the model calls (%durable tools
  add NAME) and calls the model again until it answers without a tool call.
  Re-running a cell whose entry is on the active path rewinds to before that entry first, so an
  edited cell grows a sibling branch (--chat appends at the leaf instead).
  {{name}} / {{name.attr}} put a notebook variable into the text
  (\\{{name}} is literal). The reply is in `_durable` afterwards.
  --models / --variants fan the turn out: one sibling branch per variant
  (both given: every model with every variant), run at the same time, each
  labelled by what differs (offline@t3); `_durable` is then {label: reply}
  and the leaf stays on the first variant that replied.

Line magic verbs (a bare %durable is status):

"""

SETTINGS_HELP = """
Settings: %config DurableMagics.model / .store / .session / .throttle
"""


def help_text() -> str:
    """Return the magic's help: the cell magic, then one entry per verb of :data:`.verbs.VERBS`, then the settings.

    Each verb's help is wrapped at word boundaries to :data:`WIDTH` characters (a pager breaks a longer
    line mid-word), in a column after the usages; a usage longer than :data:`USAGE_COLUMN` starts its
    help two spaces after it, its further lines in the column. O(size of the help)."""
    col = min(max(len(v.usage) for v in VERBS.values()), USAGE_COLUMN) + 2
    indent = " " * (len("    %durable ") + col)
    rows: list[str] = []
    for v in VERBS.values():
        first, *more = v.help.splitlines()
        head = f"    %durable {v.usage:<{col}}" if len(v.usage) < col else f"    %durable {v.usage}  "
        rows += textwrap.wrap(first, WIDTH, initial_indent=head, subsequent_indent=indent) or [head.rstrip()]
        for line in more:
            rows += textwrap.wrap(line, WIDTH, initial_indent=indent, subsequent_indent=indent)
    return CELL_HELP + "\n".join(rows) + "\n" + SETTINGS_HELP
