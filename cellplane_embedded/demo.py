"""The demo scenario: boot a few hundred instances on the embedded control plane, with failures.

``cells`` cells (2 by default) of ``hosts_per_cell`` fake hosts, served in
each cell by one hollow compute agent. ``failing_hosts`` hosts (1 by
default: cell1-host1; then the first host of cell2, and so on round the
cells) fail every build with "No more IP addresses"; every other host fails
a seeded fraction of its builds with "Timed out waiting for the hypervisor"
(``fail_fraction``; 0 with ``failing_hosts = 0`` compares sizes like with
like).
Instances are asked for through the API role (``cellplane_api.servers``) in
requests of 1 to 5 (multi-create), with flavors of three sizes, plus one
request for a flavor no host can hold (it fails with NoValidHost, and says
why). The run waits until every instance is ACTIVE or ERROR, then
drains one host (``drain``: by default the last host of the last cell;
``cellplane_api.host_drain``, what ``cellplane-manage host drain`` runs:
its service disabled, its instances live-migrated ``drain_parallel`` at a
time). The outcome is read back (``outcome.read_outcome``) before the
drain for the boots' promises, and Placement again after it, so that the
Placement check also covers the moves (nothing left on a migration's
consumer).

Everything is seeded: the same ``seed`` asks for the same requests and the
same failure draws. Which instance meets which draw depends on timing, but
a random failure is transient (an instance fails at random at most once:
``compute_agent/virt/fake.py``), so with one failing host no instance runs
out of attempts at random, and a seeded run ends with the same ACTIVE and
ERROR counts every time.
"""
from __future__ import annotations

import collections
import dataclasses
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from cellplane.context import new_context
from cellplane.objects import flavors as api_flavors
from cellplane_api import compute_services, host_drain, servers
from cellplane_embedded.outcome import read_outcome
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from compute_agent.virt.fake import FakeSettings

NO_IP_REASON = 'No more IP addresses'
TIMEOUT_REASON = 'Timed out waiting for the hypervisor'
PROJECT_ID = 'demo-project'
USER_ID = 'demo-user'
# (name, vcpus, memory_mb, root_gb): small enough that 300 fit on 9 hosts.
FLAVORS = (('m1.tiny', 1, 512, 1), ('m1.small', 1, 1024, 10), ('m1.medium', 2, 2048, 20))
# More vCPUs than any fake host has (16 at ratio 4.0 = 64): never placeable.
OVERSIZED_FLAVOR = ('x1.huge', 96, 2048, 20)
POLL_SECONDS = 0.1
AUTO_DRAIN = 'auto'
# Moves shown one by one in the summary; the others are counted.
MOVES_SHOWN = 5


class DemoOptionsError(Exception):
    """The demo was asked for something it cannot run (too few hosts...): a usage error."""

    exit_code = 2


class DemoTimedOut(Exception):
    """Some instances were still building when the demo's deadline passed."""


