"""The decision-rate benchmark's declared workload: read from YAML, checked, nothing run.

Pure logic, no I/O beyond reading the text it is given, so that it is
tested cheaply (tests/unit/test_decision_workload.py). ``parse`` refuses a
workload that cannot run with one message naming the key
(``WorkloadError``), before any deployment is started: an unknown key, a
count below 1, a rack size that does not divide the cell, a group larger
than its level allows (hard anti-affinity at rack level puts at most
``max_per_domain`` members in a rack, so a group holds at most racks x that).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import yaml

GROUP_POLICIES = ('anti-affinity', 'affinity')
GROUP_LEVELS = ('host', 'rack')


class WorkloadError(ValueError):
    """The workload file cannot be run; ``str()`` names the key and why."""


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int

    @property
    def asks(self) -> dict[str, int]:
        """What one instance asks of a host, by Placement resource class."""
        return {'VCPU': self.vcpus, 'MEMORY_MB': self.memory_mb, 'DISK_GB': self.root_gb}


@dataclasses.dataclass(frozen=True)
class Group:
    policy: str
    level: str
    members: int
    max_per_domain: int = 1


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    decisions: int
    group: Group | None = None

    @property
    def groups(self) -> int:
        """How many server groups the scenario's decisions fill (0 without a group)."""
        if self.group is None:
            return 0
        return -(-self.decisions // self.group.members)


@dataclasses.dataclass(frozen=True)
class Workload:
    cells: int
    hosts_per_cell: int
    hosts_per_rack: int
    flavor: Flavor
    alternates: int
    clients: int
    scheduler_workers: tuple[int, ...]
    scenarios: tuple[Scenario, ...]

    @property
    def hosts(self) -> int:
        return self.cells * self.hosts_per_cell

    @property
    def racks_per_cell(self) -> int:
        return self.hosts_per_cell // self.hosts_per_rack

    def decisions_per_deployment(self) -> int:
        return sum(s.decisions for s in self.scenarios)


_TOP_KEYS = {'cells', 'hosts_per_cell', 'hosts_per_rack', 'flavor', 'alternates', 'clients',
             'scheduler_workers', 'scenarios'}


def _count(mapping: Mapping[str, Any], key: str, where: str, *, minimum: int = 1) -> int:
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise WorkloadError(f'{where}{key}: an integer of at least {minimum} is needed, '
                            f'not {value!r}')
    return value


def _unknown(mapping: Mapping[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(mapping) - known)
    if extra:
        raise WorkloadError(f'{where}{extra[0]}: unknown key (known: {", ".join(sorted(known))})')


def _group(raw: Any, where: str, *, racks: int, hosts: int) -> Group:
    if not isinstance(raw, Mapping):
        raise WorkloadError(f'{where}: a mapping is needed, not {raw!r}')
    _unknown(raw, {'policy', 'level', 'members', 'max_per_domain'}, f'{where}.')
    policy = raw.get('policy')
    if policy not in GROUP_POLICIES:
        raise WorkloadError(f'{where}.policy: one of {", ".join(GROUP_POLICIES)}, '
                            f'not {policy!r}')
    level = raw.get('level', 'host')
    if level not in GROUP_LEVELS:
        raise WorkloadError(f'{where}.level: one of {", ".join(GROUP_LEVELS)}, not {level!r}')
    members = _count(raw, 'members', f'{where}.')
    max_per_domain = _count({'max_per_domain': raw.get('max_per_domain', 1)},
                            'max_per_domain', f'{where}.')
    if policy == 'anti-affinity':
        domains = racks if level == 'rack' else hosts
        if members > domains * max_per_domain:
            raise WorkloadError(
                f'{where}.members: {members} members of a hard anti-affinity group at '
                f'{level} level need {members} places, but {domains} {level}s hold '
                f'{domains * max_per_domain} ({max_per_domain} each)')
    return Group(policy=policy, level=level, members=members, max_per_domain=max_per_domain)


def parse(text: str) -> Workload:
    """The workload declared in ``text`` (YAML); ``WorkloadError`` names what is wrong."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise WorkloadError(f'not YAML: {exc}') from None
    if not isinstance(raw, Mapping):
        raise WorkloadError('the workload must be a mapping of keys to values')
    _unknown(raw, _TOP_KEYS, '')
    cells = _count(raw, 'cells', '')
    hosts_per_cell = _count(raw, 'hosts_per_cell', '')
    hosts_per_rack = _count(raw, 'hosts_per_rack', '')
    if hosts_per_cell % hosts_per_rack:
        raise WorkloadError(f'hosts_per_rack: {hosts_per_rack} does not divide '
                            f'hosts_per_cell {hosts_per_cell} into whole racks')
    flavor_raw = raw.get('flavor')
    if not isinstance(flavor_raw, Mapping):
        raise WorkloadError(f'flavor: a mapping of name, vcpus, memory_mb, root_gb is '
                            f'needed, not {flavor_raw!r}')
    _unknown(flavor_raw, {'name', 'vcpus', 'memory_mb', 'root_gb'}, 'flavor.')
    if not isinstance(flavor_raw.get('name'), str) or not flavor_raw['name']:
        raise WorkloadError(f'flavor.name: a name is needed, not {flavor_raw.get("name")!r}')
    flavor = Flavor(name=flavor_raw['name'], vcpus=_count(flavor_raw, 'vcpus', 'flavor.'),
                    memory_mb=_count(flavor_raw, 'memory_mb', 'flavor.'),
                    root_gb=_count(flavor_raw, 'root_gb', 'flavor.'))
    workers = raw.get('scheduler_workers', [1])
    if not isinstance(workers, list) or not workers or any(
            isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in workers):
        raise WorkloadError(f'scheduler_workers: a list of integers of at least 1 is '
                            f'needed, not {workers!r}')
    scenarios_raw = raw.get('scenarios')
    if not isinstance(scenarios_raw, list) or not scenarios_raw:
        raise WorkloadError('scenarios: a list of at least one scenario is needed')
    racks = cells * (hosts_per_cell // hosts_per_rack)
    scenarios = []
    for index, item in enumerate(scenarios_raw):
        where = f'scenarios[{index}]'
        if not isinstance(item, Mapping):
            raise WorkloadError(f'{where}: a mapping is needed, not {item!r}')
        _unknown(item, {'name', 'decisions', 'group'}, f'{where}.')
        name = item.get('name')
        if not isinstance(name, str) or not name:
            raise WorkloadError(f'{where}.name: a name is needed, not {name!r}')
        group = (None if item.get('group') is None else
                 _group(item['group'], f'{where}.group', racks=racks, hosts=cells * hosts_per_cell))
        scenarios.append(Scenario(name=name, decisions=_count(item, 'decisions', f'{where}.'),
                                  group=group))
    names = [s.name for s in scenarios]
    if len(set(names)) != len(names):
        raise WorkloadError(f'scenarios: names must differ ({", ".join(names)})')
    return Workload(cells=cells, hosts_per_cell=hosts_per_cell, hosts_per_rack=hosts_per_rack,
                    flavor=flavor, alternates=_count(raw, 'alternates', '', minimum=0)
                    if 'alternates' in raw else 2,
                    clients=_count(raw, 'clients', '') if 'clients' in raw else 8,
                    scheduler_workers=tuple(workers), scenarios=tuple(scenarios))


def over_capacity(workload: Workload, per_host: int) -> str | None:
    """Why the workload's decisions cannot all fit one deployment's hosts, or None."""
    wanted = workload.decisions_per_deployment()
    holds = workload.hosts * per_host
    if wanted <= holds:
        return None
    return (f'the scenarios place {wanted} instances of {workload.flavor.name} on each '
            f'deployment, but {workload.cells} cells x {workload.hosts_per_cell} hosts hold '
            f'{holds} ({per_host} per host); use fewer decisions or more hosts')
