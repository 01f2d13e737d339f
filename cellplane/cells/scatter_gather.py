"""Run one read per cell at once and stop waiting at a deadline.

``gather`` gives each cell's answer, or the exception it raised, or
``CellTimeout`` if it had not answered within the timeout. A cell whose
database or address does not answer (a closed port, an unroutable host, a
locked table) costs the caller at most ``timeout`` seconds, whatever the
driver does: the reads run in daemon threads, so one still stuck cannot hold
the process at exit either.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Mapping, TypeVar

T = TypeVar('T')


class CellTimeout(Exception):
    """A cell did not answer within the timeout."""


def gather(reads: Mapping[str, Callable[[], T]], timeout: float
           ) -> dict[str, T | BaseException]:
    """Cell UUID -> what its read returned, or the exception it raised (or CellTimeout)."""
    results: dict[str, T | BaseException] = {}
    lock = threading.Lock()
    threads = []

    def run(cell_uuid: str, read: Callable[[], T]) -> None:
        try:
            outcome: T | BaseException = read()
        except Exception as exc:  # noqa: BLE001 - handed to the caller, per cell
            outcome = exc
        with lock:
            results[cell_uuid] = outcome

    for cell_uuid, read in reads.items():
        thread = threading.Thread(target=run, args=(cell_uuid, read), daemon=True,
                                  name=f'cell-read-{cell_uuid[:8]}')
        thread.start()
        threads.append(thread)
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    with lock:
        answered = dict(results)
    for cell_uuid in reads:
        if cell_uuid not in answered:
            answered[cell_uuid] = CellTimeout(
                f'no answer within {timeout:g} s ([cells] read_timeout)')
    return answered
