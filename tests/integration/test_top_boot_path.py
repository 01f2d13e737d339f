"""The top of the boot flow through real daemons: CLI -> super conductor -> scheduler -> cells.

Real ``cellplane-placement`` (PostgreSQL), ``cellplane-scheduler`` and super
``cellplane-conductor`` daemons on a real top-level vhost, a PostgreSQL API
database and two PostgreSQL cell databases, and the ``cellplane`` CLI run as
a subprocess. Compute hosts are what their agents would have reported
(compute node and service rows in their cell database, a provider with
inventory in Placement); the build casts are received by an RPC server per
host on its cell's vhost, which records them. The last test runs a real cell
instead (cell conductor and compute daemons with the fake driver) and boots
with ``--wait`` until ACTIVE. The scheduler writes its records to a JSON
lines file (``[scheduler] record_backend = jsonlines``), which the CLI reads
through the same options; the boot-flow module covers the database backend.
"""
from __future__ import annotations

import json
import signal
import socket
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db import engines, migrate
from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.api.models import instance_mappings
from cellplane.db.cell.models import compute_nodes, instances, services
from cellplane.objects import build_requests, cell_mappings
from cellplane.rpc.server import build_server
from cellplane_api import servers
from conductor.super.rpcapi import SuperConductorAPI
from placement.client import Inventory, PlacementClient
from tests.functional.boot.harness import ComputeRecorder
from tests.integration.daemons import EVENTUALLY_SECONDS, cell_conductor_config, compute_config
from tests.support import cli_runner
from tests.support.polling import eventually

FLAVOR = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}
HOSTS = {'cell1': ['c1-a', 'c1-b', 'c1-c'], 'cell2': ['c2-a', 'c2-b']}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _migrated(url: str, history: str) -> str:
    engine = engines.create_engine(url)
    try:
        migrate.sync(history, engine)
    finally:
        engine.dispose()
    return url


