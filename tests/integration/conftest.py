"""Fixtures of the integration tier's page tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty sessions/ folder, so what a first visit shows is under the test's control (the page tests use it
    in every test: `pytestmark`)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    monkeypatch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
    return folder
