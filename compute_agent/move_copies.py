"""The moves' copies this agent runs, by migration: what an abort or a force complete acts on.

A source host's hand-over (``compute_agent/moves.py``) registers its copy
here with ``begin`` and ``end``s it; an abort or a force complete
(compute API 1.6) finds it by the migration's uuid. The abort and the
hand-over come from different senders (the API role, the destination), so
either may arrive first:

- the copy runs: the abort stops it (``CopyControl``), the instance runs on;
- the copy has not begun: the abort is kept, and ``begin`` then refuses the
  copy (``AbortedBeforeCopy``), the instance untouched;
- the copy ended: too late, the switch-over goes on (``TOO_LATE``).

What is kept is bounded (the newest ``KEEP`` migrations of each kind).

A copy runs on a thread of its own (``run``), not on the RPC handler
thread its ``hand_over`` came in on: a copy takes as long as the disk does
(the fake driver's ``move_seconds``), and the agent's few handler threads
(``[DEFAULT] rpc_handler_threads``, shared by every host a hollow agent
serves) would otherwise each hold one copy, every other message of every
host queued behind them: the next moves' ``prep_move`` and ``finish_move``,
and the very ``live_migration_abort`` meant to stop a copy. How many copies
run at once is what the moves asked (a drain's ``--parallel``); a graceful
stop waits for them (``wait``), as it does for the handlers.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Callable

from compute_agent.virt.driver import CopyControl

KEEP = 1000
STOPPING = 'stopping the copy'
BEFORE_COPY = 'kept: the copy will not begin'
TOO_LATE = 'too late: the copy is over'
NOTHING = 'no copy runs'

LOG = logging.getLogger(__name__)


class AbortedBeforeCopy(Exception):
    """The move was aborted before its copy began here."""


class MoveCopies:
    """The copies in flight on this agent, the aborts that came first, the copies that ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, CopyControl] = {}
        self._aborted: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._ended: collections.OrderedDict[str, None] = collections.OrderedDict()
        # The threads of the copies running (``run``), for ``wait``.
        self._threads: set[threading.Thread] = set()

    @staticmethod
    def _keep(kept: collections.OrderedDict, migration_uuid: str) -> None:
        kept[migration_uuid] = None
        while len(kept) > KEEP:
            kept.popitem(last=False)

    def begin(self, migration_uuid: str) -> CopyControl:
        """The control of the copy that begins now; ``AbortedBeforeCopy`` if it was aborted."""
        with self._lock:
            if migration_uuid in self._aborted:
                del self._aborted[migration_uuid]
                raise AbortedBeforeCopy(migration_uuid)
            control = self._running[migration_uuid] = CopyControl()
            return control

    def end(self, migration_uuid: str, *, copied: bool) -> None:
        """The copy is over (``copied``: it went to its end, the switch-over follows)."""
        with self._lock:
            self._running.pop(migration_uuid, None)
            if copied:
                self._keep(self._ended, migration_uuid)

    def abort(self, migration_uuid: str) -> str:
        """Stop the migration's copy, or keep the abort for it; what was done (a constant above)."""
        with self._lock:
            control = self._running.get(migration_uuid)
            if control is not None:
                return STOPPING if control.abort() else TOO_LATE
            if migration_uuid in self._ended:
                return TOO_LATE
            self._keep(self._aborted, migration_uuid)
            return BEFORE_COPY

    def force_complete(self, migration_uuid: str) -> bool:
        """End the migration's copy now; False if none runs (or it is being aborted)."""
        with self._lock:
            control = self._running.get(migration_uuid)
            return control is not None and control.force_complete()

    def run(self, migration_uuid: str, work: Callable[[], None]) -> None:
        """Run ``work`` (a copy and what follows it) on a thread of its own; errors logged."""
        thread = threading.Thread(target=self._run, args=(migration_uuid, work),
                                  name=f'copy-{migration_uuid[:8]}', daemon=True)
        with self._lock:
            self._threads.add(thread)
        try:
            thread.start()
        except RuntimeError:   # no thread to be had: the copy runs here, as it used to
            with self._lock:
                self._threads.discard(thread)
            LOG.warning('No thread for the copy of migration %s: it runs on its handler '
                        'thread', migration_uuid)
            self._run(migration_uuid, work)

    def _run(self, migration_uuid: str, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # a thread of its own: nobody else would log it
            LOG.exception('The hand-over of migration %s failed', migration_uuid)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the copies running (``run``), at most ``timeout`` s; False if some still run."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                threads = [t for t in self._threads if t is not threading.current_thread()]
            if not threads:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            threads[0].join(left)
