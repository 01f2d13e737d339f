"""``cellplane-manage service list`` over a running embedded control plane: every service, top and cells.

The embedded mode builds each service with its daemon's builder, so the
heartbeats listed are the ones the daemons send.
"""
from __future__ import annotations

import datetime
import json
import socket
import uuid as uuidlib

from cellplane.db.cell.models import compute_nodes as compute_nodes_table
from cellplane.objects import aggregates, cell_mappings, host_mappings, services
from cellplane_cli import manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from tests.functional.cell_boot.harness import eventually


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def test_service_list_shows_top_level_and_cell_services_and_a_cell_it_cannot_read(
        tmp_path, capsys):
    plan = CloudPlan.uniform(cells=2, hosts_per_cell=2)
    with EmbeddedCloud(tmp_path / 'state', plan) as cloud:
        # Each service's first heartbeat runs on its own thread at start.
        eventually(lambda: len(services.list_all(cloud.api_engine)) == 2,
                   'the scheduler and the super conductor heartbeat')
        eventually(lambda: all(len(services.list_all(e)) == 3
                               for e in cloud.cell_engines.values()),
                   'each cell conductor and compute agent heartbeat')
        cell_mappings.create(
            cloud.api_engine, name='gone', transport_url='fake:///gone',
            database_connection=f'postgresql+psycopg2://x@127.0.0.1:{_closed_port()}/none')
        aggregates.create(cloud.api_engine, 'fast', zone='az1')
        aggregates.add_host(cloud.api_engine, 'fast', 'cell1-host1')
        services.set_disabled(cloud.cell_engines['cell2'], 'cell2-host2', 'cellplane-compute',
                              disabled=True, reason='disk swap')
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {cloud.conf.api_database.connection}\n'
                        f'[cells]\nread_timeout = 5\n')
        capsys.readouterr()
        assert manage.main(['service', 'list', '--config-file', str(conf), '-f', 'json']) == 0
        rows = json.loads(capsys.readouterr().out)
        assert manage.main(['service', 'list', '--config-file', str(conf)]) == 0
        table = capsys.readouterr().out

    listed = {(r['cell'], r['binary'], r['host']): r for r in rows if r['binary']}
    assert set(listed) == {
        ('(top)', 'cellplane-scheduler', 'scheduler'),
        ('(top)', 'cellplane-conductor', 'super-conductor'),
        ('cell1', 'cellplane-conductor', 'cell1-conductor'),
        ('cell1', 'cellplane-compute', 'cell1-host1'),
        ('cell1', 'cellplane-compute', 'cell1-host2'),
        ('cell2', 'cellplane-conductor', 'cell2-conductor'),
        ('cell2', 'cellplane-compute', 'cell2-host1'),
        ('cell2', 'cellplane-compute', 'cell2-host2'),
    }
    # Nova's columns, in Nova's order, then the cell and the version.
    assert list(rows[0]) == ['id', 'binary', 'host', 'zone', 'status', 'state', 'updated_at',
                             'disabled_reason', 'cell', 'version']
    assert [c.strip() for c in table.splitlines()[1].split('|')[1:5]] == \
        ['id', 'binary', 'host', 'zone']
    assert {r['state'] for r in listed.values()} == {'up'}
    assert all(isinstance(r['id'], int) for r in listed.values())
    assert {k: (r['status'], r['disabled_reason']) for k, r in listed.items()
            if r['status'] != 'enabled'} == {
        ('cell2', 'cellplane-compute', 'cell2-host2'): ('disabled', 'disk swap')}
    # A host in no zone is in [DEFAULT] default_availability_zone, as the
    # compute API's os-services (and Nova's service list) shows it.
    assert {k[2]: r['zone'] for k, r in listed.items()} == {
        'scheduler': 'internal', 'super-conductor': 'internal', 'cell1-conductor': 'internal',
        'cell2-conductor': 'internal', 'cell1-host1': 'az1', 'cell1-host2': 'nova',
        'cell2-host1': 'nova', 'cell2-host2': 'nova'}
    # ISO 8601, in UTC, with its offset.
    for r in listed.values():
        seen = datetime.datetime.fromisoformat(r['updated_at'])
        assert seen.utcoffset() == datetime.timedelta(0) and r['updated_at'].endswith('+00:00')
    [gone] = [r for r in rows if r['cell'] == 'gone']
    assert gone['state'].startswith('unknown: the cell database cannot be read (')


def test_hosts_are_mapped_by_the_scheduler_and_by_discover_hosts(tmp_path, capsys):
    plan = CloudPlan.uniform(cells=1, hosts_per_cell=2)
    with EmbeddedCloud(tmp_path / 'state', plan) as cloud:
        # The scheduler's first refresh mapped the hosts it found.
        eventually(lambda: sorted(h for h, _ in host_mappings.list_all(cloud.api_engine))
                   == ['cell1-host1', 'cell1-host2'], 'the hosts mapped by the scheduler')
        # A compute node the scheduler has not read yet.
        with cloud.cell_engines['cell1'].begin() as conn:
            conn.execute(compute_nodes_table.insert().values(
                uuid=str(uuidlib.uuid4()), host='cell1-late', nodename='cell1-late',
                vcpus=1, memory_mb=512, local_gb=1, stats={}))
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {cloud.conf.api_database.connection}\n')
        argv = ['cell', 'discover-hosts', '--config-file', str(conf), '-f', 'json']
        capsys.readouterr()
        assert manage.main(argv) == 0
        mapped = json.loads(capsys.readouterr().out)
        # The scheduler's next refresh may have mapped it first: then nothing is left.
        assert mapped in ([{'cell': 'cell1', 'host': 'cell1-late'}], [])
        assert 'cell1-late' in {h for h, _ in host_mappings.list_all(cloud.api_engine)}
        assert manage.main(argv) == 0
        assert json.loads(capsys.readouterr().out) == []