@dataclasses.dataclass(frozen=True)
class DemoOptions:
    instances: int = 300
    cells: int = 2
    hosts_per_cell: int = 5
    failing_hosts: int = 1
    seed: int = 42
    fail_fraction: float = 0.05
    oversized: int = 2
    max_attempts: int = 3
    state_dir: str | None = None
    timeout: float = 300.0
    # The host drained at the end: AUTO_DRAIN (the last host of the last cell), a name, or None.
    drain: str | None = 'auto'
    drain_parallel: int = 5

    def failing_host_names(self) -> list[str]:
        """cell1-host1, cell2-host1, ..., cell1-host2, ...: round the cells."""
        return [f'cell{i % self.cells + 1}-host{i // self.cells + 1}'
                for i in range(self.failing_hosts)]

    def driver_for(self, cell: str, host: str) -> FakeSettings:
        if host in self._failing:
            return FakeSettings(fail_all=True, failure_reason=NO_IP_REASON)
        # A seed per host, derived from the run's: repeatable, not identical.
        return FakeSettings(fail_fraction=self.fail_fraction,
                            fail_seed=random.Random(f'{self.seed}-{host}').randrange(2**31),
                            failure_reason=TIMEOUT_REASON)


    def drained_host(self) -> str | None:
        if self.drain == AUTO_DRAIN:
            return f'cell{self.cells}-host{self.hosts_per_cell}'
        return self.drain

    @property
    def _failing(self) -> frozenset[str]:
        return frozenset(self.failing_host_names())

    def check(self) -> None:
        """Refuse options the scenario cannot run, saying which and why."""
        if self.instances < 1:
            raise DemoOptionsError(f'--instances must be at least 1, not {self.instances}')
        if self.cells < 1:
            raise DemoOptionsError(f'--cells must be at least 1, not {self.cells}')
        if self.hosts_per_cell < 1:
            raise DemoOptionsError(
                f'--hosts-per-cell must be at least 1, not {self.hosts_per_cell}')
        if not 0 <= self.failing_hosts < self.cells * self.hosts_per_cell:
            raise DemoOptionsError(
                f'--failing-hosts must be between 0 and {self.cells * self.hosts_per_cell - 1} '
                f'(some host must build), not {self.failing_hosts}')
        if not 0.0 <= self.fail_fraction <= 1.0:
            raise DemoOptionsError(
                f'--fail-fraction must be between 0 and 1, not {self.fail_fraction}')
        hosts = {f'cell{c}-host{h}' for c in range(1, self.cells + 1)
                 for h in range(1, self.hosts_per_cell + 1)}
        if self.drained_host() is not None and self.drained_host() not in hosts:
            raise DemoOptionsError(
                f'--drain must name a host of the demo (cell1-host1 to cell{self.cells}-host'
                f'{self.hosts_per_cell}), {AUTO_DRAIN} or none, not {self.drain}')


def request_sizes(total: int, rng: random.Random) -> list[int]:
    """Split ``total`` instances into requests of 1 to 5 (about half single boots)."""
    sizes = []
    while total > 0:
        size = 1 if rng.random() < 0.5 else rng.randint(2, 5)
        size = min(size, total)
        sizes.append(size)
        total -= size
    return sizes


