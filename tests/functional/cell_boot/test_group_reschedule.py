"""A reschedule keeps a server group's hard policy, knowing only the request and Placement.

The cell conductor reads no API database: the request spec names the
group's policy, level, members and the domains they held; where the other
members are now, and which aggregates (racks, rows) each provider is in,
it asks Placement. An alternate that would break the policy is skipped and
the reason recorded in the instance's history.
"""
from __future__ import annotations

import dataclasses
import uuid as uuidlib

from cellplane.context import RequestContext
from cellplane.objects import build_plans, instances
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import InstanceGroup, RequestSpec
from tests.functional.cell_boot.harness import CELL_UUID

FLAVOR = Flavor(name='small', vcpus=1, memory_mb=256, root_gb=1)
MEMBER = '00000000-0000-4000-8000-00000000beef'
RACK_A, RACK_B = str(uuidlib.uuid4()), str(uuidlib.uuid4())


def _boot(cell, hosts: list[str], group: InstanceGroup) -> Instance:
    """What the super conductor does, with a spec naming the group and its members."""
    instance = Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='user',
                        flavor=FLAVOR, display_name='vm', cell_uuid=CELL_UUID)
    spec = RequestSpec(flavor=FLAVOR, project_id='proj', user_id='user',
                       instance_group=dataclasses.replace(
                           group, members=[MEMBER, instance.uuid]))
    host_list = [cell.selection(h, FLAVOR) for h in hosts]
    with cell.engine.begin() as conn:
        instances.create_instance(conn, instance)
        build_plans.record(conn, instance, spec, host_list)
    cell.placement.claim(instance.uuid, host_list[0].allocation_request['allocations'],
                         project_id='proj', user_id='user')
    cell.compute.build_and_run_instance(RequestContext(), hosts[0], instance, spec, host_list)
    return instance


def _racks(cell, racks: dict[str, str]) -> None:
    for host, rack in racks.items():
        cell.placement.set_aggregates(cell.agents[host].node_uuid, [rack])


def _member_on(cell, host: str) -> None:
    cell.placement.claim(MEMBER, {cell.agents[host].node_uuid: {'VCPU': 1}},
                         project_id='proj', user_id='user')


def test_anti_affinity_skips_an_alternate_in_a_members_rack(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    cell.add_agent('cmp2')
    cell.add_agent('cmp3')
    _racks(cell, {'cmp1': RACK_A, 'cmp2': RACK_B, 'cmp3': RACK_A})
    _member_on(cell, 'cmp2')
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), name='web', policy='anti-affinity',
                          level='rack', domains=[RACK_A, RACK_B])
    instance = _boot(cell, ['cmp1', 'cmp2', 'cmp3'], group)

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'cmp3'
    failed, skipped, built = cell.history(instance.uuid)
    assert (failed.host, failed.result) == ('cmp1', 'failed')
    assert (skipped.host, skipped.result) == ('cmp2', 'failed')
    assert skipped.reason == (f'anti-affinity at rack: cmp2 is in the rack of member(s) '
                              f'{MEMBER} of group web')
    assert (built.host, built.result) == ('cmp3', 'ok')


def test_affinity_skips_an_alternate_outside_the_members_row(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    cell.add_agent('cmp2')
    cell.add_agent('cmp3')
    _racks(cell, {'cmp1': RACK_A, 'cmp2': RACK_A, 'cmp3': RACK_B})
    _member_on(cell, 'cmp2')
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), name='db', policy='affinity',
                          level='row', domains=[RACK_A, RACK_A])
    instance = _boot(cell, ['cmp1', 'cmp3', 'cmp2'], group)

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'cmp2'
    skipped = cell.history(instance.uuid)[1]
    assert (skipped.host, skipped.reason) == (
        'cmp3', 'affinity at row: cmp3 is outside the row of the members of group db')


def test_a_soft_policy_is_not_checked(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    cell.add_agent('cmp2')
    _racks(cell, {'cmp1': RACK_A, 'cmp2': RACK_B})
    _member_on(cell, 'cmp2')
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), name='web', policy='anti-affinity',
                          soft=True, level='rack', domains=[RACK_B])
    instance = _boot(cell, ['cmp1', 'cmp2'], group)
    assert cell.wait_for_state(instance.uuid, 'active')['host'] == 'cmp2'
