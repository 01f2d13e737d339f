"""The top of the boot flow through real daemons: CLI -> super conductor -> scheduler -> cells.

Real ``cellplane-placement`` (PostgreSQL), ``cellplane-scheduler`` and super
``cellplane-conductor`` daemons on a real top-level vhost, a PostgreSQL API
database and two PostgreSQL cell databases, and the ``cellplane`` CLI run as
a subprocess. Compute hosts are what their agents would have reported
(compute node and service rows in their cell database, a provider with
inventory in Placement); the build casts are received by an RPC server per
host on its cell's vhost, which records them.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.cells import mappings
from cellplane.db import engines, migrate
from cellplane.db.api.models import cell_mappings, instance_mappings
from cellplane.db.cell.models import compute_nodes, instances, services
from cellplane.rpc.server import build_server
from placement.client import Inventory, PlacementClient
from tests.functional.boot.harness import ComputeRecorder
from tests.integration.daemons import EVENTUALLY_SECONDS

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
    proc = subprocess.run([sys.executable, '-m', 'cellplane.cmd.cli', *argv, '--config-file', config, '-f', 'json'],
                          capture_output=True, text=True, timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _eventually(predicate, what: str):
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f'never happened: {what}'
        time.sleep(0.2)


@pytest.fixture
def top_level(tmp_path, daemons, transport_url_factory, postgres_url_factory,
              cell_db_factory, client_transport_factory):
    top_url = transport_url_factory('top')
    api_url = _migrated(postgres_url_factory('api'), 'api')
    placement_url = _migrated(postgres_url_factory('placement'), 'placement')
    port = _free_port()
    endpoint = f'http://127.0.0.1:{port}'
    daemons.placement('placement', {
        'placement_database': {'connection': placement_url},
        'api': {'auth_strategy': 'noauth2', 'bind_host': '127.0.0.1',
                'bind_port': port, 'workers': 1},
    }).start()
    placement = PlacementClient.over_http(endpoint, token='admin', attempts=20,
                                          max_wait=0.5)
    api_engine = engines.create_engine(api_url)
    recorder = ComputeRecorder()
    servers, cell_engines, cells = [], {}, {}
    for cell, hosts in HOSTS.items():
        cell_url = transport_url_factory(cell)
        db_url = cell_db_factory(cell)
        cells[cell] = mappings.create(api_engine, name=cell, transport_url=cell_url,
                                      database_connection=db_url)
        cell_engines[cell] = engine = engines.create_engine(db_url)
        transport = client_transport_factory(cell_url)
        for host in hosts:
            _report_compute_node(engine, placement, host)
            server = build_server(transport, topic='compute', server=host,
                                  endpoints=[recorder.endpoint(host)])
            server.start()
            servers.append(server)

    top = {
        'DEFAULT': {'transport_url': top_url},
        'api_database': {'connection': api_url},
        'placement': {'endpoint_url': endpoint},
        'scheduler': {'host_refresh_interval': 1},
        'conductor': {'role': 'super'},
    }
    daemons.scheduler('scheduler', {**top, 'DEFAULT': {**top['DEFAULT'],
                                                       'host': 'sched1'}}).start()
    daemons.conductor('super', {**top, 'DEFAULT': {**top['DEFAULT'],
                                                   'host': 'super1'}}).start()
    for daemon in daemons.started[1:]:
        daemon.wait_until_serving()
    config = tmp_path / 'cli.conf'
    config.write_text(f'[DEFAULT]\ntransport_url = {top_url}\n'
                      f'[api_database]\nconnection = {api_url}\n')
    _cli('flavor', 'create', 'small', '--vcpus', '2', '--ram', '1024', '--disk', '10',
         config=str(config))
    _cli('flavor', 'create', 'huge', '--vcpus', '64', '--ram', '1024', '--disk', '10',
         config=str(config))
    yield {'config': str(config), 'api': api_engine, 'cells': cells,
           'cell_engines': cell_engines, 'placement': placement, 'recorder': recorder}
    for server in servers:
        server.stop()
        server.wait()
    for engine in (api_engine, *cell_engines.values()):
        engine.dispose()


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
    recorder = top_level['recorder']
    created = _cli('server', 'create', 'web', '--flavor', 'small', '--count', '4',
                   config=top_level['config'])
    uuids = [s['id'] for s in created]
    assert len(uuids) == 4
    recorder.wait_for(lambda: len(recorder.builds) == 4, 'four builds cast to hosts')

    cell_of_host = {h: cell for cell, hosts in HOSTS.items() for h in hosts}
    with top_level['api'].connect() as conn:
        mapped = dict(conn.execute(
            sa.select(instance_mappings.c.instance_uuid, cell_mappings.c.name)
            .select_from(instance_mappings.join(
                cell_mappings, cell_mappings.c.id == instance_mappings.c.cell_id))).all())
    total = {rc: 0 for rc in FLAVOR}
    for build in recorder.builds:
        uuid = build.instance.uuid
        cell = cell_of_host[build.host]
        assert build.host_list[0].service_host == build.host
        assert build.host_list[0].cell_uuid == top_level['cells'][cell].uuid
        assert {cell_of_host[s.service_host] for s in build.host_list} == {cell}
        assert mapped[uuid] == cell
        with top_level['cell_engines'][cell].connect() as conn:
            row = conn.execute(sa.select(instances.c.host, instances.c.vm_state).where(
                instances.c.uuid == uuid)).one()
        assert tuple(row) == (build.host, 'building')
        allocations = top_level['placement'].get_allocations(uuid).allocations
        assert allocations == {_node_uuid(build.host): FLAVOR}
        for rc, amount in allocations[_node_uuid(build.host)].items():
            total[rc] += amount
    assert sorted(b.instance.uuid for b in recorder.builds) == sorted(uuids)
    assert total == {rc: 4 * n for rc, n in FLAVOR.items()}

    listed = {s['id']: s for s in _cli('server', 'list', config=top_level['config'])}
    assert set(listed) == set(uuids)
    for build in recorder.builds:
        assert (listed[build.instance.uuid]['host'], listed[build.instance.uuid]['cell']) \
            == (build.host, cell_of_host[build.host])
    shown = _cli('server', 'show', uuids[0], config=top_level['config'])
    assert [e['event'] for e in shown['events']] == ['conductor_schedule_and_build_instances']


def test_server_that_fits_nowhere_is_shown_in_error_with_the_scheduler_reason(top_level):
    [created] = _cli('server', 'create', 'big', '--flavor', 'huge',
                     config=top_level['config'])
    shown = _eventually(
        lambda: (lambda s: s if s['status'] == 'ERROR' else None)(
            _cli('server', 'show', created['id'], config=top_level['config'])),
        'the huge server in ERROR')
    assert 'NoValidHost' in shown['fault']
    assert shown['cell'] is None
    assert top_level['placement'].get_allocations(created['id']).allocations == {}
    assert top_level['recorder'].builds == []
