"""The browser tier's fixtures: a server per test module and one headless Chromium (Debian's /usr/bin/chromium,
driven by pip playwright with no browser download); the tier is skipped without that Chromium."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.servers import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser

if importlib.util.find_spec("playwright") is None:  # the browser tier needs requirements-dev.txt
    collect_ignore_glob = ["test_*.py"]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def shots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: docs/screenshots with `--refresh-screenshots`, else a temporary folder, so a
    test run leaves the checkout as it was."""
    if request.config.getoption("--refresh-screenshots"):
        return ROOT / "docs" / "screenshots"
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots in {folder}")
    return folder


@dataclass(frozen=True)
class Served:
    """A server the module's tests share: its URL, and its process, whose children the warm-up starts."""

    url: str
    process: subprocess.Popen[bytes]


def serve(tmp_path_factory: pytest.TempPathFactory, **env: str) -> Iterator[Served]:
    """`streamlit run app.py` on a free localhost port, with `env` besides the test's own, showing the H200
    sessions shipped in sessions/; stopped when the caller's fixture ends."""
    port = free_port()
    log = (tmp_path_factory.mktemp("log") / "streamlit.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "localhost", "--server.headless", "true",
         "--server.fileWatcherType", "none"],  # an edit to the checkout during the run must not stall the page
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        # One OpenMP thread: on a 2-core test box the browser takes a core, and Inductor's C++ kernels
        # spinning on an OpenMP barrier against it ran 100x slow, which is not what the screenshots should show.
        env={**os.environ, "OMP_NUM_THREADS": "1", **env},
        start_new_session=True)
    url = f"http://localhost:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"streamlit did not start; see {log.name}")
            time.sleep(0.5)
    yield Served(url, proc)
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The app as a user starts it, a server per test module."""
    yield from serve(tmp_path_factory)


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage"])
        yield chromium
        chromium.close()
