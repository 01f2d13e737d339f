"""Rows of the fault table for moves: a daemon killed mid-move loses nothing.

One cell of three compute agents (one host each, so that each can be
killed alone; their fake driver keeps its guests in a file, as a
hypervisor keeps running its guests when its agent dies), real RabbitMQ,
PostgreSQL and daemons. A host's hand-over (the simulated copy) takes
``MOVE_SECONDS``: the window in which a daemon is killed (SIGKILL, by
pid). Each test moves two instances of one host at once, one by a cold
migration and one by a live migration, kills one daemon mid-move and
(except where the point is a dead host) starts it again; then every
instance must end ACTIVE on exactly one host: its migrations final (a
finished cold migration is confirmed first), Placement holding exactly its
own allocation on that host's provider and nothing on any migration's
consumer, no more in use in the cell than the instances hold, and its
guest running on that host and no other (compute API 1.7 ``guests``).
Every guest a host holds, stopped ones too, is read from the fake
driver's state file: a stopped copy left behind is a leak as well.
Three tests kill the super conductor in a confirm and a revert instead:
in their first step (Placement frozen, SIGSTOP, so that it is caught
after the instances' task_state is taken), while it tells the hosts (its
casts to the cell's bus swallowed by a proxy, so that it waits for their
publish confirms), and holding their messages, before its first write (the
instances' rows locked by the test, so that it is caught waiting for them).

The cell conductor's stalled-move check runs every second with
``move_timeout`` shorter than the copy (a host that says it still works
on the move is left alone); the super conductor looks for lost moves every
second. The deployment's broker is a node of this module's own
(``own_rabbit``), so the broker restarted mid-move (``stop_app``, a few
seconds, ``start_app``) touches no other test.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db import engines
from cellplane.db.api.models import cell_mappings
from cellplane.db.cell.models import instances as instance_rows
from cellplane.objects import change_stamps, instances, migrations
from cellplane.rpc.serializer import PayloadSerializer
from cellplane_cli.launcher import Launcher
from conductor.super import rpcapi as super_rpcapi
from scheduler import rpcapi as scheduler_rpcapi

# isort: split
import oslo_messaging as messaging

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.polling import eventually
from tests.support.tcp_proxy import TcpProxy

HOSTS = ('cell1-a', 'cell1-b', 'cell1-c')
MOVE_SECONDS = 5
MOVE_TIMEOUT = 2
# Above the top level's rpc_response_timeout (10 s): a live super conductor
# holds a queued move for one scheduler call at most.
MOVE_RESUME_AFTER = 12
# The instances moved about by the tests (6 on 3 hosts: some host has two).
INSTANCES = 6


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, own_rabbit, postgres_server):
    workdir = tmp_path_factory.mktemp('move-faults')
    fake = {'move_seconds': MOVE_SECONDS, 'state_dir': str(workdir / 'guests')}
    computes = [ComputePlan(host, 'cell1', fake_driver=fake) for host in HOSTS]
    deployment = Deployment(
        workdir, own_rabbit, postgres_server, computes, max_attempts=2,
        rpc_response_timeout=10,
        cell_conductor={'move_timeout': MOVE_TIMEOUT, 'stalled_move_check_interval': 1},
        super_conductor={'resume_interval': 1,
                         'move_resume_after': MOVE_RESUME_AFTER}).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        deployment.cli('server', 'create', 'vm', '--flavor', 'small', '--count',
                       str(INSTANCES), '--wait')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def cell_bus(deployment):
    """The cell's bus as the super conductor reaches it (its cell mapping's URL): through a proxy."""
    url = urlsplit(deployment.transport_url('cell1'))
    proxy = TcpProxy(url.hostname, url.port).start()
    proxied = url._replace(netloc=f'{url.netloc.rsplit("@", 1)[0]}@127.0.0.1:{proxy.port}')
    api = engines.create_engine(deployment.direct_url('api'))
    try:
        with api.begin() as conn:
            conn.execute(sa.update(cell_mappings).where(cell_mappings.c.name == 'cell1')
                         .values(transport_url=urlunsplit(proxied)))
            change_stamps.bump(conn)
    finally:
        api.dispose()
    _kill(deployment, 'super-conductor')
    deployment.launch('start', '--no-create')
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(autouse=True)
def every_daemon_running(deployment):
    """Each test begins with every daemon running: one that failed before starting again the
    daemon it killed does not fail the tests after it."""
    yield
    dead = [d.spec.name for d in Launcher(deployment.run_dir).recorded() if not d.alive()]
    if dead:
        deployment.launch('start', '--no-create')


@pytest.fixture
def engine(deployment):
    engine = deployment.cell_engine('cell1')
    yield engine
    engine.dispose()


def _guests(deployment, hosts=HOSTS) -> dict[str, set[str]]:
    """What runs on each of ``hosts``, as its compute agent says (compute API 1.7)."""
    transport = deployment.client_transport('cell1')
    try:
        found = {}
        for host in hosts:
            client = messaging.get_rpc_client(
                transport, messaging.Target(topic='compute', server=host, version='1.7'),
                serializer=PayloadSerializer(), timeout=10)
            found[host] = set(client.call(new_context(), 'guests', host=host))
        return found
    finally:
        transport.cleanup()


def _held(deployment, hosts=HOSTS) -> dict[str, set[str]]:
    """Every guest each of ``hosts`` holds, running or stopped (its fake driver's state file)."""
    found = {}
    for host in hosts:
        path = Path(deployment.workdir) / 'guests' / f'{host}.json'
        found[host] = set(json.loads(path.read_text())['instances']) if path.exists() else set()
    return found


def _pair(engine) -> tuple[str, str, str]:
    """Two ACTIVE instances of one host doing nothing (one to migrate cold, one live), and the host."""
    with engine.connect() as conn:
        rows = instances.list_all(conn)
    idle: dict[str, list[str]] = {}
    for row in rows:
        if row['vm_state'] == 'active' and row['task_state'] is None:
            idle.setdefault(row['host'], []).append(row['uuid'])
    host, uuids = max(idle.items(), key=lambda item: len(item[1]))
    assert len(uuids) >= 2, idle
    return uuids[0], uuids[1], host


class _Moves:
    """Two moves asked for at once, one cold and one live, through the CLI."""

    def __init__(self, deployment, engine, cold: str, live: str) -> None:
        self._engine = engine
        self._instances = (cold, live)
        self._pool = concurrent.futures.ThreadPoolExecutor(2)
        # Not waited for here: a CLI may exit after its move is well under way.
        self._asked = [self._pool.submit(deployment.cli, 'server', 'migrate', cold),
                       self._pool.submit(deployment.cli, 'server', 'live-migrate', live)]

    def uuids(self) -> list[str]:
        """The migrations' uuids (cold first), once both CLIs have printed them."""
        try:
            return [future.result()['id'] for future in self._asked]
        finally:
            self._pool.shutdown()

    def wait_migrating(self) -> list[migrations.Migration]:
        """Both moves in their copy (the source said it hands over); the migrations."""
        def migrating():
            with self._engine.connect() as conn:
                found = [migrations.in_progress(conn, u) for u in self._instances]
            return found if all(m is not None and m.status == migrations.MIGRATING
                                for m in found) else None
        return eventually(migrating, 'both moves migrating', seconds=EVENTUALLY_SECONDS)


def _migrations(engine, uuids) -> list[migrations.Migration]:
    with engine.connect() as conn:
        return [migrations.get(conn, uuid) for uuid in uuids]


def _all(engine, uuids, ok) -> list[migrations.Migration] | None:
    found = _migrations(engine, uuids)
    return found if all(ok(m) for m in found) else None


def _settle(deployment, engine, uuids) -> list[migrations.Migration]:
    """Wait until both moves end (a finished cold one is confirmed); the migrations."""
    ended = eventually(lambda: _all(
        engine, uuids, lambda m: m.final or m.status == migrations.FINISHED),
                       'both moves ended', seconds=EVENTUALLY_SECONDS)
    for migration in ended:
        if migration.status == migrations.FINISHED:
            deployment.cli('server', 'resize', 'confirm', migration.instance_uuid, '--wait')
    return eventually(lambda: _all(engine, uuids, lambda m: m.final),
                      'both moves final', seconds=EVENTUALLY_SECONDS)


def _picture(deployment, engine) -> tuple[dict, dict]:
    """(what the cell, Placement and the hosts hold; what they must hold once settled)."""
    with engine.connect() as conn:
        rows = instances.list_all(conn)
        moves = migrations.find(conn)
    placement = deployment.placement()
    providers = {p.name: p.uuid for p in placement.list_providers(name_prefix='cell1-')}
    guests = _guests(deployment)
    held_copies = _held(deployment)
    used = 0
    for provider in providers.values():
        resp = placement.transport.request('GET', f'/resource_providers/{provider}/usages')
        used += resp.body['usages'].get('VCPU', 0)
    held = {
        'states': {r['uuid']: (r['vm_state'], r['task_state']) for r in rows},
        'moves not final': [m.uuid for m in moves if not m.final],
        'allocations': {r['uuid']: sorted(placement.get_allocations(r['uuid']).allocations)
                        for r in rows},
        'on migrations': {m.uuid: placement.get_allocations(m.uuid).allocations
                          for m in moves
                          if placement.get_allocations(m.uuid).allocations},
        'VCPU used': used,
        'running on': {r['uuid']: [h for h in HOSTS if r['uuid'] in guests[h]]
                       for r in rows},
        'held on': {r['uuid']: [h for h in HOSTS if r['uuid'] in held_copies[h]]
                    for r in rows},
    }
    wanted = {
        'states': {r['uuid']: ('active', None) for r in rows},
        'moves not final': [],
        'allocations': {r['uuid']: [providers[r['host']]] for r in rows},
        'on migrations': {},
        'VCPU used': INSTANCES,
        'running on': {r['uuid']: [r['host']] for r in rows},
        'held on': {r['uuid']: [r['host']] for r in rows},
    }
    return held, wanted


def _assert_each_on_one_host(deployment, engine) -> dict[str, str]:
    """Every instance ACTIVE on one host, held there alone, running there alone; uuid -> host.

    Waited for: Placement follows the cell database by a moment, and a copy
    a dead host made is discarded a moment after it is back.
    """
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        held, wanted = _picture(deployment, engine)
        if held == wanted or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert held == wanted
    assert len(held['states']) == INSTANCES
    with engine.connect() as conn:
        return {r['uuid']: r['host'] for r in instances.list_all(conn)}


def _kill(deployment, daemon: str) -> None:
    os.kill(deployment.pid(daemon), signal.SIGKILL)


def test_super_conductor_killed_while_scheduling_two_moves_resumes_them(deployment, engine):
    cold, live, _ = _pair(engine)
    # The scheduler frozen: the super conductor is caught asking it.
    scheduler = deployment.pid('scheduler')
    os.kill(scheduler, signal.SIGSTOP)
    try:
        seen = len(deployment.log('super-conductor'))
        moves = _Moves(deployment, engine, cold, live)
        eventually(lambda: all(
            re.search(rf'Scheduling move \S+ of instance {u}',
                      deployment.log('super-conductor')[seen:]) for u in (cold, live)),
                   'the super conductor took both moves', seconds=EVENTUALLY_SECONDS)
        # Its log line comes before its call is published: killed between
        # the two, it would have asked nothing of the scheduler.
        eventually(lambda: deployment.queued('top', scheduler_rpcapi.TOPIC) >= 2,
                   'both moves asked of the scheduler', seconds=EVENTUALLY_SECONDS)
        _kill(deployment, 'super-conductor')
    finally:
        os.kill(scheduler, signal.SIGCONT)
    uuids = moves.uuids()
    placement = deployment.placement()
    # The scheduler answers the dead process: it claimed for nobody.
    eventually(lambda: all(
        placement.get_allocations(u).allocations for u in uuids),
               'the scheduler claimed both moves', seconds=EVENTUALLY_SECONDS)

    deployment.launch('start', '--no-create')       # the super conductor again

    ended = _settle(deployment, engine, uuids)
    assert [m.status for m in ended] == ['confirmed', 'done']
    log = deployment.log('super-conductor')
    assert [log.count(f'Resuming move {u}') for u in uuids] == [1, 1]
    hosts = _assert_each_on_one_host(deployment, engine)
    assert [hosts[cold], hosts[live]] == [m.dest_host for m in ended]


def test_cell_conductor_killed_mid_move_loses_neither_move(deployment, engine):
    cold, live, _ = _pair(engine)
    moves = _Moves(deployment, engine, cold, live)
    moves.wait_migrating()
    _kill(deployment, 'conductor-cell1')
    time.sleep(1)
    deployment.launch('start', '--no-create')       # the cell conductor again

    ended = _settle(deployment, engine, moves.uuids())
    assert [m.status for m in ended] == ['confirmed', 'done']
    hosts = _assert_each_on_one_host(deployment, engine)
    assert [hosts[cold], hosts[live]] == [m.dest_host for m in ended]


def test_source_killed_mid_copy_rolls_both_moves_back_to_it(deployment, engine):
    cold, live, source = _pair(engine)
    moves = _Moves(deployment, engine, cold, live)
    moves.wait_migrating()
    _kill(deployment, f'compute-{source}')
    time.sleep(1)
    deployment.launch('start', '--no-create')       # the source again

    ended = _settle(deployment, engine, moves.uuids())
    assert [m.status for m in ended] == ['error', 'failed']
    for migration in ended:
        assert 'made no progress for move_timeout' in migration.error, migration.error
        assert f'rolled back to {source}' in migration.error
    hosts = _assert_each_on_one_host(deployment, engine)
    assert (hosts[cold], hosts[live]) == (source, source)


def test_destination_killed_mid_copy_and_restarted_ends_each_move_on_one_host(
        deployment, engine):
    cold, live, source = _pair(engine)
    moves = _Moves(deployment, engine, cold, live)
    found = moves.wait_migrating()
    for dest in sorted({m.dest_host for m in found}):
        _kill(deployment, f'compute-{dest}')
    time.sleep(1)
    deployment.launch('start', '--no-create')       # the destination(s) again

    # Back before the copy ended, a destination finishes the move from its
    # queue; back later, the move is rolled back: either way, one host.
    ended = _settle(deployment, engine, moves.uuids())
    hosts = _assert_each_on_one_host(deployment, engine)
    for migration in ended:
        expected = (migration.dest_host if migration.status in ('confirmed', 'done')
                    else source)
        assert hosts[migration.instance_uuid] == expected, migration


def test_destination_dead_mid_copy_rolls_both_moves_back_and_its_copies_are_discarded(
        deployment, engine):
    cold, live, source = _pair(engine)
    moves = _Moves(deployment, engine, cold, live)
    found = moves.wait_migrating()
    dead = sorted({m.dest_host for m in found})
    for dest in dead:
        _kill(deployment, f'compute-{dest}')

    ended = _settle(deployment, engine, moves.uuids())
    assert [m.status for m in ended] == ['error', 'failed']
    for migration in ended:
        assert f'destination {migration.dest_host} did not answer' in migration.error
    # The source runs both again (the cold one it had stopped, taken back).
    assert {cold, live} <= _guests(deployment, [source])[source]

    # The dead host comes back with the move's last step in its queue: it
    # runs the instance, is refused and discards it.
    deployment.launch('start', '--no-create')
    hosts = _assert_each_on_one_host(deployment, engine)
    assert (hosts[cold], hosts[live]) == (source, source)
    assert 'Refused the end of move' in deployment.log('conductor-cell1')


def _placement_processes(deployment) -> list[int]:
    """Placement's main process and its HTTP workers."""
    main = deployment.pid('placement')
    try:
        with open(f'/proc/{main}/task/{main}/children') as f:
            return [main, *(int(p) for p in f.read().split())]
    except FileNotFoundError:
        return [main]


def _finished_pair(deployment, engine) -> tuple[str, str, str, list[str]]:
    """Two instances of one host migrated and waiting in VERIFY_RESIZE; theirs, the host, the migrations."""
    confirmed, reverted, source = _pair(engine)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        uuids = [m['id'] for m in pool.map(lambda u: deployment.cli('server', 'migrate', u),
                                           (confirmed, reverted))]
    def finished(migration: migrations.Migration) -> bool:
        # One that ended otherwise never will: said at once, with why.
        assert not migration.final, (migration.uuid, migration.status, migration.error)
        return migration.status == migrations.FINISHED
    eventually(lambda: _all(engine, uuids, finished), 'both moves finished',
               seconds=EVENTUALLY_SECONDS)
    return confirmed, reverted, source, uuids


def _ask_confirm_and_revert(deployment, confirmed: str, reverted: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda asked: deployment.cli('server', 'resize', *asked),
                      (('confirm', confirmed), ('revert', reverted))))