def _cli(*argv: str, config: str) -> list | dict:
    proc = cli_runner.run('cellplane_cli.cli', [*argv, '--config-file', config, '-f', 'json'],
                          timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


class TopLevel:
    """Placement, scheduler worker(s) and a super conductor running; cells mapped as asked."""

    def __init__(self, tmp_path, daemons, transport_url_factory, postgres_url_factory,
                 cell_db_factory, client_transport_factory) -> None:
        self._daemons = daemons
        self._transport_url_factory = transport_url_factory
        self._cell_db_factory = cell_db_factory
        self._client_transport_factory = client_transport_factory
        self.top_url = transport_url_factory('top')
        api_url = _migrated(postgres_url_factory('api'), 'api')
        placement_url = _migrated(postgres_url_factory('placement'), 'placement')
        port = _free_port()
        endpoint = f'http://127.0.0.1:{port}'
        daemons.placement('placement', {
            'placement_database': {'connection': placement_url},
            'api': {'auth_strategy': 'noauth2', 'bind_host': '127.0.0.1',
                    'bind_port': port, 'workers': 1},
        }).start()
        # Placement was only just started: its first answer can take longer
        # than a few retries on a loaded machine.
        self.placement = PlacementClient.over_http(endpoint, token='admin', attempts=None,
                                                   retry_timeout=EVENTUALLY_SECONDS, max_wait=0.5)
        self.api = engines.create_engine(api_url)
        self.records_file = str(tmp_path / 'scheduling-records.jsonl')
        self.recorder = ComputeRecorder()
        self._servers = []
        self.cells, self.cell_engines = {}, {}
        self.top_sections = {
            'DEFAULT': {'transport_url': self.top_url},
            'api_database': {'connection': api_url},
            'placement': {'endpoint_url': endpoint},
            'scheduler': {'host_refresh_interval': 1, 'record_backend': 'jsonlines',
                          'records_file': self.records_file},
            'conductor': {'role': 'super'},
        }
        self.config = str(tmp_path / 'cli.conf')
        with open(self.config, 'w') as out:
            out.write(f'[DEFAULT]\ntransport_url = {self.top_url}\n'
                      f'[api_database]\nconnection = {api_url}\n'
                      f'[scheduler]\nrecord_backend = jsonlines\n'
                      f'records_file = {self.records_file}\n'
                      # Not about quotas (and no [placement] for the CLI here).
                      f'[quota]\ninstances = -1\ncores = -1\nram = -1\n')
        self.schedulers = []

    def map_cell(self, cell: str) -> None:
        cell_url = self._transport_url_factory(cell)
        db_url = self._cell_db_factory(cell)
        self.cells[cell] = cell_mappings.create(self.api, name=cell, transport_url=cell_url,
                                           database_connection=db_url)
        self.cell_engines[cell] = engine = engines.create_engine(db_url)
        transport = self._client_transport_factory(cell_url)
        for host in HOSTS[cell]:
            _report_compute_node(engine, self.placement, host)
            server = build_server(transport, topic='compute', server=host,
                                  endpoints=[self.recorder.endpoint(host)])
            server.start()
            self._servers.append(server)

    def run_cell(self, cell: str, hosts: list[str], failing: dict[str, str]) -> None:
        """Map a cell served by a real cell conductor and real compute daemons.

        ``failing``: host -> the reason its fake driver fails every build with.
        """
        cell_url = self._transport_url_factory(cell)
        db_url = self._cell_db_factory(cell)
        self.cells[cell] = cell_mappings.create(self.api, name=cell, transport_url=cell_url,
                                           database_connection=db_url)
        self.cell_engines[cell] = engine = engines.create_engine(db_url)
        placement = {'endpoint_url': self.top_sections['placement']['endpoint_url'],
                     'token': 'admin'}
        conductor = self._daemons.conductor(
            f'{cell}-conductor', {**cell_conductor_config(cell_url, db_url, cell=cell),
                                  'placement': placement})
        conductor.start().wait_until_serving()
        computes = []
        for host in hosts:
            sections = {**compute_config(cell_url, host=host, cell=cell),
                        'placement': placement, 'compute': {'report_interval': 1}}
            if host in failing:
                sections['fake_driver'] = {'fail_all': True,
                                           'failure_reason': failing[host]}
            computes.append(self._daemons.compute(host, sections).start())
        for compute in computes:
            compute.wait_until_serving()

        def reported():
            with engine.connect() as conn:
                return conn.execute(sa.select(sa.func.count()).select_from(
                    compute_nodes)).scalar() == len(hosts)
        eventually(reported,
                   f'the agents of {cell} reported their nodes', seconds=EVENTUALLY_SECONDS)

    def _sections(self, host: str, **default) -> dict:
        return {**self.top_sections,
                'DEFAULT': {**self.top_sections['DEFAULT'], 'host': host, **default}}

    def start(self, schedulers: int = 1) -> None:
        for n in range(1, schedulers + 1):
            self.schedulers.append(self._daemons.scheduler(
                f'scheduler{n}', self._sections(f'sched{n}', debug=True)).start())
        self._daemons.conductor('super', self._sections('super1')).start()
        for daemon in self.schedulers + [self._daemons.started[-1]]:
            daemon.wait_until_serving()
        _cli('flavor', 'create', 'small', '--vcpus', '2', '--ram', '1024', '--disk', '10',
             config=self.config)
        _cli('flavor', 'create', 'huge', '--vcpus', '64', '--ram', '1024', '--disk', '10',
             config=self.config)
        _cli('flavor', 'create', 'whole', '--vcpus', '8', '--ram', '1024', '--disk', '10',
             config=self.config)

    def close(self) -> None:
        for server in self._servers:
            server.stop()
            server.wait()
        for engine in (self.api, *self.cell_engines.values()):
            engine.dispose()


@pytest.fixture
def deployment(tmp_path, daemons, transport_url_factory, postgres_url_factory,
               cell_db_factory, client_transport_factory):
    """A TopLevel not started yet: map cells, then ``start()``."""
    top = TopLevel(tmp_path, daemons, transport_url_factory, postgres_url_factory,
                   cell_db_factory, client_transport_factory)
    yield top
    top.close()


@pytest.fixture
def top_level(deployment):
    for cell in HOSTS:
        deployment.map_cell(cell)
    deployment.start()
    return deployment


def _node_uuid(host: str) -> str:
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, f'node-{host}'))


def _report_compute_node(engine, placement: PlacementClient, host: str) -> None:
    """What the host's agent would have reported: 8 VCPU, 4 GB, 100 GB."""
    uuid = _node_uuid(host)
    with engine.begin() as conn:
        conn.execute(compute_nodes.insert().values(
            uuid=uuid, host=host, nodename=host, vcpus=8, memory_mb=4096,
            local_gb=100, stats={}))
        conn.execute(services.insert().values(
            host=host, binary='cellplane-compute', topic='compute', report_count=1,
            last_seen_at=sa.func.now()))
    placement.ensure_provider(uuid, host)
    placement.set_inventory(uuid, {'VCPU': Inventory(8), 'MEMORY_MB': Inventory(4096),
                                   'DISK_GB': Inventory(100)})


