"""How an agent names its hosts, finds the host a message is for, refreshes Placement, runs a copy."""
from __future__ import annotations

import threading
import types
import uuid

import pytest

from compute_agent.builder import InstanceBuilder
from compute_agent.evacuated import EvacuatedGuests
from compute_agent.hosted_host import HostedHost, hosted_host_names, removed_host_index
from compute_agent.manager import ComputeManager
from compute_agent.resource_reporter import ResourceReporter
from compute_agent.virt.driver import BuildRequest
from compute_agent.virt.fake import FakeDriver, FakeSettings
from compute_agent.wiring import INVENTORIES_PER_REQUEST, HostReports
from placement.client import Inventory, PlacementClientError, Provider
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.migration import LIVE_MIGRATION, Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.support.polling import eventually

AN_HOUR = 3600.0
# A bound on something that must happen, not a speed target.
DEADLINE_SECONDS = 30


def test_one_hosted_host_is_the_agent_itself_and_more_are_numbered_from_one():
    assert hosted_host_names('cmp', 1) == ['cmp']
    assert hosted_host_names('cmp', 3) == ['cmp-1', 'cmp-2', 'cmp-3']
    with pytest.raises(ValueError):
        hosted_host_names('cmp', 0)


@pytest.mark.parametrize('name, index', [
    ('cmp-7', 7), ('cmp-12', 12), ('cmp', None), ('cmp-', None), ('cmp-07', None),
    ('cmp-x1', None), ('other-1', None), ('cmp-1-2', None)])
def test_only_names_the_agent_could_have_given_count_as_its_former_hosts(name, index):
    assert removed_host_index('cmp', name) == index


class _Conductor:
    """Records what the manager sends its cell conductor."""

    def __init__(self):
        self.sent = []

    def reschedule_build(self, ctxt, instance, request_spec, host_list, attempt):
        self.sent.append(('reschedule_build', attempt, host_list))

    def instance_update(self, ctxt, update):
        self.sent.append(('instance_update', update))


def _hosted(name: str, **settings) -> HostedHost:
    driver = FakeDriver(FakeSettings(**settings))
    return HostedHost(name=name, driver=driver,
                      builder=InstanceBuilder(host=name, nodename=name, driver=driver),
                      reporter=None)


def _build_args(*hosts: str):
    flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1)
    instance = Instance(uuid=str(uuid.uuid4()), project_id='p', user_id='u',
                        flavor=flavor, display_name='vm')
    selections = [Selection(service_host=h, nodename=h, compute_node_uuid=str(uuid.uuid4()),
                            cell_uuid=str(uuid.uuid4()), allocation_request={},
                            allocation_request_version='1.36') for h in hosts]
    return instance, RequestSpec(flavor=flavor, project_id='p', user_id='u'), selections


def test_a_build_runs_on_the_host_its_first_selection_names():
    hosts = {n: _hosted(n) for n in ('h-1', 'h-2')}
    conductor = _Conductor()
    manager = ComputeManager(hosts=hosts, placement=None, conductor=conductor)
    instance, spec, selections = _build_args('h-2', 'h-1')

    manager.build_and_run_instance(None, instance, spec, selections)

    (method, update), = conductor.sent
    assert (method, update.vm_state, update.host) == ('instance_update', 'active', 'h-2')
    assert hosts['h-2'].driver.list_instances() == [instance.uuid]
    assert hosts['h-1'].driver.list_instances() == []


def test_a_build_for_a_host_the_agent_does_not_run_is_a_failed_attempt_with_its_alternates():
    hosts = {n: _hosted(n) for n in ('h-1', 'h-2')}
    conductor = _Conductor()
    manager = ComputeManager(hosts=hosts, placement=None, conductor=conductor)
    instance, spec, selections = _build_args('other', 'h-1')

    manager.build_and_run_instance(None, instance, spec, selections)

    (method, attempt, alternates), = conductor.sent
    assert (method, attempt.result, attempt.host) == ('reschedule_build', 'failed', 'other')
    assert attempt.reason == 'build sent to other, which this agent (h-1, h-2) does not run'
    assert [s.service_host for s in alternates] == ['h-1']


