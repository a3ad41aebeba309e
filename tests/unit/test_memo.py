"""ui.memo: a value is made once per owner and key, even when a page and the warm-up ask for it together."""

from __future__ import annotations

import threading
import time

import pytest

from ui.memo import memo


class Owner:
    """Stands for a session: memo keys its values by the owner's identity."""


def test_two_threads_asking_together_make_the_value_once() -> None:
    owner, made, started = Owner(), [], threading.Event()

    def make() -> int:
        started.set()
        made.append(threading.current_thread().name)
        time.sleep(0.2)  # long enough for the second thread to ask while the first makes it
        return 42

    answers: list[int] = []
    first = threading.Thread(target=lambda: answers.append(memo(owner, ("figure",), make)), name="warm-up")
    first.start()
    started.wait()
    answers.append(memo(owner, ("figure",), make))  # the page, asking while the warm-up makes it
    first.join()
    assert answers == [42, 42] and made == ["warm-up"]


def test_a_failed_make_is_tried_again() -> None:
    owner, calls = Owner(), []

    def make() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("the first try fails")
        return 7

    with pytest.raises(ValueError):
        memo(owner, ("table",), make)
    assert memo(owner, ("table",), make) == 7 and len(calls) == 2
