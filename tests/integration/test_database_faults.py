"""PostgreSQL going away under running daemons, mid-stream of boots: Placement's database, then a cell's.

Two cells of one hollow agent (4 hosts each), real daemons, real RabbitMQ
and PostgreSQL. Placement's and cell1's databases are reached through TCP
proxies of this test's own (``Deployment(proxied_databases=...)``):
stopping one drops every connection to that database and refuses new
ones, as a PostgreSQL restart or a network cut does, without touching the
PostgreSQL server other tests share.

- Placement's database away for a few seconds (a restart): every boot ends
  ACTIVE, Placement answered 503 (never 500), one allocation per instance,
  none left over, and Placement logged the outage once, with no traceback.
- cell1's database away for longer than the super conductor's write retry:
  boots go on in cell2 meanwhile (the scheduler stops offering cell1, the
  super conductor asks again without it), the builds cell1 held when it
  went away end ACTIVE once it is back, nothing is left in BUILD, no
  allocation leaks, and every daemon logged the outage in one line.
- Every connection to the deployment's databases killed at once
  (``pg_terminate_backend``), twice, mid-stream: every boot ends ACTIVE,
  Placement never answers 500, no allocation leaks, no daemon logs a
  traceback (their pools replace the dead connections).

Issue 27, item 3.
"""
from __future__ import annotations

import threading
import time

import pytest
import requests
import sqlalchemy as sa

from placement.client import PlacementClient
from tests.support.boot_stream import BootStream
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment

RESTART_SECONDS = 3
CUT_SECONDS = 8
# The super conductor writes into a cell again for this long before it moves the boot.
CELL_WRITE_RETRY_SECONDS = 3


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=4,
                            fake_driver={'build_seconds': 0.5}),
                ComputePlan('cell2-a', 'cell2', hosted_hosts=4,
                            fake_driver={'build_seconds': 0.5})]
    deployment = Deployment(
        tmp_path_factory.mktemp('dbfaults'), rabbit_server, postgres_server, computes,
        proxied_databases=('placement', 'cell1'),
        super_conductor={'cell_write_retry_timeout': CELL_WRITE_RETRY_SECONDS}).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _create(deployment, name: str, count: int) -> list[str]:
    return [s['id'] for s in deployment.cli('server', 'create', name, '--flavor', 'small',
                                            '--count', str(count))]


def _settled(deployment, uuids: list[str]) -> dict[str, dict]:
    """Each server of ``uuids`` once none is in BUILD (within EVENTUALLY_SECONDS)."""
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        listed = {s['id']: s for s in deployment.cli('server', 'list')}
        mine = {uuid: listed.get(uuid) for uuid in uuids}
        if all(s is not None and s['status'] != 'BUILD' for s in mine.values()):
            return mine
        stuck = sorted(u for u, s in mine.items() if s is None or s['status'] == 'BUILD')
        assert time.monotonic() < deadline, f'still building: {stuck}'
        time.sleep(0.5)


def _no_allocation_leaked(deployment, active: list[str]) -> None:
    held = deployment.placement().allocations_by_consumer()
    assert set(held) == set(active), (sorted(set(held) - set(active)),
                                      sorted(set(active) - set(held)))
    assert all(len(providers) == 1 for providers in held.values()), held


def _outage_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if 'is not answering' in line]


class _Prober:
    """GET /resource_providers from Placement every 0.1 s, without the client's retries: the statuses seen."""

    def __init__(self, deployment) -> None:
        self.answers: list[tuple[int, str | None]] = []
        self._stop = threading.Event()
        session = requests.Session()
        url = f'{deployment.placement_url}/resource_providers'

        def probe() -> None:
            while not self._stop.wait(0.1):
                try:
                    resp = session.get(url, headers={'x-auth-token': 'admin'}, timeout=10)
                except requests.RequestException:
                    continue
                self.answers.append((resp.status_code, resp.headers.get('Retry-After')))
        self._thread = threading.Thread(target=probe, name='probe', daemon=True)
        self._thread.start()

    def stop(self) -> list[tuple[int, str | None]]:
        self._stop.set()
        self._thread.join(30)
        return self.answers


def test_a_placement_database_restart_fails_no_boot(deployment):
    booter = BootStream(deployment, 'pgp', count=3)
    booter.wait_for(1)
    proxy = deployment.database_proxies['placement']
    prober = _Prober(deployment)
    proxy.stop()
    # A request sent while the database is away is answered once it is back,
    # by a client retrying as the daemons' do ([placement] retry_timeout).
    client = PlacementClient.over_http(deployment.placement_url, attempts=None,
                                       retry_timeout=30)
    answered: list = []
    waited = threading.Thread(target=lambda: answered.append(client.list_providers()))
    waited.start()
    time.sleep(RESTART_SECONDS)
    proxy.start()
    waited.join(EVENTUALLY_SECONDS)
    booter.wait_for(booter.requests + 1)
    uuids = booter.stop()
    answers = prober.stop()

    assert len(answered) == 1 and len(answered[0]) == 8
    statuses = {status for status, _ in answers}
    assert 503 in statuses and 500 not in statuses, answers
    assert {after for status, after in answers if status == 503} == {'2'}, answers
    servers = _settled(deployment, uuids)
    assert {s['status'] for s in servers.values()} == {'ACTIVE'}, servers
    _no_allocation_leaked(deployment, uuids)
    log = deployment.log('placement')
    assert 'status: 500' not in log
    assert 'Traceback' not in log
    # One outage line per worker process that met it (each has its own pool).
    assert 1 <= len(_outage_lines(log)) <= deployment.placement_workers, _outage_lines(log)


