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
"""
from __future__ import annotations

import collections
import threading

from compute_agent.virt.driver import CopyControl

KEEP = 1000
STOPPING = 'stopping the copy'
BEFORE_COPY = 'kept: the copy will not begin'
TOO_LATE = 'too late: the copy is over'
NOTHING = 'no copy runs'


class AbortedBeforeCopy(Exception):
    """The move was aborted before its copy began here."""


class MoveCopies:
    """The copies in flight on this agent, the aborts that came first, the copies that ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, CopyControl] = {}
        self._aborted: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._ended: collections.OrderedDict[str, None] = collections.OrderedDict()

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
