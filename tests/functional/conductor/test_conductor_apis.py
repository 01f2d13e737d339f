"""The two conductor APIs: each its own namespace and cap; the 1.x wire form still served.

Both conductors are built by their wiring, as the daemon builds them, on an
in-memory bus (messages copied through JSON as RabbitMQ would).
"""
from __future__ import annotations

import dataclasses
import datetime
import logging

import pytest
from oslo_config import cfg

from cellplane import config
from cellplane.context import new_context
from cellplane.db import engines, migrate
from cellplane.objects import instance_actions, instances, services
from cellplane.rpc import options as rpc_options
from cellplane.rpc.client import MethodNotAllowedByCap
from cellplane.rpc.serializer import PayloadSerializer
from cellplane.rpc.server import build_server
from cellplane_embedded.memory_transport import MemoryBus
from conductor import conf as conductor_conf
from conductor.cell.rpcapi import CellConductorAPI
from conductor.cell.wiring import build_cell_conductor
from conductor.super.rpcapi import SuperConductorAPI
from placement.client import PlacementClient

# isort: split
import oslo_messaging as messaging

from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from rpc_schemas.service_status import ServiceStatus
from tests.functional.cell_boot.harness import eventually


def _load(tmp_path, upgrade_levels: str):
    path = tmp_path / 'conductor.conf'
    path.write_text(f'[upgrade_levels]\n{upgrade_levels}\n')
    return config.load(['--config-file', str(path)], prog='cellplane-tests',
                       conf=cfg.ConfigOpts(), setup_logging=False,
                       registrars=[conductor_conf.register_opts, rpc_options.register_opts])


@pytest.fixture
def bus():
    bus = MemoryBus('conductor-apis')
    yield bus
    bus.cleanup()


def test_each_conductor_api_has_its_own_cap(tmp_path, bus):
    conf = _load(tmp_path, 'cell_conductor = 1.0')
    cell = CellConductorAPI(bus.transport, conf=conf)
    super_ = SuperConductorAPI(bus.transport, conf=conf)
    assert cell.version_cap == '1.0'
    assert super_.version_cap == '1.4'
    with pytest.raises(MethodNotAllowedByCap, match=r'\[upgrade_levels\] cell_conductor'):
        cell.prepare('instance_update', '1.1')
    assert super_.pick_version('schedule_and_build_instances', '1.2') == '1.2'

    conf = _load(tmp_path, 'super_conductor = 1.1')
    assert CellConductorAPI(bus.transport, conf=conf).version_cap == '1.10'
    assert SuperConductorAPI(bus.transport, conf=conf).version_cap == '1.1'
    with pytest.raises(MethodNotAllowedByCap, match=r'\[upgrade_levels\] super_conductor'):
        SuperConductorAPI(bus.transport, conf=conf).prepare(
            'schedule_and_build_instances', '1.2')


def test_the_deprecated_conductor_cap_caps_both_apis(tmp_path, bus):
    conf = _load(tmp_path, 'conductor = 1.0')
    assert CellConductorAPI(bus.transport, conf=conf).version_cap == '1.0'
    assert SuperConductorAPI(bus.transport, conf=conf).version_cap == '1.0'


@pytest.fixture
def cell_conductor(tmp_path, bus):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/cell.sqlite')
    migrate.sync('cell', engine)
    placement_engine = engines.create_engine(f'sqlite:///{tmp_path}/placement.sqlite')
    migrate.sync('placement', placement_engine)
    conf = _load(tmp_path, '')
    conductor = build_cell_conductor(
        conf, transport=bus.transport, engine=engine,
        placement=PlacementClient.in_process(placement_engine), host='cond1',
        owns_transport=False)
    conductor.service.start()
    yield engine
    conductor.service.stop()
    engine.dispose()
    placement_engine.dispose()


def _legacy_client(bus, version: str):
    """A client of the previous release: namespace None, the 1.x conductor API."""
    return messaging.get_rpc_client(
        bus.transport, messaging.Target(topic='conductor', version=version),
        serializer=PayloadSerializer())


def test_a_heartbeat_in_the_1x_form_reaches_the_cell_conductor(cell_conductor, bus):
    status = ServiceStatus(host='old-agent', binary='cellplane-compute', topic='compute',
                           report_time=datetime.datetime.now(datetime.timezone.utc),
                           version='0.0.9', cell_name='cell1')
    _legacy_client(bus, '1.0').cast(new_context(), 'service_heartbeat', status=status)
    row = eventually(lambda: services.get_service(
        cell_conductor, 'old-agent', 'cellplane-compute'), 'the 1.x heartbeat recorded')
    assert row['version'] == '0.0.9'


