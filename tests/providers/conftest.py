"""Fixtures for the provider tests: a clean environment and a wire server."""

from __future__ import annotations

import pytest
from provider_wire import WireServer


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path_factory):
    """No provider setting from the machine leaks in; llm reads a temp config dir."""
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
        "DURABLE_NB_MODEL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path_factory.mktemp("llm-user")))


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server
