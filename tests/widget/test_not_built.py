"""A checkout whose front end was never built (no ./dev build) still imports and shows the widget: it says
in one line what to run, and the exported page refuses with the same line."""

from __future__ import annotations

import pytest

from durable_nb.errors import DurableError
from durable_nb.widget import assets


def test_an_unbuilt_checkout_says_to_run_dev_build(tmp_path, monkeypatch):
    monkeypatch.setattr(assets, "STATIC", tmp_path)  # an empty durable_nb/static
    module = assets.front_end("widget.js")
    assert isinstance(module, str) and "export default" in module and "./dev build" in module
    assert module.count("\n") == 1  # one line
    assert assets.front_end("widget.css") == ""
    with pytest.raises(DurableError, match=r"run \./dev build"):
        assets.built("export.js")


def test_a_built_checkout_gives_the_bundle():
    assert assets.front_end("widget.js") == assets.asset("widget.js")
    assert "function render" in assets.built("export.js")