def _restarted_super_conductor_ends_both(deployment, engine, confirmed: str, reverted: str,
                                         source: str, uuids: list[str], *,
                                         resumed: bool) -> None:
    """The super conductor started again: the confirm and the revert final, each server on one host.

    ``resumed``: each was taken up by its resume, once (its log says so).
    """
    deployment.launch('start', '--no-create')
    ended = eventually(lambda: _all(engine, uuids, lambda m: m.final),
                       'both moves final', seconds=EVENTUALLY_SECONDS)
    assert [m.status for m in ended] == ['confirmed', 'reverted']
    if resumed:
        log = deployment.log('super-conductor')
        assert log.count(f'Resuming the confirm of move {uuids[0]}') == 1
        assert log.count(f'Resuming the revert of move {uuids[1]}') == 1
    hosts = _assert_each_on_one_host(deployment, engine)
    assert [hosts[confirmed], hosts[reverted]] == [ended[0].dest_host, source]


def test_super_conductor_killed_mid_confirm_and_mid_revert_finishes_both_once_back(
        deployment, engine):
    confirmed, reverted, source, uuids = _finished_pair(deployment, engine)
    # Placement frozen: the super conductor is caught in the confirm's and
    # the revert's first step, the instances' task_state taken over.
    frozen = _placement_processes(deployment)
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        _ask_confirm_and_revert(deployment, confirmed, reverted)
        # The API wrote the task_states before it cast (its CLIs returned once
        # the broker had both messages): the super conductor holds them once
        # they have left its queue (acknowledged as received). Killed before,
        # it would take them again at once on its restart, not by its resume.
        eventually(lambda: deployment.queued('top', super_rpcapi.TOPIC) == 0,
                   'the super conductor took the confirm and the revert',
                   seconds=EVENTUALLY_SECONDS)

        def ending():
            with engine.connect() as conn:
                states = [instances.get_instance(conn, u)['task_state']
                          for u in (confirmed, reverted)]
            return states == ['resize_confirming', 'resize_reverting']
        eventually(ending, 'the confirm and the revert begun', seconds=EVENTUALLY_SECONDS)
        _kill(deployment, 'super-conductor')
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)

    _restarted_super_conductor_ends_both(deployment, engine, confirmed, reverted, source,
                                         uuids, resumed=True)


