"""The cell DB services table as heartbeats write it: one row per (host, binary)."""
from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa

from cellplane.db import engines, migrate
from cellplane.db.cell.models import services as services_table
from cellplane.objects import services
from rpc_schemas.service_status import ServiceStatus


@pytest.fixture
def cell_engine(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/cell.sqlite')
    migrate.sync('cell', engine)
    yield engine
    engine.dispose()


def _status(**overrides) -> ServiceStatus:
    values = dict(host='cmp1', binary='cellplane-compute', topic='compute',
                  report_time=datetime.datetime.now(datetime.timezone.utc),
                  version='0.1.0', cell_name='cell1')
    values.update(overrides)
    return ServiceStatus(**values)


def test_first_heartbeat_creates_the_row(cell_engine):
    services.record_heartbeat(cell_engine, _status())
    row = services.get_service(cell_engine, 'cmp1', 'cellplane-compute')
    assert row['report_count'] == 1
    assert row['topic'] == 'compute'
    assert row['version'] == '0.1.0'
    assert row['disabled'] is False
    assert row['last_seen_at'] is not None


def test_later_heartbeats_count_up_and_move_last_seen_forward(cell_engine):
    services.record_heartbeat(cell_engine, _status())
    first = services.get_service(cell_engine, 'cmp1', 'cellplane-compute')
    services.record_heartbeat(cell_engine, _status(version='0.2.0'))
    services.record_heartbeat(cell_engine, _status(version='0.2.0'))
    row = services.get_service(cell_engine, 'cmp1', 'cellplane-compute')
    assert row['report_count'] == 3
    assert row['version'] == '0.2.0'
    assert row['last_seen_at'] >= first['last_seen_at']
    assert row['id'] == first['id']


def test_an_operators_disable_survives_heartbeats_that_say_enabled(cell_engine):
    services.record_heartbeat(cell_engine, _status())
    with cell_engine.begin() as conn:
        conn.execute(sa.update(services_table).values(disabled=True, disabled_reason='rack work'))
    services.record_heartbeat(cell_engine, _status(disabled=False))
    row = services.get_service(cell_engine, 'cmp1', 'cellplane-compute')
    assert (row['disabled'], row['disabled_reason']) == (True, 'rack work')


def test_same_host_different_binaries_are_different_services(cell_engine):
    services.record_heartbeat(cell_engine, _status())
    services.record_heartbeat(cell_engine, _status(binary='cellplane-conductor',
                                                          topic='conductor'))
    with cell_engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(services_table)).scalar() == 2


def test_down_is_judged_alike_in_python_and_in_sql_at_the_boundary(cell_engine):
    now = datetime.datetime(2026, 11, 26, 12, 0, 0)
    liveness = services.Liveness.at(60, now)
    seen = {'never': None, 'old': now - datetime.timedelta(seconds=61),
            'edge': now - datetime.timedelta(seconds=60),
            'fresh': now - datetime.timedelta(seconds=59)}
    for host in seen:
        services.record_heartbeat(cell_engine, _status(host=host))
    with cell_engine.begin() as conn:
        for host, last_seen_at in seen.items():
            conn.execute(sa.update(services_table).where(services_table.c.host == host)
                         .values(last_seen_at=last_seen_at))
        in_sql = set(conn.execute(sa.select(services_table.c.host).where(
            liveness.down_clause(services_table.c.last_seen_at))).scalars())
    in_python = {host for host, last_seen_at in seen.items() if liveness.is_down(last_seen_at)}
    assert in_sql == in_python == {'never', 'old'}
    assert [h for h in seen if services.is_up({'last_seen_at': seen[h]},
                                               service_down_time=60, now=now)] == ['edge', 'fresh']
    assert services.count_silent(cell_engine, 'cellplane-compute', service_down_time=60,
                                 now=now) == (2, 4)


def test_a_batch_refreshes_the_rows_it_finds_and_creates_the_others(either_cell_engine):
    cell_engine = either_cell_engine
    services.record_heartbeats(cell_engine, [_status(host='old1'), _status(host='old2')])
    with cell_engine.begin() as conn:
        conn.execute(sa.update(services_table).where(services_table.c.host == 'old2')
                     .values(disabled=True, disabled_reason='rack work'))
    services.record_heartbeats(cell_engine, [
        _status(host='old1', version='0.2.0'), _status(host='old2', version='0.3.0'),
        _status(host='new1', disabled=True, disabled_reason='new rack'),
        _status(host='old1', version='0.2.0'),   # repeated: written once
        _status(host='old1', binary='cellplane-conductor', topic='conductor')])
    rows = {(r['host'], r['binary']): r for r in services.list_all(cell_engine)}
    assert {key: (r['report_count'], r['version'], r['disabled'])
            for key, r in rows.items()} == {
        ('old1', 'cellplane-compute'): (2, '0.2.0', False),
        ('old2', 'cellplane-compute'): (2, '0.3.0', True),
        ('new1', 'cellplane-compute'): (1, '0.1.0', True),
        ('old1', 'cellplane-conductor'): (1, '0.1.0', False)}
    assert rows[('old2', 'cellplane-compute')]['disabled_reason'] == 'rack work'
    assert rows[('old1', 'cellplane-compute')]['last_seen_at'] == \
        rows[('new1', 'cellplane-compute')]['last_seen_at']


def test_one_status_for_many_hosts_writes_each_host_and_not_the_sender(either_cell_engine):
    cell_engine = either_cell_engine
    services.record_heartbeats(cell_engine, [_status(host='h1')])
    with cell_engine.begin() as conn:
        conn.execute(sa.update(services_table).where(services_table.c.host == 'h1')
                     .values(disabled=True, disabled_reason='rack work'))
    services.record_host_heartbeats(cell_engine, _status(host='agent', version='0.2.0'),
                                    ['h1', 'h2', 'h3'])
    rows = {r['host']: r for r in services.list_all(cell_engine)}
    assert {host: (r['report_count'], r['version'], r['disabled'])
            for host, r in rows.items()} == {
        'h1': (2, '0.2.0', True), 'h2': (1, '0.2.0', False), 'h3': (1, '0.2.0', False)}
    assert rows['h1']['disabled_reason'] == 'rack work'
    assert len({r['uuid'] for r in rows.values()}) == 3
    assert rows['h1']['last_seen_at'] == rows['h3']['last_seen_at']
