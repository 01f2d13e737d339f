"""The cell side of the boot flow in one process: agents, cell conductor, real Placement, kombu bus.

Each test plays the super conductor's part (instance created in the cell DB,
first host claimed, build cast) and checks what the cell did with it: the
instance state, the attempt history in the cell DB, Placement's allocations.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib

from cellplane.context import RequestContext
from cellplane.objects import compute_nodes, instance_actions, instances
from placement.client import Inventory
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.request_spec import RequestSpec
from tests.support.polling import eventually


def test_agent_reports_provider_inventory_traits_and_its_compute_node(cell):
    agent = cell.add_agent('cmp1', vcpus=8, cpu_allocation_ratio=2.0, memory_mb=4096,
                           reserved_memory_mb=256, disk_gb=100,
                           traits=['HW_CPU_X86_AVX2', 'CUSTOM_SSD'])
    agent.reporter.report()

    provider = cell.placement.get_provider(agent.node_uuid)
    assert provider.name == 'cmp1'
    inventory = cell.placement.get_inventory(agent.node_uuid)
    assert inventory['VCPU'] == Inventory(total=8, max_unit=8, allocation_ratio=2.0)
    assert inventory['MEMORY_MB'] == Inventory(total=4096, reserved=256, max_unit=4096)
    assert inventory['DISK_GB'] == Inventory(total=100, max_unit=100)
    assert cell.placement.get_traits(agent.node_uuid) == {'HW_CPU_X86_AVX2', 'CUSTOM_SSD'}

    node = eventually(lambda: compute_nodes.get_node(cell.engine, agent.node_uuid),
                      'the compute node row reaches the cell DB')
    assert (node['host'], node['nodename'], node['vcpus'], node['memory_mb'],
            node['local_gb']) == ('cmp1', 'cmp1', 8, 4096, 100)
    assert node['cpu_allocation_ratio'] == 2.0
    assert node['availability_zone'] == 'az1'
    assert node['stats'] == {'failed_builds': 0}


def test_reports_write_placement_only_when_the_driver_changed(cell):
    agent = cell.add_agent('cmp1')
    generation = cell.placement.get_provider(agent.node_uuid).generation
    assert agent.reporter.sync_placement() == []
    assert cell.placement.get_provider(agent.node_uuid).generation == generation

    agent.driver.settings.vcpus = 32
    agent.driver.settings.traits = ['CUSTOM_GPU']
    assert agent.reporter.sync_placement() == ['inventory', 'traits']
    assert cell.placement.get_inventory(agent.node_uuid)['VCPU'].total == 32
    assert cell.placement.get_traits(agent.node_uuid) == {'CUSTOM_GPU'}


def test_node_uuid_is_the_same_for_the_same_host_across_restarts(cell):
    first = cell.add_agent('cmp1')
    from compute_agent.resource_reporter import compute_node_uuid
    assert compute_node_uuid('cmp1', 'cmp1') == first.node_uuid
    assert compute_node_uuid('cmp2', 'cmp2') != first.node_uuid


def test_successful_build_goes_active_with_an_ok_attempt_event(cell):
    cell.add_agent('cmp1')
    cell.add_agent('cmp2')
    instance, _ = cell.boot(['cmp1', 'cmp2'])

    row = cell.wait_for_state(instance.uuid, 'active')
    assert (row['host'], row['node'], row['task_state']) == ('cmp1', 'cmp1', None)
    assert row['launched_at'] is not None
    (event,) = cell.history(instance.uuid)
    assert (event.event, event.host, event.node, event.result) == (
        instance_actions.EVENT_BUILD, 'cmp1', 'cmp1', 'ok')
    assert event.start <= event.finish
    assert cell.agents['cmp1'].driver.list_instances() == [instance.uuid]
    assert list(cell.allocations(instance.uuid)) == [cell.agents['cmp1'].node_uuid]


def test_failing_host_reschedules_to_the_alternate_and_frees_its_allocation(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    cell.add_agent('cmp2')
    instance, _ = cell.boot(['cmp1', 'cmp2'])

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'cmp2'
    assert list(cell.allocations(instance.uuid)) == [cell.agents['cmp2'].node_uuid]
    assert cell.provider_usages('cmp1') == {}
    assert cell.provider_usages('cmp2') == {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}
    failed, ok = cell.history(instance.uuid)
    assert (failed.host, failed.result, failed.reason) == (
        'cmp1', 'failed', 'No more IP addresses')
    assert (ok.host, ok.result) == ('cmp2', 'ok')
    assert cell.faults(instance.uuid) == []
    assert cell.agents['cmp1'].driver.list_instances() == []
    assert cell.agents['cmp1'].builder.failed_builds == 1


def test_every_alternate_failing_ends_in_error_with_a_fault_naming_each_host(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    cell.add_agent('cmp2', fail_all=True, failure_reason='Disk image corrupt')
    cell.add_agent('cmp3', fail_all=True, failure_reason='Hypervisor unreachable')
    instance, _ = cell.boot(['cmp1', 'cmp2', 'cmp3'])

    cell.wait_for_state(instance.uuid, 'error')
    (fault,) = cell.faults(instance.uuid)
    for host, reason in (('cmp1', 'No more IP addresses'), ('cmp2', 'Disk image corrupt'),
                         ('cmp3', 'Hypervisor unreachable')):
        assert f'{host}: build failed: {reason}' in fault['details']
        assert host in fault['message']
    assert 'no valid host' not in fault['message'].lower()
    assert cell.allocations(instance.uuid) == {}
    assert [(e.host, e.result) for e in cell.history(instance.uuid)] == [
        ('cmp1', 'failed'), ('cmp2', 'failed'), ('cmp3', 'failed')]


def test_a_refused_claim_on_an_alternate_moves_to_the_next_one(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    full = cell.add_agent('cmp2')
    cell.add_agent('cmp3')
    # Someone else takes all of cmp2's memory after the scheduler chose it.
    cell.placement.claim('00000000-0000-0000-0000-0000000000ff',
                         {full.node_uuid: {'MEMORY_MB': 4096}},
                         project_id='other', user_id='other')
    instance, _ = cell.boot(['cmp1', 'cmp2', 'cmp3'])

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'cmp3'
    assert list(cell.allocations(instance.uuid)) == [cell.agents['cmp3'].node_uuid]
    build_failed, claim_refused, built = cell.history(instance.uuid)
    assert (build_failed.host, build_failed.event) == ('cmp1', instance_actions.EVENT_BUILD)
    assert (claim_refused.host, claim_refused.event, claim_refused.result) == (
        'cmp2', instance_actions.EVENT_CLAIM, 'failed')
    assert 'Placement refused the claim' in claim_refused.reason
    assert (built.host, built.result) == ('cmp3', 'ok')


def test_refused_claims_are_named_in_the_fault_when_nothing_is_left(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    full = cell.add_agent('cmp2')
    cell.placement.claim('00000000-0000-0000-0000-0000000000ff',
                         {full.node_uuid: {'MEMORY_MB': 4096}},
                         project_id='other', user_id='other')
    instance, _ = cell.boot(['cmp1', 'cmp2'])

    cell.wait_for_state(instance.uuid, 'error')
    (fault,) = cell.faults(instance.uuid)
    assert 'cmp1: build failed: No more IP addresses' in fault['details']
    assert 'cmp2: claim refused by Placement: Placement refused the claim' in fault['details']
    assert cell.allocations(instance.uuid) == {}


def test_max_attempts_stops_the_walk_and_names_the_untried_alternates(cell_factory):
    cell = cell_factory(max_attempts=2)
    for host in ('cmp1', 'cmp2', 'cmp3'):
        cell.add_agent(host, fail_all=True, failure_reason=f'{host} broken')
    instance, _ = cell.boot(['cmp1', 'cmp2', 'cmp3'])

    cell.wait_for_state(instance.uuid, 'error')
    (fault,) = cell.faults(instance.uuid)
    assert 'max_attempts = 2' in fault['details']
    assert 'alternates not tried: cmp3' in fault['details']
    assert [e.host for e in cell.history(instance.uuid)] == ['cmp1', 'cmp2']
    assert cell.agents['cmp3'].builder.failed_builds == 0
    assert cell.allocations(instance.uuid) == {}


def test_local_resource_check_fails_a_build_placement_allowed_and_it_reschedules(cell):
    # cmp1 reports a small host to the local check (limits), Placement had room.
    cell.add_agent('cmp1', memory_mb=512)
    cell.placement.set_inventory(cell.agents['cmp1'].node_uuid,
                                 {'VCPU': Inventory(8), 'MEMORY_MB': Inventory(4096),
                                  'DISK_GB': Inventory(100)})
    cell.add_agent('cmp2')
    instance, _ = cell.boot(['cmp1', 'cmp2'])

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'cmp2'
    failed = cell.history(instance.uuid)[0]
    assert failed.host == 'cmp1'
    assert 'local resource check failed (MEMORY_MB: 1024 wanted, 512 free' in failed.reason


def test_terminate_destroys_frees_allocations_and_marks_deleted(cell):
    agent = cell.add_agent('cmp1')
    instance, _ = cell.boot(['cmp1'])
    cell.wait_for_state(instance.uuid, 'active')

    cell.compute.terminate_instance(RequestContext(), 'cmp1', instance.uuid)
    row = cell.wait_for_state(instance.uuid, 'deleted')
    assert row['deleted_at'] is not None
    assert cell.allocations(instance.uuid) == {}
    assert agent.driver.list_instances() == []
    assert agent.builder.local_claims.usage() == {}


def test_a_single_host_without_alternates_fails_to_error_and_unclaims(cell):
    cell.add_agent('cmp1', fail_all=True, failure_reason='No more IP addresses')
    instance, _ = cell.boot(['cmp1'])

    cell.wait_for_state(instance.uuid, 'error')
    (fault,) = cell.faults(instance.uuid)
    assert 'cmp1: build failed: No more IP addresses' in fault['details']
    assert 'no alternate host left' in fault['details']
    assert cell.allocations(instance.uuid) == {}


def test_big_flavor_allocation_request_is_what_the_alternate_claims(cell):
    cell.add_agent('cmp1', fail_all=True)
    cell.add_agent('cmp2')
    flavor = Flavor(name='big', vcpus=4, memory_mb=3072, root_gb=50)
    instance, _ = cell.boot(['cmp1', 'cmp2'], flavor=flavor)

    cell.wait_for_state(instance.uuid, 'active')
    node = cell.agents['cmp2'].node_uuid
    assert cell.allocations(instance.uuid) == {
        node: {'VCPU': 4, 'MEMORY_MB': 3072, 'DISK_GB': 50}}


def test_an_instance_deleted_while_its_build_failed_is_not_rescheduled(cell):
    cell.add_agent('cmp1')
    cell.add_agent('cmp2')
    flavor = Flavor(name='small', vcpus=2, memory_mb=1024, root_gb=10)
    instance = Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='user',
                        flavor=flavor)
    spec = RequestSpec(flavor=flavor, project_id='proj', user_id='user')
    host_list = [cell.selection('cmp1', flavor), cell.selection('cmp2', flavor)]
    with cell.engine.begin() as conn:
        instances.create_instance(conn, instance)
        instances.apply_update(conn, InstanceUpdate(
            instance_uuid=instance.uuid, vm_state='deleted'))
    cell.placement.claim(instance.uuid, host_list[0].allocation_request['allocations'],
                         project_id='proj', user_id='user')
    now = datetime.datetime.now(datetime.timezone.utc)

    outcome = cell.rescheduler.reschedule(
        RequestContext(), instance, spec, host_list[1:],
        BuildAttempt(host='cmp1', nodename='cmp1', start=now, finish=now,
                     result='failed', reason='No more IP addresses'))

    assert outcome.host is None and outcome.fault is None
    assert cell.instance(instance.uuid)['vm_state'] == 'deleted'
    assert cell.allocations(instance.uuid) == {}
    assert [e.host for e in cell.history(instance.uuid)] == ['cmp1']


def test_an_active_report_for_a_deleted_instance_terminates_it_on_its_host(cell):
    cell.add_agent('cmp1')
    instance, _ = cell.boot(['cmp1'])
    cell.wait_for_state(instance.uuid, 'active')
    # The user's delete won the race: the cell DB says DELETED while the
    # host still runs the instance and Placement still holds its claim.
    with cell.engine.begin() as conn:
        assert instances.apply_update(conn, InstanceUpdate(
            instance_uuid=instance.uuid, vm_state='deleted'))
    assert cell.agents['cmp1'].driver.list_instances() == [instance.uuid]

    # The host's late ACTIVE report arrives.
    cell.conductor.instance_update(RequestContext(), InstanceUpdate(
        instance_uuid=instance.uuid, vm_state='active', host='cmp1', node='cmp1'))

    eventually(lambda: cell.agents['cmp1'].driver.list_instances() == [],
               'the late instance destroyed on cmp1')
    eventually(lambda: cell.allocations(instance.uuid) == {},
               'its allocation removed from Placement')
    assert cell.instance(instance.uuid)['vm_state'] == 'deleted'