def test_super_conductor_killed_while_it_tells_the_hosts_of_a_confirm_and_a_revert_leaves_no_copy(
        deployment, engine, cell_bus):
    confirmed, reverted, source, uuids = _finished_pair(deployment, engine)
    # The super conductor's casts to the hosts go nowhere: each waits for a
    # publish confirm, so it is caught telling the hosts (the source to
    # destroy its copy, the destination its own) after Placement's step.
    cell_bus.swallow(b'discard_instance', b'take_back')
    try:
        _ask_confirm_and_revert(deployment, confirmed, reverted)
        eventually(lambda: all(u.encode() in cell_bus.swallowed() for u in (confirmed, reverted)),
                   'the confirm and the revert telling the hosts', seconds=EVENTUALLY_SECONDS)
        _kill(deployment, 'super-conductor')
    finally:
        cell_bus.stop()         # what it swallowed is never delivered
        cell_bus.start()

    # No stopped copy on the confirmed move's source, no copy of the
    # reverted one on its destination, the reverted one running again.
    _restarted_super_conductor_ends_both(deployment, engine, confirmed, reverted, source,
                                         uuids, resumed=False)


def _waiting_for_the_lock(conn) -> int:
    """How many other sessions wait for a lock this one holds.

    Read from ``pg_locks``, which is live: ``pg_stat_activity`` would be read
    once per transaction, and this one stays open.
    """
    return conn.execute(sa.text(
        'SELECT count(DISTINCT pid) FROM pg_locks '
        'WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))')).scalar()


