"""Real daemons talk over RabbitMQ with typed payloads, and only within their own cell."""
from __future__ import annotations

import time

import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db import engines
from cellplane.db.cell.models import services
from cellplane.heartbeat import software_version
from compute_agent.rpcapi import ComputeAPI
from conductor.cell.rpcapi import CellConductorAPI
from conductor.super.rpcapi import SuperConductorAPI
from rpc_schemas.ping import Pong
from tests.integration.daemons import EVENTUALLY_SECONDS, cell_conductor_config, compute_config


def _service_rows(db_url: str) -> dict[tuple[str, str], dict]:
    engine = engines.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(services)).mappings().all()
        return {(r['host'], r['binary']): dict(r) for r in rows}
    finally:
        engine.dispose()


def _wait_for_reports(db_url: str, host: str, binary: str, count: int) -> dict:
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        row = _service_rows(db_url).get((host, binary))
        if row and row['report_count'] >= count:
            return row
        assert time.monotonic() < deadline, (
            f'{binary} on {host} did not report {count} heartbeats; row: {row}')
        time.sleep(0.2)


def test_compute_heartbeat_cast_reaches_its_cell_conductor_db_as_typed_status(
        daemons, transport_url_factory, cell_db_factory):
    url = transport_url_factory('rpc')
    db_url = cell_db_factory('rpc')
    daemons.conductor('cond1', cell_conductor_config(url, db_url)).start().wait_until_serving()
    compute = daemons.compute('cmp1', compute_config(url, host='cmp1')).start()
    compute.wait_until_serving()

    row = _wait_for_reports(db_url, 'cmp1', 'cellplane-compute', 2)
    assert row['topic'] == 'compute'
    assert row['version'] == software_version()
    assert row['disabled'] is False
    assert row['last_seen_at'] is not None


def test_compute_agent_calls_its_conductor_and_gets_a_typed_pong_before_serving(
        daemons, transport_url_factory, sqlite_cell_db):
    url = transport_url_factory('call')
    # The agent starts first: it must wait for the conductor's answer.
    compute = daemons.compute('cmp1', compute_config(url, host='cmp1')).start()
    daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db)).start()
    compute.wait_until_serving()
    [line] = compute.wait_for_log(r'Cell conductor \S+ on \S+ answered')
    assert 'Cell conductor cellplane-conductor on cond1 answered' in line


def test_test_process_calls_each_daemon_by_topic_and_by_host(
        daemons, transport_url_factory, sqlite_cell_db, client_transport_factory):
    url = transport_url_factory('ping')
    daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db)).start()
    compute = daemons.compute('cmp7', compute_config(url, host='cmp7')).start()
    compute.wait_until_serving()
    transport = client_transport_factory(url)

    ctxt = new_context()
    pong = CellConductorAPI(transport, timeout=30).ping(ctxt, 'to the conductor')
    assert pong == Pong(message='to the conductor', host='cond1',
                        binary='cellplane-conductor', held_seconds=0.0)
    pong = ComputeAPI(transport, timeout=30).ping(ctxt, 'to cmp7', server='cmp7')
    assert (pong.host, pong.binary, pong.message) == ('cmp7', 'cellplane-compute', 'to cmp7')
    # The caller's request id is on the lines the daemon logs for its request.
    CellConductorAPI(transport, timeout=30).ping(ctxt, 'held', hold_seconds=0.1)
    [line] = daemons.started[0].wait_for_log(r"Ping 'held': holding")
    assert ctxt.request_id in line


def test_two_cells_on_two_vhosts_never_see_each_others_heartbeats(
        daemons, transport_url_factory, cell_db_factory):
    cells = {}
    for cell, compute_host in (('cell1', 'cmp-a'), ('cell2', 'cmp-b')):
        url = transport_url_factory(cell)
        db_url = cell_db_factory(cell)
        daemons.conductor(f'cond-{cell}', cell_conductor_config(
            url, db_url, host=f'cond-{cell}', cell=cell)).start()
        daemons.compute(compute_host, compute_config(url, host=compute_host, cell=cell)).start()
        cells[cell] = (db_url, compute_host)

    for db_url, compute_host in cells.values():
        _wait_for_reports(db_url, compute_host, 'cellplane-compute', 3)

    cell1_rows = _service_rows(cells['cell1'][0])
    cell2_rows = _service_rows(cells['cell2'][0])
    assert set(cell1_rows) == {('cmp-a', 'cellplane-compute'),
                               ('cond-cell1', 'cellplane-conductor')}
    assert set(cell2_rows) == {('cmp-b', 'cellplane-compute'),
                               ('cond-cell2', 'cellplane-conductor')}


def test_super_conductor_may_hold_the_api_database_and_answers_ping(
        daemons, transport_url_factory, client_transport_factory, tmp_path):
    url = transport_url_factory('super')
    conductor = daemons.conductor('super', {
        'DEFAULT': {'transport_url': url, 'host': 'super1'},
        'conductor': {'role': 'super'},
        'api_database': {'connection': f'sqlite:///{tmp_path}/api.sqlite'},
        # Only read when an instance's claim must be removed; nothing listens here.
        'placement': {'endpoint_url': 'http://127.0.0.1:9', 'connect_attempts': 1},
    })
    conductor.start().wait_until_serving()
    pong = SuperConductorAPI(client_transport_factory(url), timeout=30).ping(new_context(), 'top')
    assert (pong.host, pong.binary) == ('super1', 'cellplane-conductor')
