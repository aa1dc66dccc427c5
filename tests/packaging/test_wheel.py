"""The wheel ships the prebuilt front ends (js/): the widget's bundle, and the JupyterLab / Notebook 7 extension:
installed into a fresh venv, JupyterLab lists it.

The wheel is built from this checkout with its build backend (hatchling and
hatch-jupyter-builder, no isolation: the extension build that ``./dev build``
made is reused, so no Node runs here). The venv sees JupyterLab from this
environment (``--system-site-packages``) and gets the wheel with ``pip
install --no-deps``: what it lists comes from the wheel alone.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = "durable_nb-0.1.0.data/data/share/jupyter/labextensions/durable_nb/"


def run(*cmd, **kw) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout + r.stderr


def test_the_wheel_installs_an_enabled_labextension(tmp_path):
    assert (ROOT / "durable_nb" / "labextension" / "package.json").is_file(), "run ./dev build first"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT))
    (wheel,) = tmp_path.glob("durable_nb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert SHARED + "package.json" in names and SHARED + "install.json" in names
    assert any(n.startswith(SHARED + "static/remoteEntry.") for n in names)
    assert any(n.startswith(SHARED + "schemas/durable_nb/plugin.json") for n in names)
    assert not any(n.startswith("durable_nb/labextension/") for n in names)  # shipped once, as shared data
    assert "durable_nb/static/widget.js" in names
    assert {"durable_nb/static/export.js", "durable_nb/static/widget.css"} <= set(names)  # the bundle, built from js/

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", str(venv))
    py = venv / "bin" / "python"
    # When this environment is itself a venv (./dev's .venv), --system-site-packages reaches only the base
    # Python's packages: point the new venv at this environment's too, after its own.
    own = run(str(py), "-c", "import site; print(site.getsitepackages()[0])").strip()
    Path(own, "_this_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    run(str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")
    # `jupyter labextension list`, run by the venv's interpreter (the `jupyter` launcher would pick the
    # base environment's `jupyter-labextension` script, whose sys.prefix is not the venv)
    out = run(str(py), "-m", "jupyterlab.labextensions", "list", env=env, cwd=tmp_path)
    lines = out.splitlines()
    i = next((k for k, x in enumerate(lines) if "durable_nb v0.1.0" in x), -1)
    assert i >= 0 and "enabled" in lines[i] and "OK" in lines[i] and "(python, durable_nb)" in lines[i], out
    folder = next(x for x in reversed(lines[:i]) if x.strip().startswith("/"))
    assert folder.strip() == str(venv / "share" / "jupyter" / "labextensions"), out