def test_super_conductor_killed_holding_a_confirm_and_a_revert_finishes_both_once_back(
        deployment, engine):
    confirmed, reverted, source, uuids = _finished_pair(deployment, engine)
    conductor = deployment.pid('super-conductor')
    # Frozen, it takes the two messages only once the instances' rows are
    # locked here: it is caught, each message taken (acknowledged), before
    # its first write of either instance.
    os.kill(conductor, signal.SIGSTOP)
    try:
        _ask_confirm_and_revert(deployment, confirmed, reverted)
        with engine.connect() as lock:
            lock.execute(sa.select(instance_rows.c.id).where(
                instance_rows.c.uuid.in_([confirmed, reverted])).with_for_update())
            os.kill(conductor, signal.SIGCONT)
            eventually(lambda: _waiting_for_the_lock(lock) >= 2,
                       'the super conductor waiting for both instances', seconds=EVENTUALLY_SECONDS)
            _kill(deployment, 'super-conductor')
            lock.rollback()
    finally:
        try:
            os.kill(conductor, signal.SIGCONT)
        except ProcessLookupError:
            pass

    _restarted_super_conductor_ends_both(deployment, engine, confirmed, reverted, source,
                                         uuids, resumed=True)


def test_broker_restarted_mid_move_ends_each_move_on_one_host(deployment, engine,
                                                              own_rabbit):
    cold, live, source = _pair(engine)
    moves = _Moves(deployment, engine, cold, live)
    moves.wait_migrating()
    # Down longer than a copy: the sources' reports meet a broker away.
    own_rabbit.restart_app(down_seconds=MOVE_SECONDS + 2)

    # Each move is finished (the reports waited out the restart) or rolled
    # back by the stalled-move check: either way, one host.
    ended = _settle(deployment, engine, moves.uuids())
    hosts = _assert_each_on_one_host(deployment, engine)
    for migration in ended:
        expected = (migration.dest_host if migration.status in ('confirmed', 'done')
                    else source)
        assert hosts[migration.instance_uuid] == expected, migration