def _placed(deployment, uuids: list[str]) -> dict[str, str | None]:
    """uuid -> the cell each of ``uuids`` is placed in, once every one is placed or failed."""
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        listed = {s['id']: s for s in deployment.cli('server', 'list')}
        mine = {uuid: listed.get(uuid) for uuid in uuids}
        if all(s is not None and (s['cell'] or s['status'] == 'ERROR') for s in mine.values()):
            return {uuid: s['cell'] for uuid, s in mine.items()}
        assert time.monotonic() < deadline, f'never placed: {mine}'
        time.sleep(0.3)


def test_a_cell_database_cut_moves_boots_to_the_other_cell_and_loses_nothing(deployment):
    before = {s['id'] for s in deployment.cli('server', 'list')}
    # Builds in flight when cell1's database goes away.
    in_flight = _create(deployment, 'inflight', 4)
    proxy = deployment.database_proxies['cell1']
    proxy.stop()
    cut_at = time.monotonic()
    booter = BootStream(deployment, 'cut')
    try:
        # Asked and placed while cell1's database is away: in cell2.
        asked = _create(deployment, 'away', 3)
        placed = _placed(deployment, asked)
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - cut_at)))
    finally:
        proxy.start()
    during = booter.stop()
    assert placed == dict.fromkeys(asked, 'cell2')

    servers = _settled(deployment, in_flight + asked + during)
    not_active = {u: s for u, s in servers.items() if s['status'] != 'ACTIVE'}
    for uuid in not_active:
        fault = deployment.cli('server', 'show', uuid)['fault'] or ''
        assert 'database' in fault, (uuid, fault)
    assert not not_active, not_active
    everything = [s['id'] for s in deployment.cli('server', 'list')
                  if s['status'] == 'ACTIVE']
    assert set(everything) >= before | set(in_flight) | set(asked) | set(during)
    _no_allocation_leaked(deployment, everything)

    scheduler = deployment.log('scheduler')
    assert scheduler.count('node(s) are not offered until it is read again') == 1
    assert 'is read again; its nodes are offered again' in scheduler
    cell1_db = deployment.databases['cell1'].rsplit('/', 1)[1]
    for daemon in ('scheduler', 'super-conductor', 'conductor-cell1'):
        log = deployment.log(daemon)
        assert 'Traceback' not in log, daemon
        cell1_outages = [line for line in _outage_lines(log) if cell1_db in line]
        assert len(cell1_outages) <= 1, (daemon, cell1_outages)
    assert any(cell1_db in line for line in _outage_lines(deployment.log('conductor-cell1')))


def _terminate_every_backend(deployment) -> int:
    """pg_terminate_backend of every connection to this deployment's databases; how many."""
    names = [sa.engine.make_url(deployment.direct_url(name)).database
             for name in deployment.databases]
    admin = sa.create_engine(deployment.direct_url('api'), isolation_level='AUTOCOMMIT',
                             poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            return conn.execute(sa.text(
                'SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity '
                'WHERE datname = ANY(:names) AND pid <> pg_backend_pid()'),
                {'names': names}).scalar_one()
    finally:
        admin.dispose()


def test_every_connection_killed_mid_stream_fails_no_boot(deployment):
    booter = BootStream(deployment, 'pgkill', count=2)
    prober = _Prober(deployment)
    killed = []
    for _ in range(2):
        booter.wait_for(booter.requests + 2)
        killed.append(_terminate_every_backend(deployment))
    booter.wait_for(booter.requests + 2)
    uuids = booter.stop()
    answers = prober.stop()

    # Every daemon holds pooled connections: each round killed some.
    assert all(count > 0 for count in killed), killed
    assert 500 not in {status for status, _ in answers}, answers
    servers = _settled(deployment, uuids)
    assert {s['status'] for s in servers.values()} == {'ACTIVE'}, {
        u: (s['status'], deployment.cli('server', 'show', u)['fault'])
        for u, s in servers.items() if s['status'] != 'ACTIVE'}
    everything = [s['id'] for s in deployment.cli('server', 'list') if s['status'] == 'ACTIVE']
    _no_allocation_leaked(deployment, everything)
    for daemon in ('placement', 'scheduler', 'super-conductor', 'conductor-cell1',
                   'conductor-cell2'):
        assert 'Traceback' not in deployment.log(daemon), daemon
    assert 'status: 500' not in deployment.log('placement')
