"""%durable sessions in a real kernel: the session browser widget, its fallbacks, a row opened."""

from __future__ import annotations

from test_kernel import one_line_usage_error

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_sessions_is_a_table_widget_with_fallbacks_and_a_row_opens_read_only(nb):
    first = nb.fresh()
    nb.cell("one question")
    own = nb.fresh()
    nb.cell("another question")
    r = nb.k.ok("%durable sessions")
    data = r.displays[-1]["data"]
    assert WIDGET in data and "<script" not in data["text/html"] and "<table" in data["text/html"]
    assert f">{own} (notebook)</td>" in data["text/html"] and f">{first}</td>" in data["text/html"]
    assert f"\n* {own} " in data["text/plain"] and f"\n  {first} " in data["text/plain"]
    r = nb.k.ok(
        "_w = get_ipython().run_line_magic('durable', 'sessions')\n"
        f"_w.open_row({first!r}); print(_w.opened); print(_w.status)"
    )
    assert r.stdout.startswith(f"{first}\n%durable open {first}\nopened "), r.stdout
    assert "read-only" in r.stdout and "%durable close returns" in r.stdout
    assert "read-only copy of" in nb.k.ok("%durable status").stdout
    r = nb.k.ok(f"_w.open_row({own!r}); print(_w.status)")  # the notebook's own row: back to it
    assert r.stdout == f"back to the notebook's session {own} (as %durable close)\n"
    assert "read-only" not in nb.k.ok("%durable status").stdout
    assert WIDGET in nb.k.ok("%durable sessions --logs").displays[-1]["data"]
    assert "sessions" in one_line_usage_error(nb.k.run("%durable sessions extra"))
    assert "unknown option --bogus" in one_line_usage_error(nb.k.run("%durable sessions --bogus"))
