"""Fixtures for the real-browser tests: one JupyterLab server and one chromium for this folder.

Package scope, not session scope: both are stopped as soon as this folder's tests are done,
so Playwright's sync API (and its event loop) is free again for other test folders.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .lab import CHROMIUM, LabServer, launch_chromium

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(scope="package")
def lab_root(tmp_path_factory) -> Path:
    """The server's root dir: tests write their notebooks here."""
    return tmp_path_factory.mktemp("lab-root")


@pytest.fixture(scope="package")
def lab(lab_root):
    if shutil.which("jupyter-lab") is None and shutil.which("jupyter") is None:
        pytest.fail("JupyterLab is not installed: run ./dev test, which installs it")
    with LabServer(lab_root) as server:
        yield server


@pytest.fixture(scope="package")
def browser(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no chromium at {CHROMIUM}: run ./dev test, which installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = launch_chromium(p, tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser):
    page = browser.new_page()
    try:
        yield page
    finally:
        page.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