def test_a_stopped_host_holds_its_build_until_it_starts():
    hosts = {'h-1': _hosted('h-1')}
    conductor = _Conductor()
    manager = ComputeManager(hosts=hosts, placement=None, conductor=conductor)
    instance, spec, selections = _build_args('h-1')
    hosts['h-1'].stop()

    manager.build_and_run_instance(None, instance, spec, selections)
    assert conductor.sent == [] and hosts['h-1'].held_count == 1

    for work in hosts['h-1'].start():
        work()
    assert [m[0] for m in conductor.sent] == ['instance_update']


class _Placement:
    """Counts the reads a reporter makes; holds one provider's state and generation."""

    def __init__(self):
        self.reads = 0
        self.inventory = {}
        self.traits = frozenset()
        self.exists = False
        self.generation = 0

    def get_provider(self, uuid):
        self.reads += 1
        return Provider(uuid, 'n', self.generation, None, uuid) if self.exists else None

    def create_provider(self, uuid, name):
        if self.exists:     # made by another writer meanwhile: that one
            return Provider(uuid, name, self.generation, None, uuid)
        self.exists = True
        return Provider(uuid, name, 0, None, uuid)

    def get_inventory(self, uuid):
        self.reads += 1
        return {rc: Inventory(**body) for rc, body in self.inventory.items()}

    def set_inventory(self, uuid, wanted, *, generation=None):
        self.inventory = dict(wanted)
        self.generation += 1
        return self.generation

    def get_traits(self, uuid):
        self.reads += 1
        return self.traits

    def set_traits(self, uuid, traits, *, generation=None):
        self.traits = frozenset(traits)
        self.generation += 1
        return self.generation


def test_a_reporter_in_sync_reads_placement_again_only_on_change_or_when_due():
    now = [1000.0]
    placement = _Placement()
    driver = FakeDriver(FakeSettings())
    reporter = ResourceReporter(host='h', nodename='h', driver=driver, placement=placement,
                                conductor=None, refresh_interval=300,
                                extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}),
                                clock=lambda: now[0])

    assert reporter.sync_placement() == ['provider', 'inventory', 'traits']
    assert placement.reads == 1     # a new provider: nothing else to read
    assert placement.traits == {'CUSTOM_HOLLOW_HOST'}
    assert reporter.sync_placement() == [] and placement.reads == 1

    driver.settings.vcpus = 32      # the driver's view changed: written at once
    assert reporter.sync_placement() == ['inventory']
    assert placement.reads == 4

    now[0] += 301                   # due: the provider read, at the generation left
    assert reporter.sync_placement() == [] and placement.reads == 5
    assert reporter.sync_placement(force=True) == [] and placement.reads == 8

    placement.generation += 1       # something changed it (an allocation, an operator)
    now[0] += 301                   # due: read again, nothing to write
    assert reporter.sync_placement() == [] and placement.reads == 11
    now[0] += 301
    assert reporter.sync_placement() == [] and placement.reads == 12


def test_a_node_its_agent_saw_absent_is_created_without_a_lookup():
    placement = _Placement()
    reporter = ResourceReporter(host='h', nodename='h', driver=FakeDriver(FakeSettings()),
                                placement=placement, conductor=None, refresh_interval=300,
                                extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}))
    assert reporter.sync_placement(absent=True) == ['provider', 'inventory', 'traits']
    assert placement.reads == 0


def test_a_node_created_by_another_writer_since_it_was_listed_is_read_before_written():
    placement = _Placement()
    placement.exists = True
    placement.generation = 3
    placement.inventory = {'VCPU': dict(total=1)}
    reporter = ResourceReporter(host='h', nodename='h', driver=FakeDriver(FakeSettings()),
                                placement=placement, conductor=None, refresh_interval=300,
                                extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}))
    assert reporter.sync_placement(absent=True) == ['provider', 'inventory', 'traits']
    assert placement.reads == 2     # its inventory and traits, not the provider
    assert placement.traits == {'CUSTOM_HOLLOW_HOST'}