def test_server_create_count_n_lands_in_the_cells_with_claims_summing_to_the_flavors(
        top_level):
    recorder = top_level.recorder
    created = _cli('server', 'create', 'web', '--flavor', 'small', '--count', '4',
                   config=top_level.config)
    uuids = [s['id'] for s in created]
    assert len(uuids) == 4
    recorder.wait_for(lambda: len(recorder.builds) == 4, 'four builds cast to hosts')

    cell_of_host = {h: cell for cell, hosts in HOSTS.items() for h in hosts}
    with top_level.api.connect() as conn:
        mapped = dict(conn.execute(
            sa.select(instance_mappings.c.instance_uuid, cell_mappings_table.c.name)
            .select_from(instance_mappings.join(
                cell_mappings_table, cell_mappings_table.c.id == instance_mappings.c.cell_id))).all())
    total = {rc: 0 for rc in FLAVOR}
    for build in recorder.builds:
        uuid = build.instance.uuid
        cell = cell_of_host[build.host]
        assert build.host_list[0].service_host == build.host
        assert build.host_list[0].cell_uuid == top_level.cells[cell].uuid
        assert {cell_of_host[s.service_host] for s in build.host_list} == {cell}
        assert mapped[uuid] == cell
        with top_level.cell_engines[cell].connect() as conn:
            row = conn.execute(sa.select(instances.c.host, instances.c.vm_state).where(
                instances.c.uuid == uuid)).one()
        assert tuple(row) == (build.host, 'building')
        allocations = top_level.placement.get_allocations(uuid).allocations
        assert allocations == {_node_uuid(build.host): FLAVOR}
        for rc, amount in allocations[_node_uuid(build.host)].items():
            total[rc] += amount
    assert sorted(b.instance.uuid for b in recorder.builds) == sorted(uuids)
    assert total == {rc: 4 * n for rc, n in FLAVOR.items()}

    listed = {s['id']: s for s in _cli('server', 'list', config=top_level.config)}
    assert set(listed) == set(uuids)
    for build in recorder.builds:
        assert (listed[build.instance.uuid]['host'], listed[build.instance.uuid]['cell']) \
            == (build.host, cell_of_host[build.host])
    shown = _cli('server', 'show', uuids[0], config=top_level.config)
    assert [e['event'] for e in shown['events']] == ['conductor_schedule_and_build_instances']


def test_server_that_fits_nowhere_is_shown_in_error_with_the_scheduler_reason(top_level):
    [created] = _cli('server', 'create', 'big', '--flavor', 'huge',
                     config=top_level.config)
    shown = eventually(lambda: (lambda s: s if s['status'] == 'ERROR' else None)(
                           _cli('server', 'show', created['id'], config=top_level.config)),
                       'the huge server in ERROR', seconds=EVENTUALLY_SECONDS)
    assert 'NoValidHost' in shown['fault']
    assert shown['cell'] is None
    assert top_level.placement.get_allocations(created['id']).allocations == {}
    assert top_level.recorder.builds == []
    assert 'no resource provider has VCPU:64 (each asked alone)' in shown['fault']

    # The run's record, in the JSON lines file: found by instance, then by its request id.
    (by_instance,) = eventually(lambda: _cli('scheduler', 'records', '--instance', created['id'],
                                             config=top_level.config),
                                'the scheduling record in the file', seconds=EVENTUALLY_SECONDS)
    (by_request,) = _cli('scheduler', 'records', '--request-id', by_instance['request_id'],
                         config=top_level.config)
    assert by_request['outcome'] == 'no valid host'
    assert by_request['record']['instance_uuids'] == [created['id']]
    assert by_request['record']['placement']['shortage'] == ['VCPU:64']
    with open(top_level.records_file) as lines:
        assert any(json.loads(line)['request_id'] == by_instance['request_id']
                   for line in lines)


def _whole_host_servers(top: TopLevel, count: int) -> list[str]:
    return [s['id'] for s in _cli('server', 'create', 'w', '--flavor', 'whole',
                                  '--count', str(count), config=top.config)]


