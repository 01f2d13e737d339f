"""What a batch of boots left behind, read back from the databases and Placement, with its invariants.

``read_outcome`` gathers, after the boots have settled: each instance's
status, cell, host and attempt history (from the API DB and each cell's
DB), and every allocation Placement holds (provider by provider). The
``BootOutcome`` it returns answers the demo's questions (placed per cell,
rescheduled, failed with reasons) and checks the boot flow's promises:

- allocations match instances: the consumers holding allocations are
  exactly the ACTIVE instances, each on its own host's provider, and the
  usage is the sum of their flavors;
- every failure has a reason: each ERROR instance has a fault, each failed
  build attempt a reason;
- a rescheduled instance that ended ACTIVE runs on a host other than the
  ones that failed it.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Any

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import flavors as api_flavors
from cellplane.objects.instance_actions import EVENT_BUILD, RESULT_FAILED
from cellplane_api import servers
from placement.client import PlacementClient


@dataclasses.dataclass(frozen=True)
class InstanceOutcome:
    uuid: str
    name: str | None
    status: str
    cell: str | None
    host: str | None
    flavor: dict[str, int]
    fault: str | None
    failed_builds: tuple[tuple[str, str | None], ...]    # (host, reason), oldest first


@dataclasses.dataclass
class BootOutcome:
    instances: list[InstanceOutcome]
    # consumer uuid -> provider name -> resource class -> amount
    allocations: dict[str, dict[str, dict[str, int]]]

    def by_status(self, status: str) -> list[InstanceOutcome]:
        return [i for i in self.instances if i.status == status]

    def rescheduled(self) -> list[InstanceOutcome]:
        return [i for i in self.instances if i.failed_builds]

    # -- the invariants ----------------------------------------------------------
    def allocation_problems(self) -> list[str]:
        """Why allocations and ACTIVE instances do not match; empty when they do."""
        problems = []
        active = {i.uuid: i for i in self.by_status(servers.ACTIVE)}
        for uuid in sorted(set(self.allocations) - set(active)):
            status = next((i.status for i in self.instances if i.uuid == uuid), 'unknown')
            problems.append(f'{uuid} ({status}) holds allocations on '
                            f'{", ".join(sorted(self.allocations[uuid]))}')
        for uuid, instance in active.items():
            held = self.allocations.get(uuid)
            if not held:
                problems.append(f'{uuid} is ACTIVE on {instance.host} without allocations')
            elif set(held) != {instance.host}:
                problems.append(f'{uuid} is ACTIVE on {instance.host} but its allocations '
                                f'are on {", ".join(sorted(held))}')
            elif held[instance.host] != {rc: n for rc, n in instance.flavor.items() if n}:
                problems.append(f'{uuid} holds {held[instance.host]} for flavor '
                                f'{instance.flavor}')
        return problems

    def reason_problems(self) -> list[str]:
        problems = [f'{i.uuid} is ERROR without a fault' for i in self.by_status(servers.ERROR)
                    if not (i.fault or '').strip()]
        problems += [f'{i.uuid}: the failed build on {host} has no reason'
                     for i in self.instances for host, reason in i.failed_builds
                     if not (reason or '').strip()]
        return problems

    def reschedule_problems(self) -> list[str]:
        return [f'{i.uuid} ended ACTIVE on {i.host}, a host that failed its build'
                for i in self.rescheduled()
                if i.status == servers.ACTIVE and i.host in {h for h, _ in i.failed_builds}]

    def problems(self) -> list[str]:
        return self.allocation_problems() + self.reason_problems() + self.reschedule_problems()

    # -- the summary -----------------------------------------------------------------
    def usage(self) -> dict[str, int]:
        total: collections.Counter = collections.Counter()
        for held in self.allocations.values():
            for resources in held.values():
                total.update(resources)
        return dict(sorted(total.items()))

    def expected_usage(self) -> dict[str, int]:
        total: collections.Counter = collections.Counter()
        for instance in self.by_status(servers.ACTIVE):
            total.update({rc: n for rc, n in instance.flavor.items() if n})
        return dict(sorted(total.items()))

    def summary(self) -> dict[str, Any]:
        """The demo's summary as plain JSON data."""
        active = self.by_status(servers.ACTIVE)
        errors = self.by_status(servers.ERROR)
        rescheduled = self.rescheduled()
        per_cell = collections.Counter(i.cell for i in active)
        per_host = collections.Counter(i.host for i in active)
        build_failures = collections.Counter(
            reason or '(no reason)' for i in self.instances for _, reason in i.failed_builds)
        failing_hosts = collections.Counter(
            host for i in self.instances for host, _ in i.failed_builds)
        error_reasons = collections.Counter(_first_line(i.fault) for i in errors)
        allocation_problems = self.allocation_problems()
        return {
            'instances': len(self.instances),
            'active': len(active),
            'error': len(errors),
            'building': len(self.instances) - len(active) - len(errors),
            'placed_per_cell': dict(sorted(per_cell.items())),
            'active_per_host': dict(sorted(per_host.items())),
            'rescheduled': {
                'instances': len(rescheduled),
                'ended_active': sum(1 for i in rescheduled if i.status == servers.ACTIVE),
                'ended_error': sum(1 for i in rescheduled if i.status == servers.ERROR),
                'failed_builds_by_host': dict(sorted(failing_hosts.items())),
                'failed_builds_by_reason': dict(build_failures.most_common()),
            },
            'failed': {
                'by_reason': dict(error_reasons.most_common()),
                'instances': [{'uuid': i.uuid, 'name': i.name, 'cell': i.cell,
                               'fault': i.fault} for i in errors],
            },
            'placement': {
                'consumers_with_allocations': len(self.allocations),
                'active_instances': len(active),
                'usage': self.usage(),
                'sum_of_active_flavors': self.expected_usage(),
                'allocations_match_instances': not allocation_problems
                and self.usage() == self.expected_usage(),
                'problems': allocation_problems,
            },
            'every_failure_has_a_reason': not self.reason_problems(),
            'rescheduled_away_from_failing_hosts': not self.reschedule_problems(),
        }