def test_a_super_method_in_the_1x_form_is_refused_by_the_cell_conductor(
        cell_conductor, bus, caplog):
    caplog.set_level(logging.ERROR, logger='conductor.legacy')
    spec = RequestSpec(flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1),
                       project_id='p', user_id='u')
    _legacy_client(bus, '1.2').cast(new_context(), 'schedule_and_build_instances',
                                    request_spec=spec, instance_uuids=['x'])
    eventually(lambda: any('is served by the super conductor' in r.getMessage()
                           for r in caplog.records),
               'the refusal logged')
    [record] = [r for r in caplog.records if 'schedule_and_build_instances' in r.getMessage()]
    assert 'this is the cell conductor' in record.getMessage()


def test_a_client_capped_below_1_3_sends_heartbeats_without_the_builds_held(
        tmp_path, bus, cell_conductor):
    status = ServiceStatus(host='agent', binary='cellplane-compute', topic='compute',
                           report_time=datetime.datetime.now(datetime.timezone.utc),
                           version='0.1.0', building=['instance-1'])
    capped = CellConductorAPI(bus.transport, conf=_load(tmp_path, 'cell_conductor = 1.2'))
    version = capped.pick_version('service_heartbeats', '1.2', '1.3')
    wire = PayloadSerializer().serialize_entity(None, capped.status_for(version, status))

    assert (version, wire['cellplane.version']) == ('1.2', '1.0')
    assert 'building' not in wire['cellplane.data']
    capped.service_heartbeats(new_context(), [status])
    row = eventually(lambda: services.get_service(cell_conductor, 'agent',
                                                  'cellplane-compute'),
                     'the capped heartbeat recorded')
    assert row['version'] == '0.1.0'


def _computes(engine) -> dict[str, dict]:
    return {row['host']: row for row in services.list_all(engine)
            if row['binary'] == 'cellplane-compute'}


def _hosts_status(**overrides) -> ServiceStatus:
    values = dict(host='agent', binary='cellplane-compute', topic='compute',
                  report_time=datetime.datetime.now(datetime.timezone.utc),
                  version='0.1.0', cell_name='cell1')
    return ServiceStatus(**{**values, **overrides})


def test_one_heartbeat_of_many_hosts_records_each_host(tmp_path, bus, cell_conductor):
    client = CellConductorAPI(bus.transport, conf=_load(tmp_path, ''))
    client.host_heartbeats(new_context(), _hosts_status(), ['agent-1', 'agent-2'],
                           {'agent-2': ['instance-1'], 'agent-1': []})
    rows = eventually(lambda: (lambda r: r if len(r) == 2 else None)(
        _computes(cell_conductor)), 'both hosts recorded')
    assert {h: (r['binary'], r['version']) for h, r in rows.items()} == {
        'agent-1': ('cellplane-compute', '0.1.0'), 'agent-2': ('cellplane-compute', '0.1.0')}


def test_a_heartbeat_of_many_hosts_that_is_malformed_is_refused_and_said(
        tmp_path, bus, cell_conductor, caplog):
    caplog.set_level(logging.ERROR, logger='conductor.cell.manager')
    client = CellConductorAPI(bus.transport, conf=_load(tmp_path, ''))
    client.prepare('host_heartbeats', '1.10').cast(
        new_context(), 'host_heartbeats', status=_hosts_status(), hosts=['ok', ''],
        building={})
    eventually(lambda: any('Rejected host_heartbeats: hosts must be' in r.getMessage()
                           for r in caplog.records), 'the refusal logged')
    assert _computes(cell_conductor) == {}


class _CellConductor19:
    """A cell conductor of the previous release (API 1.9): a status per host."""

    target = messaging.Target(namespace='cell_conductor', version='1.9')

    def __init__(self):
        self.statuses = []

    def service_heartbeats(self, ctxt, statuses):
        self.statuses.extend(statuses)


def test_a_client_capped_below_1_10_sends_a_status_per_host(tmp_path, bus):
    old = _CellConductor19()
    server = build_server(bus.transport, topic='conductor', server='old-cond',
                          endpoints=[old])
    server.start()
    try:
        capped = CellConductorAPI(bus.transport, conf=_load(tmp_path, 'cell_conductor = 1.9'))
        capped.host_heartbeats(new_context(), _hosts_status(), ['a-1', 'a-2', 'a-3'],
                               {'a-3': ['instance-1']}, batch=2)
        statuses = eventually(lambda: old.statuses if len(old.statuses) == 3 else None,
                              'three statuses, in two messages')
        assert [(s.host, s.building, s.version) for s in statuses] == [
            ('a-1', [], '0.1.0'), ('a-2', [], '0.1.0'), ('a-3', ['instance-1'], '0.1.0')]
    finally:
        server.stop()
        server.wait()


