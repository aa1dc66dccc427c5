"""How the page gets the session widget's code: served by the installed extension, else asked of the kernel.

    SessionWidget._esm = module.esm()     # a ~2 KB loader, not the ~150 KB bundle (the stylesheet stays in _css)
    module.reply(widget)                  # the answer to the page's {"action": "module"}

anywidget ships a widget's module and stylesheet inside its state, so every ``%durable show`` sent
~174 KB of code over the kernel's websocket before its first paint (~22 KB of it the stylesheet,
which stays). The build copies the bundle into durable_nb's JupyterLab / Notebook 7 extension,
named by its content's hash (``static/widget-<hash>.js``: js/labextension/copy-widget.mjs), and the Jupyter
server serves it from the page's own origin (``fullLabextensionsUrl``, nothing remote). The
loader imports that file; where it is missing (no extension, another version of it, a front end
that is not JupyterLab or Notebook 7) it asks the kernel for the code once (a ``module`` request:
the bundle as text, imported from a blob URL, as anywidget does), so the widget draws everywhere.
In a checkout never built the loader is :func:`~durable_nb.widget.assets.front_end`'s one-line
module. O(1) after the first call (which hashes the ~150 KB bundle, well under a millisecond).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from .assets import asset, built, front_end

# The loader: a blob module, so every URL is absolute (the page's config names the extensions' URL).
LOADER = """// durable_nb's widget loader (durable_nb/widget/module.py): the bundle from the page's server, else the kernel
const NAME = %(name)s;
function served() {
  const el = document.getElementById("jupyter-config-data");
  if (!el) return "";
  try {
    const u = JSON.parse(el.textContent || "{}").fullLabextensionsUrl;
    return u ? new URL(String(u).replace(/\\/?$/, "/") + "durable_nb/static/", location.href).href : "";
  } catch (e) {
    return "";
  }
}
function fromKernel(model) {
  return new Promise((resolve, reject) => {
    const on = (msg) => {
      if (!msg || msg.reply !== "module") return;
      model.off("msg:custom", on);
      const url = URL.createObjectURL(new Blob([msg.esm || ""], { type: "text/javascript" }));
      import(/* webpackIgnore: true */ url).then((m) => { URL.revokeObjectURL(url); resolve(m.default); }, reject);
    };
    model.on("msg:custom", on);
    model.send({ action: "module" });
  });
}
async function fromServer(base) {
  const m = await import(/* webpackIgnore: true */ base + NAME);
  return m.default;
}
let loading;
function load(model) {
  if (!loading) {
    const base = served();
    loading = base ? fromServer(base).catch(() => fromKernel(model)) : fromKernel(model);
    loading.catch(() => { loading = undefined; });
  }
  return loading;
}
export default {
  async render({ model, el }) {
    const wait = Object.assign(document.createElement("div"), { className: "dnb-loading-widget", textContent: "Loading the session widget…" });
    el.append(wait);
    let w;
    try {
      w = await load(model);
    } finally {
      wait.remove();
    }
    return w.render({ model, el });
  },
};
"""


def _hashed(name: str) -> str:
    """``widget.js`` -> ``widget-<first 16 hex of its sha256>.js`` (the name the build copies it under)."""
    stem, _, ext = name.rpartition(".")
    digest = hashlib.sha256(asset(name).read_bytes()).hexdigest()[:16]
    return f"{stem}-{digest}.{ext}"


@cache
def esm() -> str:
    """Return the widget's ``_esm``: :data:`LOADER` naming the built bundle's hashed files, or the
    not-built module (:func:`~durable_nb.widget.assets.front_end`) in a checkout never built."""
    if not asset("widget.js").is_file():
        code = front_end("widget.js")
        return code if isinstance(code, str) else code.read_text(encoding="utf-8")
    return LOADER % {"name": json.dumps(_hashed("widget.js"))}


def reply(widget: Any, _req: dict[str, Any]) -> None:
    """``{"action": "module"}``: reply with the bundle as text (the page had no served copy of it).
    O(bundle): ~150 KB, once per widget view that asks."""
    widget.send({"reply": "module", "esm": built("widget.js")})
