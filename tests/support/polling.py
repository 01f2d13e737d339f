"""Waiting in tests for what the system does in its own time: poll a check until it holds.

One way to wait, for every test: ``eventually(check, what)`` calls
``check`` until it returns something truthy and returns that, or fails
after ``seconds`` naming ``what``. The pause between calls starts short
(most states come within a few tens of milliseconds in the embedded mode)
and grows to ``max_interval``, so that a long wait on the real daemons does
not spend the machine's CPU asking (a check there may run a CLI command).
"""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar('T')

FIRST_INTERVAL = 0.02


def eventually(check: Callable[[], T], what: str, *, seconds: float = 30.0,
               max_interval: float = 0.25) -> T:
    """``check()``'s first truthy value; AssertionError naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    interval = FIRST_INTERVAL
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f'never happened within {seconds:g} s: {what}')
        time.sleep(interval)
        interval = min(interval * 1.5, max_interval)