def test_a_client_capped_below_1_4_does_not_send_build_started(tmp_path, bus):
    # A conductor not yet upgraded has no build_started: the agent says
    # nothing, and its instances stay scheduling until the build ends.
    capped = CellConductorAPI(bus.transport, conf=_load(tmp_path, 'cell_conductor = 1.3'))
    capped.build_started(new_context(), 'instance-1', 'agent')   # no MethodNotAllowedByCap
    with pytest.raises(MethodNotAllowedByCap):
        capped.prepare('build_started', '1.4')


def _failed_build(host: str):
    """A reschedule's arguments: a build failed on ``host``, one alternate left."""
    spec = RequestSpec(flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1),
                       project_id='p', user_id='u')
    instance = Instance(uuid=f'00000000-0000-4000-8000-00000000000{len(host)}',
                        project_id='p', user_id='u', flavor=spec.flavor,
                        display_name='web')
    now = datetime.datetime.now(datetime.timezone.utc)
    attempt = BuildAttempt(host=host, nodename=host, start=now, finish=now,
                           result='failed', reason='the driver failed')
    alternate = Selection(service_host='alt', nodename='alt', compute_node_uuid='n-alt',
                          cell_uuid='c', allocation_request={'allocations': {}},
                          allocation_request_version='1.36')
    return instance, spec, [alternate], attempt


def _failed_builds_recorded(engine, uuid):
    with engine.connect() as conn:
        return [e.host for e in instance_actions.history(conn, uuid) if e.failed_build]


@pytest.mark.parametrize('cap, host', [('', 'h-new'), ('cell_conductor = 1.4', 'h-old')])
def test_a_reschedule_reaches_the_cell_conductor_by_either_name(
        tmp_path, bus, cell_conductor, cap, host):
    # Uncapped: reschedule_build (API 1.5). Capped at 1.4: build_instances,
    # the old name, which this cell conductor still serves for one release.
    client = CellConductorAPI(bus.transport, conf=_load(tmp_path, cap))
    instance, spec, alternates, attempt = _failed_build(host)
    with cell_conductor.begin() as conn:
        instances.create_instances(conn, [dataclasses.replace(instance, host=host,
                                                              node=host)])

    client.reschedule_build(new_context(), instance, spec, alternates, attempt)

    assert eventually(lambda: _failed_builds_recorded(cell_conductor, instance.uuid),
                      'the failed build recorded by the reschedule') == [host]


class _CellConductor14:
    """A cell conductor of the previous release (API 1.4): the reschedule only as build_instances."""

    target = messaging.Target(namespace='cell_conductor', version='1.4')

    def __init__(self):
        self.rescheduled = []

    def build_instances(self, ctxt, instance, request_spec, host_list, attempt):
        self.rescheduled.append((instance.uuid, attempt.host))


def test_a_client_capped_below_1_5_names_the_reschedule_as_a_1_4_conductor_knows_it(
        tmp_path, bus):
    old = _CellConductor14()
    server = build_server(bus.transport, topic='conductor', server='old-cond',
                          endpoints=[old])
    server.start()
    try:
        capped = CellConductorAPI(bus.transport, conf=_load(tmp_path, 'cell_conductor = 1.4'))
        instance, spec, alternates, attempt = _failed_build('h-1')

        capped.reschedule_build(new_context(), instance, spec, alternates, attempt)

        assert eventually(lambda: old.rescheduled, 'the reschedule served') == [
            (instance.uuid, 'h-1')]
    finally:
        server.stop()
        server.wait()


class _CellConductor18:
    """A cell conductor of the previous release (API 1.8): move_instance without taken_at."""

    target = messaging.Target(namespace='cell_conductor', version='1.8')

    def __init__(self):
        self.moves = []

    def move_instance(self, ctxt, instance, request_spec, migration, host_list):
        self.moves.append((instance.uuid, migration.uuid))


def test_a_client_capped_below_1_9_hands_a_move_over_without_its_take(tmp_path, bus):
    old = _CellConductor18()
    server = build_server(bus.transport, topic='conductor', server='old-cond',
                          endpoints=[old])
    server.start()
    try:
        capped = CellConductorAPI(bus.transport, conf=_load(tmp_path, 'cell_conductor = 1.8'))
        instance, spec, alternates, _ = _failed_build('h-1')
        migration = Migration(uuid='00000000-0000-4000-8000-0000000000aa',
                              instance_uuid=instance.uuid, migration_type='migration',
                              source_host='h-0', source_node='h-0',
                              old_flavor=spec.flavor, new_flavor=spec.flavor)

        capped.move_instance(new_context(), instance, spec, migration, alternates,
                             taken_at=datetime.datetime(2026, 11, 27, 10, 0, 0, 123456))

        assert eventually(lambda: old.moves, 'the move handed over') == [
            (instance.uuid, migration.uuid)]
    finally:
        server.stop()
        server.wait()