def run_demo(options: DemoOptions,
             progress: Callable[[int, int], None] | None = None,
             drain_progress: Callable[[int, int], None] | None = None,
             start_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run the scenario; the summary (``BootOutcome.summary``, the drain's) plus the run's facts.

    ``start_progress(registered, hosts)`` is told how many hosts have
    registered while the embedded cloud starts (every 50 ms);
    ``progress`` the boots settled, ``drain_progress`` the moves ended.
    """
    with tempfile.TemporaryDirectory(prefix='cellplane-demo-') as scratch:
        state_dir = Path(options.state_dir) if options.state_dir else Path(scratch)
        plan = CloudPlan.uniform(cells=options.cells, hosts_per_cell=options.hosts_per_cell,
                                 driver_for=options.driver_for,
                                 max_attempts=options.max_attempts)
        started = time.monotonic()
        with EmbeddedCloud(state_dir, plan, start_progress=start_progress) as cloud:
            ready = time.monotonic()
            _create_flavors(cloud, options)
            uuids = _boot(cloud, options)
            _wait(cloud, uuids, options.timeout, progress)
            settled = time.monotonic()
            outcome = read_outcome(cloud.api_engine, cloud.cells, cloud.placement, uuids)
            summary = outcome.summary()
            summary['drain'] = None
            if options.drained_host() is not None:
                summary['drain'] = _drain(cloud, options.drained_host(),
                                          options.drain_parallel, drain_progress)
                # The boots' promises are the boots' (a drain may move an instance to a
                # host that once failed its build); Placement and the hosts are read again.
                after = read_outcome(cloud.api_engine, cloud.cells, cloud.placement,
                                     uuids).summary()
                summary['placement'] = after['placement']
                summary['active_per_host'] = after['active_per_host']
    summary['run'] = {
        'cells': options.cells, 'hosts_per_cell': options.hosts_per_cell,
        'seed': options.seed,
        'failing_hosts': options.failing_host_names(), 'failing_host_reason': NO_IP_REASON,
        'fail_fraction_elsewhere': options.fail_fraction,
        'max_attempts': options.max_attempts,
        'startup_seconds': round(ready - started, 2),
        'boot_seconds': round(settled - ready, 2),
        'instances_per_second': round(len(uuids) / max(settled - ready, 1e-9), 1),
        'state_dir': str(options.state_dir) if options.state_dir else None,
    }
    return summary


def _create_flavors(cloud: EmbeddedCloud, options: DemoOptions) -> None:
    for name, vcpus, memory_mb, root_gb in (*FLAVORS, OVERSIZED_FLAVOR):
        api_flavors.create(cloud.api_engine, name=name, vcpus=vcpus, memory_mb=memory_mb,
                           root_gb=root_gb)


def _boot(cloud: EmbeddedCloud, options: DemoOptions) -> list[str]:
    rng = random.Random(options.seed)
    requests = [(f'vm{i}', rng.choice(FLAVORS)[0], size)
                for i, size in enumerate(request_sizes(options.instances, rng))]
    if options.oversized:
        requests.append(('too-big', OVERSIZED_FLAVOR[0], options.oversized))
    uuids: list[str] = []
    for name, flavor, count in requests:
        uuids += servers.create(
            cloud.api_engine, cloud.conductor_api, new_context(
                user_id=USER_ID, project_id=PROJECT_ID),
            name=name, flavor=flavor, count=count, project_id=PROJECT_ID, user_id=USER_ID)
    return uuids


def _wait(cloud: EmbeddedCloud, uuids: list[str], timeout: float,
          progress: Callable[[int, int], None] | None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        found = servers.list_servers(cloud.api_engine, cloud.cells, uuids)
        done = sum(1 for s in found if s.status in servers.FINAL_STATUSES)
        if progress is not None:
            progress(done, len(uuids))
        if done == len(uuids):
            return
        if time.monotonic() > deadline:
            raise DemoTimedOut(f'{len(uuids) - done} of {len(uuids)} instances were still '
                               f'building after {timeout:.0f} s')
        time.sleep(POLL_SECONDS)


def _drain(cloud: EmbeddedCloud, host: str, parallel: int,
           progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """Drain ``host`` live, ``parallel`` at a time; what moved where, and what could not."""
    found = compute_services.locate(cloud.api_engine, cloud.cells, 10, top_level=False)
    [one] = [s for s in found.services if s.row['host'] == host
             and s.row['binary'] == compute_services.COMPUTE_BINARY]
    report = host_drain.HostDrain(
        cloud.api_engine, cloud.cells, cloud.conductor_api,
        new_context(user_id=USER_ID, project_id=PROJECT_ID), one,
        placement=cloud.placement, mode=host_drain.LIVE, parallel=parallel).run(progress)
    moved = [o for o in report.outcomes if o.result == host_drain.MOVED]
    stayed = [o for o in report.outcomes if o.result != host_drain.MOVED]
    return {
        'host': report.host, 'cell': report.cell, 'mode': report.mode,
        'parallel': parallel, 'seconds': report.seconds,
        'instances': len(report.outcomes), 'moved': len(moved), 'not_moved': len(stayed),
        'moved_to': dict(sorted(collections.Counter(o.dest_host for o in moved).items())),
        'moves': [{'server': o.name, 'uuid': o.instance_uuid, 'to': o.dest_host,
                   'seconds': o.seconds} for o in moved],
        'not_moved_instances': [{'server': o.name, 'uuid': o.instance_uuid,
                                 'result': o.result, 'reason': o.reason} for o in stayed],
        'left_on_host': len(report.left), 'host_empty': report.empty,
    }
