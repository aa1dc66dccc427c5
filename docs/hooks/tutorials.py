"""MkDocs hook: the tutorials, executed, as pages of the site (``tutorials/NN_name.ipynb``).

Each ``notebooks/*.ipynb`` runs top to bottom with ``python -m durable_nb.run_notebook``'s function
(offline model, no key, no network; cell tags sent as JupyterLab sends them, which nbconvert's own
``execute`` does not do) in a copy of ``notebooks/`` under ``build/docs-tutorials/``, so nothing lands
in the checkout. mkdocs-jupyter then renders the executed files. A failing cell fails the build.

Cost: about a minute per tutorial. The executed file is kept and reused while the notebook and
the package's source are unchanged (a hash of both), so ``./dev docs`` rebuilds quickly.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.tutorials")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "build" / "docs-tutorials" / "tutorials"  # mkdocs-jupyter includes what matches tutorials/*.ipynb


def source_hash(notebook: Path) -> str:
    """Return a hash of ``notebook`` and of every source file of the package (what its outputs depend on)."""
    h = hashlib.sha256(notebook.read_bytes())
    for f in sorted((ROOT / "durable_nb").rglob("*")):
        if f.is_file() and f.suffix in (".py", ".js", ".css") and "labextension" not in f.parts:
            h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
    for f in sorted((NOTEBOOKS / "data").glob("*")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def executed(notebook: Path) -> Path:
    """Return the path of ``notebook`` executed (running it unless a run of the same sources is kept)."""
    import nbformat

    from durable_nb.run_notebook import run_notebook

    target, stamp = OUT / notebook.name, OUT / (notebook.stem + ".sha256")
    want = source_hash(notebook)
    if target.exists() and stamp.exists() and stamp.read_text() == want:
        return target
    work = OUT / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(NOTEBOOKS, work, ignore=shutil.ignore_patterns(".durable", ".ipynb_checkpoints", "*.ipynb"))
    shutil.copy(notebook, work / notebook.name)
    log.info("executing %s (offline model) for the site", notebook.name)
    nb = run_notebook(work / notebook.name, timeout=240)  # raises NotebookError naming the failing cell
    nbformat.write(nb, target)
    stamp.write_text(want)
    shutil.rmtree(work, ignore_errors=True)
    return target


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files, config):
    """Add each tutorial, executed, as ``tutorials/<name>.ipynb``."""
    OUT.mkdir(parents=True, exist_ok=True)
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        path = executed(notebook)
        # a File read from src_dir (not File.generated: mkdocs-jupyter's wrapper finds its path from src_dir)
        uri = path.relative_to(OUT.parent).as_posix()
        files.append(File(uri, str(OUT.parent), config["site_dir"], config["use_directory_urls"]))
    return files