def _first_line(text: str | None) -> str:
    return (text or '').strip().splitlines()[0] if (text or '').strip() else '(no fault)'


def placement_allocations(placement: PlacementClient) -> dict[str, dict[str, dict[str, int]]]:
    """Consumer -> provider name -> resources, for every provider Placement knows."""
    names = {p.uuid: p.name for p in placement.list_providers()}
    return {consumer: {names.get(rp, rp): resources for rp, resources in held.items()}
            for consumer, held in placement.allocations_by_consumer().items()}


def read_outcome(api_engine: Engine, cells: CellDatabases, placement: PlacementClient,
                 uuids: list[str] | None = None) -> BootOutcome:
    """The instances (all, or ``uuids``) with their histories, and Placement's allocations.

    Each instance's ``flavor`` is its flavor's Placement resources, read as
    the scheduler reads them (``{"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}``).
    """
    resources = flavor_resources(api_engine)
    found = servers.list_servers(api_engine, cells, uuids, with_events=True)
    instances = [InstanceOutcome(
        uuid=s.uuid, name=s.name, status=s.status, cell=s.cell, host=s.host,
        flavor=dict(resources.get(s.flavor, {})), fault=s.fault,
        failed_builds=tuple((e.host, e.reason) for e in s.events
                            if e.event == EVENT_BUILD and e.result == RESULT_FAILED))
        for s in found]
    return BootOutcome(instances=instances, allocations=placement_allocations(placement))


def flavor_resources(api_engine: Engine) -> dict[str, dict[str, int]]:
    """Flavor name -> the Placement resources one instance of it takes."""
    return {f.name: servers.flavor_payload(f).placement_resources()
            for f in api_flavors.list_all(api_engine)}