class _MoveConductor:
    """The cell conductor and the other hosts, as a source's hand-over sees them: what they were sent."""

    def __init__(self):
        self.sent = []

    def move_started(self, ctxt, migration_uuid, dest_host):
        self.sent.append(('move_started', dest_host))

    def move_aborted(self, ctxt, migration_uuid, instance_uuid, host):
        self.sent.append(('move_aborted', host))

    def reschedule_move(self, ctxt, instance, request_spec, migration, host_list, attempt):
        self.sent.append(('reschedule_move', attempt.reason))

    def finish_move(self, ctxt, instance, request_spec, migration, host_list):
        self.sent.append(('finish_move', host_list[0].service_host))


def _handing_over(move_seconds: float):
    """A manager of hosts src and dst, an instance running on src, and its move to dst."""
    hosts = {'src': _hosted('src', move_seconds=move_seconds), 'dst': _hosted('dst')}
    told = _MoveConductor()
    manager = ComputeManager(hosts=hosts, placement=None, conductor=told, computes=told)
    instance, spec, selections = _build_args('dst')
    hosts['src'].driver.spawn(BuildRequest(instance_uuid=instance.uuid, vcpus=1,
                                           memory_mb=512, root_gb=1, image_properties={}))
    migration = Migration(uuid=str(uuid.uuid4()), instance_uuid=instance.uuid,
                          migration_type=LIVE_MIGRATION, source_host='src',
                          source_node='src', old_flavor=instance.flavor,
                          new_flavor=instance.flavor)
    return manager, told, hosts, instance, spec, migration, selections


def _hand_over_returns(manager, *args) -> None:
    """``manager.hand_over(None, *args)`` on a thread; it must return (its copy goes on)."""
    handler = threading.Thread(target=manager.hand_over, args=(None, *args), daemon=True)
    handler.start()
    handler.join(DEADLINE_SECONDS)
    assert not handler.is_alive(), 'hand_over held its handler thread for its whole copy'


def test_a_hand_over_frees_its_handler_thread_and_an_abort_that_follows_stops_the_copy():
    # An hour's copy: the handler must not wait for it, and the abort that
    # comes next (to a handler thread it would have held) must reach it.
    manager, told, hosts, instance, spec, migration, selections = _handing_over(AN_HOUR)

    _hand_over_returns(manager, instance, spec, migration, selections)
    eventually(lambda: manager.guest_state(None, 'src', instance.uuid) == 'moving',
               'the copy under way on src')
    manager.live_migration_abort(None, instance.uuid, migration.uuid, 'src')

    assert manager.copies.wait(DEADLINE_SECONDS)
    assert told.sent == [('move_started', 'dst'), ('move_aborted', 'src')]
    assert instance.uuid in hosts['src'].driver.running()


def test_a_copy_on_its_own_thread_still_asks_the_destination_to_finish_and_a_stop_waits_for_it():
    manager, told, hosts, instance, spec, migration, selections = _handing_over(0.0)

    _hand_over_returns(manager, instance, spec, migration, selections)

    assert manager.copies.wait(DEADLINE_SECONDS)
    assert told.sent == [('move_started', 'dst'), ('finish_move', 'dst')]
    assert instance.uuid not in hosts['src'].driver.running()
    assert hosts['src'].driver.list_instances() == [instance.uuid]   # kept until confirm


def test_a_reporter_its_agent_refreshes_reads_only_what_the_listed_generation_says_moved():
    now = [1000.0]
    placement = _Placement()
    driver = FakeDriver(FakeSettings())
    reporter = ResourceReporter(host='h', nodename='h', driver=driver, placement=placement,
                                conductor=None, refresh_interval=None,
                                extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}),
                                clock=lambda: now[0])
    assert reporter.sync_placement(absent=True) == ['provider', 'inventory', 'traits']
    now[0] += 10_000                # never due by itself
    assert reporter.sync_placement() == [] and placement.reads == 0

    listed = Provider(reporter.node_uuid, 'h', placement.generation, None, None)
    assert reporter.sync_placement(listed=listed) == [] and placement.reads == 0

    placement.generation += 1       # an allocation, or an operator
    listed = Provider(reporter.node_uuid, 'h', placement.generation, None, None)
    assert reporter.sync_placement(listed=listed) == [] and placement.reads == 2
    assert reporter.sync_placement(listed=listed) == [] and placement.reads == 2

    driver.settings.vcpus = 32      # the driver's view changed: written at once, no timer
    assert reporter.sync_placement() == ['inventory']