def test_scheduler_schedules_to_a_cell_mapped_after_it_started_once_sent_sighup(deployment):
    deployment.map_cell('cell1')
    deployment.start()
    [scheduler] = deployment.schedulers
    deployment.map_cell('cell2')
    scheduler.signal(signal.SIGHUP)
    scheduler.wait_for_log(r'Scheduling to 2 enabled cell\(s\)')
    # One instance per host: the request fits only if cell2's two hosts are known.
    uuids = _whole_host_servers(deployment, 5)
    recorder = deployment.recorder
    recorder.wait_for(lambda: len(recorder.builds) == 5, 'five builds cast')
    assert {b.host for b in recorder.builds} == {h for hs in HOSTS.values() for h in hs}
    assert sorted(b.instance.uuid for b in recorder.builds) == sorted(uuids)


def test_two_scheduler_workers_never_overcommit_a_host(deployment, client_transport_factory):
    for cell in HOSTS:
        deployment.map_cell(cell)
    deployment.start(schedulers=2)
    # 5 hosts x 8 VCPU = 20 instances of 2 VCPU; 24 single-instance requests
    # cast at once, scheduled by two workers that each know only their own claims.
    conductor = SuperConductorAPI(client_transport_factory(deployment.top_url))
    engine = deployment.api
    uuids = []
    for n in range(24):
        uuids += servers.create(engine, conductor, new_context(), name=f'r{n}',
                                flavor='small', project_id='proj', user_id='u')
    recorder = deployment.recorder

    def settled():
        failed = [r for r in build_requests.get_many(engine, uuids).values() if r.failed]
        return len(recorder.builds) + len(failed) == 24 and failed
    failed = eventually(settled, 'all 24 requests built or failed', seconds=EVENTUALLY_SECONDS)

    assert len(recorder.builds) == 20 and len(failed) == 4
    assert all('NoValidHost' in r.fault_message for r in failed)
    per_host = {}
    for build in recorder.builds:
        allocations = deployment.placement.get_allocations(build.instance.uuid).allocations
        assert list(allocations) == [_node_uuid(build.host)]
        per_host[build.host] = per_host.get(build.host, 0) + allocations[
            _node_uuid(build.host)]['VCPU']
    assert per_host == {h: 8 for hs in HOSTS.values() for h in hs}
    for request in failed:
        assert deployment.placement.get_allocations(
            request.instance.uuid).allocations == {}
    # Both workers answered requests.
    for scheduler in deployment.schedulers:
        assert 'select_destinations for' in scheduler.log()


def test_boot_through_real_cell_daemons_goes_active_even_past_a_failing_host(deployment):
    deployment.run_cell('cell1', ['r-a', 'r-b', 'r-c'],
                        failing={'r-a': 'No more IP addresses'})
    deployment.start()
    created = _cli('server', 'create', 'web', '--flavor', 'small', '--count', '3',
                   '--wait', '--timeout', str(EVENTUALLY_SECONDS),
                   config=deployment.config)
    assert [s['status'] for s in created] == ['ACTIVE'] * 3
    assert 'r-a' not in {s['host'] for s in created}
    shown = [_cli('server', 'show', s['id'], config=deployment.config) for s in created]
    # The request spread over the three hosts: the one sent to r-a was
    # rescheduled by its cell to an alternate, and says so.
    first_hosts = {s['events'][0]['host'] for s in shown}
    assert first_hosts == {'r-a', 'r-b', 'r-c'}
    [rescheduled] = [s for s in shown if s['events'][0]['host'] == 'r-a']
    failed = [e for e in rescheduled['events'] if e['result'] == 'failed']
    assert [(e['host'], e['reason']) for e in failed] == [('r-a', 'No more IP addresses')]
    for server in created:
        allocations = deployment.placement.get_allocations(server['id']).allocations
        assert len(allocations) == 1
        assert list(allocations.values()) == [FLAVOR]

    victim = created[0]['id']
    proc = cli_runner.run('cellplane_cli.cli', ['server', 'delete', victim,
                                                '--config-file', str(deployment.config)],
                          timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 0, proc.stderr
    eventually(lambda: deployment.placement.get_allocations(victim).allocations == {},
               'the allocations of the deleted server removed', seconds=EVENTUALLY_SECONDS)
    eventually(lambda: victim not in {s['id'] for s in _cli(
       'server', 'list', config=deployment.config)},
               'the deleted server not listed', seconds=EVENTUALLY_SECONDS)
