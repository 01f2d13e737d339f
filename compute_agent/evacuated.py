"""A host back from the dead destroys the guests evacuated while it was away, before it reports.

When a host's compute service was down, its instances may have been
evacuated: rebuilt on other hosts, the migration's Placement consumer
holding this host's old allocation for them. Its guests (a real
hypervisor's survive the agent; the fake driver's with ``[fake_driver]
state_dir``) still hold copies. Computes hold no database credentials, so
the agent asks its cell conductor (``evacuated_guests``, a call, cell
conductor API 1.7) which of them are no longer its own, then for each:

1. destroys the guest (``InstanceBuilder.destroy``);
2. removes the migration consumer's allocation in Placement (the agent's
   ``PendingUnclaims``: retried while Placement is away);
3. tells the conductor (``evacuations_cleaned``): the migration goes from
   ``done`` to ``completed``, an event on the instance's ``evacuate`` action.

A host holding guests is checked once per start (the agent's, or
``start_host``'s), on the agent's report thread, and until its check
succeeds it sends no heartbeat and no node report: it does not say it is
up while it may run an instance another host runs (the other hosts of a
hollow agent heartbeat meanwhile, never waiting for the question). A host
with no guest has nothing to destroy and is not asked about (its
migrations' allocations, if its disk was lost with them, are removed by
the cell conductor's periodic look, ``CellMoves.clean_returned_sources``).
A conductor that does not answer is asked again at the next report.
"""
from __future__ import annotations

import logging
import threading
from typing import Iterable, Sequence

from cellplane.context import new_context
from compute_agent.hosted_host import HostedHost
from conductor.cell.rpcapi import CellConductorAPI
from placement.client.pending_unclaims import PendingUnclaims

LOG = logging.getLogger(__name__)

# How long the start-time question may wait for the cell conductor: the
# heartbeat thread waits with it, and asks again next time.
ASK_TIMEOUT_SECONDS = 10.0


class EvacuatedGuests:
    """The hosts still to be checked for evacuated guests, and the check."""

    def __init__(self, *, conductor: CellConductorAPI, unclaims: PendingUnclaims,
                 timeout: float = ASK_TIMEOUT_SECONDS) -> None:
        self._conductor = conductor
        self._unclaims = unclaims
        self._timeout = timeout
        self._lock = threading.Lock()
        # One check at a time: the heartbeat and the report may both ask.
        self._settling = threading.Lock()
        self._unchecked: set[str] = set()

    def expect(self, hosts: Iterable[HostedHost]) -> None:
        """These hosts (re)start: those holding guests are checked before they report."""
        with self._lock:
            self._unchecked.update(h.name for h in hosts if h.driver.list_instances())

    def unchecked(self) -> set[str]:
        with self._lock:
            return set(self._unchecked)

    def settle(self, hosts: Sequence[HostedHost]) -> set[str]:
        """Check those of ``hosts`` not checked yet; the names still unchecked (they must not report)."""
        with self._settling:
            return self._settle(hosts)

    def _settle(self, hosts: Sequence[HostedHost]) -> set[str]:
        waiting = [h for h in hosts if h.name in self.unchecked()]
        if not waiting:
            return set()
        guests = {h.name: h.driver.list_instances() for h in waiting}
        guests = {name: uuids for name, uuids in guests.items() if uuids}
        if guests and self._conductor.can_clean_evacuations():
            try:
                answer = self._conductor.evacuated_guests(new_context(), guests,
                                                          timeout=self._timeout)
            except Exception as exc:  # noqa: BLE001 - the host waits, the agent goes on
                LOG.warning('Could not ask the cell conductor which guests of %s were '
                            'evacuated (%s: %s); those hosts send no heartbeat until it '
                            'answers', ', '.join(sorted(guests)), type(exc).__name__, exc)
                with self._lock:
                    self._unchecked -= {h.name for h in waiting} - set(guests)
                return set(guests)
            self._clean({h.name: h for h in waiting}, answer)
        with self._lock:
            self._unchecked -= {h.name for h in waiting}
        return set()

    def _clean(self, hosts: dict[str, HostedHost], answer: list[dict]) -> None:
        cleaned: dict[str, list[str]] = {}
        for item in answer:
            hosted = hosts.get(item.get('host'))
            if hosted is None:
                continue
            instance_uuid, migration_uuid = item['instance_uuid'], item['migration_uuid']
            if item.get('destroy'):
                hosted.builder.destroy(instance_uuid)
                LOG.warning('Instance %s destroyed on %s: it was evacuated while this host '
                            'was down (migration %s) and runs elsewhere now', instance_uuid,
                            hosted.name, migration_uuid)
            # Removed now, or kept and retried while Placement is away.
            self._unclaims.unclaim(migration_uuid)
            cleaned.setdefault(hosted.name, []).append(migration_uuid)
        for host, migration_uuids in cleaned.items():
            self._conductor.evacuations_cleaned(new_context(), host, migration_uuids)
