"""Allocation removals Placement could not take (it, or its database, was down): retried until it does.

Use it only for a consumer nobody will claim for again: a terminated
instance (compute agent), one in ERROR (a cell conductor that gave up its
reschedule), a boot that failed or was deleted before it was built (the
super conductor). Its allocation must go, or its resources stay used for
good. When the removal fails after the client's own retries
(``[placement] retry_timeout``: a 503 or no answer; a 500 too), the
consumer's UUID is kept here and ``retry``, run periodically on a thread of
its own (a removal may wait for Placement as long as the client retries),
tries again until Placement removes it or says there is nothing to remove.
What is kept here is lost if the process itself is restarted meanwhile: the
Placement audit (``cellplane-manage placement audit``, or the super
conductor's periodic one) finds those.
"""
from __future__ import annotations

import logging
import threading
from typing import Protocol

from placement.client.errors import PlacementClientError, PlacementUnreachable

LOG = logging.getLogger(__name__)


class Unclaimer(Protocol):
    def unclaim(self, consumer_uuid: str) -> bool: ...


class PendingUnclaims:
    """The consumers whose allocations are still to be removed, in the order they failed."""

    def __init__(self, placement: Unclaimer) -> None:
        self._placement = placement
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}

    def unclaim(self, consumer_uuid: str) -> bool:
        """Remove the consumer's allocations now, or keep it for ``retry`` (False)."""
        failure = self._attempt(consumer_uuid)
        if failure is None:
            return True
        with self._lock:
            self._pending[consumer_uuid] = failure
        LOG.warning('The allocations of %s could not be removed from Placement (%s); '
                    'trying again every report interval', consumer_uuid, failure)
        return False

    def later(self, consumer_uuid: str, failure: str) -> None:
        """Keep the consumer for ``retry`` without trying now (a removal just failed)."""
        with self._lock:
            self._pending[consumer_uuid] = failure

    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def retry(self) -> int:
        """Try the kept removals again, stopping at the first failure; how many were done."""
        done = 0
        for consumer_uuid in self.pending():
            failure = self._attempt(consumer_uuid)
            if failure is not None:
                LOG.warning('Still %d allocation removal(s) to make in Placement (%s)',
                            len(self.pending()), failure)
                break
            with self._lock:
                self._pending.pop(consumer_uuid, None)
            done += 1
            LOG.info('Removed the allocations of %s from Placement, left behind while '
                     'it could not be reached', consumer_uuid)
        return done

    def _attempt(self, consumer_uuid: str) -> str | None:
        """None when Placement holds nothing more for the consumer; else why it must be tried again."""
        try:
            self._placement.unclaim(consumer_uuid)
        except PlacementUnreachable as exc:
            return str(exc)
        except PlacementClientError as exc:
            if exc.status >= 500:
                return str(exc)
            # Refused, not failed: asking again would be refused again.
            LOG.error('Placement refused to remove the allocations of %s (%s); remove '
                      'them with DELETE /allocations/%s', consumer_uuid, exc, consumer_uuid)
        return None