class _ManyProviders:
    """Placement for an agent's first report: providers by uuid, and the requests made."""

    def __init__(self, *, batch_refused: bool = False):
        self.requests = []
        self.providers = {}         # uuid -> [generation, inventory, traits]
        self.batch_refused = batch_refused

    def list_providers(self, *, name_prefix=''):
        self.requests.append('list')
        return []

    def create_provider(self, uuid, name):
        self.requests.append('create')
        self.providers[uuid] = [0, {}, frozenset()]
        return Provider(uuid, name, 0, None, uuid)

    def set_traits(self, uuid, traits, *, generation=None):
        self.requests.append('traits')
        held = self.providers[uuid]
        assert generation == held[0]
        held[0], held[2] = held[0] + 1, frozenset(traits)
        return held[0]

    def set_inventory(self, uuid, inventory, *, generation=None):
        self.requests.append('inventory')
        held = self.providers[uuid]
        assert generation == held[0]
        held[0], held[1] = held[0] + 1, dict(inventory)
        return held[0]

    def set_many_inventories(self, providers):
        self.requests.append(f'inventories of {len(providers)}')
        if self.batch_refused:
            raise PlacementClientError(403, 'not a service')
        for rp, (generation, inventory) in providers.items():
            held = self.providers[rp]
            assert generation == held[0]
            held[0], held[1] = held[0] + 2, dict(inventory)
        return {rp: generation + 2 for rp, (generation, _) in providers.items()}


class _NodeRecords:
    def __init__(self):
        self.records = []

    def compute_node_updates(self, ctxt, records):
        self.records += records


def _first_report(placement, hosts: int, now=lambda: 0.0):
    conductor = _NodeRecords()
    hosted = {}
    for name in hosted_host_names('agent', hosts):
        driver = FakeDriver(FakeSettings())
        reporter = ResourceReporter(host=name, nodename=name, driver=driver,
                                    placement=placement, conductor=conductor,
                                    refresh_interval=300, clock=now,
                                    extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}))
        hosted[name] = HostedHost(name=name, driver=driver, builder=None, reporter=reporter)
    conf = types.SimpleNamespace(compute=types.SimpleNamespace(placement_refresh_interval=300))
    reports = HostReports(conf, name='agent', hosts=hosted, placement=placement,
                          conductor=conductor,
                          evacuated=EvacuatedGuests(conductor=conductor, unclaims=None))
    reports.report()
    return hosted, conductor


def test_an_agents_new_hosts_get_their_inventories_many_per_request():
    placement = _ManyProviders()
    now = [0.0]
    hosted, conductor = _first_report(placement, INVENTORIES_PER_REQUEST + 2,
                                      now=lambda: now[0])
    requests = sorted(placement.requests)
    assert requests.count('create') == requests.count('traits') == len(hosted)
    assert 'inventory' not in requests
    assert [r for r in requests if r.startswith('inventories')] == [
        f'inventories of {INVENTORIES_PER_REQUEST}', 'inventories of 2']
    assert len(conductor.records) == len(hosted)
    for host in hosted.values():
        generation, inventory, traits = placement.providers[host.node_uuid]
        assert generation == 3 and set(inventory) == {'VCPU', 'MEMORY_MB', 'DISK_GB'}
        assert traits == {'CUSTOM_HOLLOW_HOST'}
        # In sync: nothing read or written before its refresh is due.
        now[0] = -1.0
        placement.requests.clear()
        assert host.reporter.sync_placement() == [] and placement.requests == []


def test_new_hosts_get_their_inventories_one_by_one_where_placement_refuses_many():
    placement = _ManyProviders(batch_refused=True)
    hosted, conductor = _first_report(placement, 3)
    assert sorted(placement.requests) == sorted(
        ['list', 'inventories of 3'] + ['create', 'traits', 'inventory'] * 3)
    assert len(conductor.records) == 3
    for host in hosted.values():
        assert placement.providers[host.node_uuid][0] == 2
