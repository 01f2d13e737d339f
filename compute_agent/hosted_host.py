"""One host served by a compute agent: its driver, builder and reporter, and whether it runs.

A compute agent serves one host (the usual case) or many (a hollow agent,
``[compute] hosted_hosts``: fake hosts standing in for real ones at scale).
Each host keeps its own identity: its RPC server name, its resource
provider, its compute node and service rows, its failed-build count. A
host can be stopped and started alone while its agent runs (fault tests
kill one host this way): a stopped host sends no heartbeat and no report,
and the messages that reach it wait, in the agent's memory, until it starts
again (as they would wait in a stopped daemon's queue; if the agent process
dies meanwhile, they are lost with it).

The hosts of a hollow agent (N > 1) carry the trait ``HOLLOW_HOST_TRAIT``
on their resource providers: Placement shows which hosts are fake, and an
agent whose N was lowered removes only providers that carry it (never a real
host that happens to be named ``<host>-<i>``).

``hosted_host_names`` fixes the names: one hosted host is named ``[DEFAULT]
host``, as always; N > 1 are ``<host>-1`` ... ``<host>-N`` (not zero-padded,
so that raising N never renames a host).
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Callable

from compute_agent.builder import InstanceBuilder
from compute_agent.resource_reporter import ResourceReporter
from compute_agent.virt.driver import VirtDriver

LOG = logging.getLogger(__name__)

HOLLOW_HOST_TRAIT = 'CUSTOM_HOLLOW_HOST'


def hosted_host_names(host: str, count: int) -> list[str]:
    """The names of the ``count`` hosts an agent named ``host`` serves."""
    if count < 1:
        raise ValueError(f'an agent serves at least one host, not {count}')
    if count == 1:
        return [host]
    return [f'{host}-{i}' for i in range(1, count + 1)]


def removed_host_index(agent_host: str, name: str) -> int | None:
    """``i`` if ``name`` is ``<agent_host>-<i>`` (a host such an agent may have served)."""
    prefix = f'{agent_host}-'
    if not name.startswith(prefix):
        return None
    suffix = name[len(prefix):]
    if not suffix.isdigit() or suffix.startswith('0'):
        return None
    return int(suffix)


@dataclasses.dataclass
class HostedHost:
    """A host of an agent: what builds there, what reports it, and its run state."""

    name: str
    driver: VirtDriver
    builder: InstanceBuilder
    reporter: ResourceReporter
    running: bool = True
    _held: list[Callable[[], None]] = dataclasses.field(default_factory=list)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    @property
    def node_uuid(self) -> str:
        return self.reporter.node_uuid

    def run_or_hold(self, work: Callable[[], None]) -> bool:
        """Run ``work`` now if the host runs; else keep it for ``start``. True if run."""
        with self._lock:
            if not self.running:
                self._held.append(work)
                return False
        work()
        return True

    def stop(self) -> None:
        with self._lock:
            self.running = False
        LOG.warning('Hosted host %s stopped: no heartbeat, no report; its messages '
                    'wait until it starts', self.name)

    def start(self) -> list[Callable[[], None]]:
        """Mark the host running; the work held while it was stopped, oldest first."""
        with self._lock:
            self.running = True
            held, self._held = self._held, []
        LOG.info('Hosted host %s started; %d held message(s) to handle', self.name,
                 len(held))
        return held

    @property
    def held_count(self) -> int:
        with self._lock:
            return len(self._held)
