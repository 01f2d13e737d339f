"""benchmarks/decision_workload.py: the decision benchmark's workload is read, or refused naming the key."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'benchmarks'))

import decision_workload  # benchmarks/ is not a package: found through sys.path

BENCHMARKS = Path(__file__).resolve().parents[2] / 'benchmarks'

SMALL = """
cells: 2
hosts_per_cell: 20
hosts_per_rack: 5
flavor: {name: s, vcpus: 1, memory_mb: 256, root_gb: 1}
scenarios:
  - name: plain
    decisions: 60
  - name: spread
    decisions: 20
    group: {policy: anti-affinity, level: rack, members: 8}
"""


def test_the_shipped_workload_parses_into_what_it_declares():
    workload = decision_workload.parse((BENCHMARKS / 'workloads' / 'decisions.yaml').read_text())
    assert workload.hosts == 5000
    assert workload.cells * workload.racks_per_cell == 100
    assert workload.scheduler_workers == (1, 2, 4)
    assert [s.name for s in workload.scenarios] == ['plain', 'anti-affinity-rack']
    spread = workload.scenarios[1]
    assert (spread.group.policy, spread.group.level, spread.group.members) == \
        ('anti-affinity', 'rack', 20)
    assert spread.groups == 15


def test_defaults_and_group_count_round_up():
    workload = decision_workload.parse(SMALL)
    assert (workload.alternates, workload.clients, workload.scheduler_workers) == (2, 8, (1,))
    assert workload.scenarios[0].group is None and workload.scenarios[0].groups == 0
    assert workload.scenarios[1].groups == 3                 # 20 decisions, 8 per group
    assert workload.flavor.asks == {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}
    assert workload.decisions_per_deployment() == 80


@pytest.mark.parametrize('change, named', [
    (('cells: 2', 'cells: 0'), 'cells: an integer of at least 1'),
    (('hosts_per_rack: 5', 'hosts_per_rack: 3'), 'hosts_per_rack: 3 does not divide'),
    (('cells: 2', 'cells: 2\nracks: 4'), 'racks: unknown key'),
    (('members: 8', 'members: 9'), 'scenarios[1].group.members: 9 members'),
    (('policy: anti-affinity', 'policy: spread'), 'scenarios[1].group.policy: one of'),
    (('level: rack', 'level: row'), 'scenarios[1].group.level: one of'),
    (('name: spread', 'name: plain'), 'scenarios: names must differ'),
    (('decisions: 60', 'decisions: many'), 'scenarios[0].decisions: an integer'),
    (('vcpus: 1', 'vcpus: true'), 'flavor.vcpus: an integer'),
], ids=lambda value: value if isinstance(value, str) else None)
def test_a_bad_workload_is_refused_naming_the_key(change, named):
    with pytest.raises(decision_workload.WorkloadError) as raised:
        decision_workload.parse(SMALL.replace(*change, 1))
    assert named in str(raised.value)


def test_a_group_at_host_level_may_have_as_many_members_as_hosts():
    text = SMALL.replace('level: rack, members: 8', 'level: host, members: 40')
    assert decision_workload.parse(text).scenarios[1].group.members == 40
    with pytest.raises(decision_workload.WorkloadError, match='40 hosts hold 40'):
        decision_workload.parse(text.replace('members: 40', 'members: 41'))


def test_not_yaml_or_not_a_mapping_is_refused():
    with pytest.raises(decision_workload.WorkloadError, match='not YAML'):
        decision_workload.parse('cells: [1,')
    with pytest.raises(decision_workload.WorkloadError, match='a mapping'):
        decision_workload.parse('- 1\n- 2\n')


def test_more_decisions_than_the_hosts_hold_is_refused_with_the_capacity():
    workload = decision_workload.parse(SMALL)
    assert decision_workload.over_capacity(workload, per_host=2) is None        # 80 <= 80
    refused = decision_workload.over_capacity(workload, per_host=1)
    assert 'place 80 instances' in refused and 'hold 40 (1 per host)' in refused
