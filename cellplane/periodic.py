"""A task run every N seconds on its own thread until stopped (heartbeats).

A failing run is logged and the next one happens on schedule: a heartbeat
that fails once (broker restarting) must not stop the service reporting.
A run that fails because a database is away is logged without a traceback,
at DEBUG: the engine said the outage once (``cellplane.outage``).
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from cellplane.db import away

LOG = logging.getLogger(__name__)


class PeriodicTask:
    def __init__(self, name: str, interval: float, func: Callable[[], None]) -> None:
        self.name = name
        self.interval = interval
        self._func = func
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopped.is_set():
            try:
                self._func()
            except Exception as exc:  # keep reporting; the log says why
                if away.is_away(exc):
                    LOG.debug('Periodic task %s failed, its database is away (%s); next '
                              'run in %s s', self.name, away.first_line(exc), self.interval)
                else:
                    LOG.exception('Periodic task %s failed; next run in %s s',
                                  self.name, self.interval)
            self._stopped.wait(self.interval)
