"""The stalled-move check's decisions: left alone, finished, or rolled back, on what the hosts say.

The cell records are the real objects code on a cell database in memory;
Placement and the compute agents are fakes that write what they were asked
to one journal, and the compute fake answers ``guest_state`` as each test
sets it (a host missing from its answers does not answer).
"""
from __future__ import annotations

import time
import uuid as uuidlib

import oslo_messaging as messaging
import pytest

from cellplane.objects import instance_actions, instances, migrations
from conductor.cell.moves import CellMoves
from conductor.cell.stalled_moves import StalledMoves
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, Instance
from rpc_schemas.migration import LIVE_MIGRATION, MIGRATION

FLAVOR = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=0)


class _Placement:
    def __init__(self, journal: list) -> None:
        self.journal = journal

    def unclaim_move(self, instance_uuid: str, migration_uuid: str) -> bool:
        self.journal.append(('unclaim_move', instance_uuid, migration_uuid))
        return True

    def unclaim(self, consumer_uuid: str) -> bool:
        self.journal.append(('unclaim', consumer_uuid))
        return True


class _Compute:
    def __init__(self, journal: list) -> None:
        self.journal = journal
        self.states: dict[str, str] = {}     # host -> its answer; absent: silent

    def guest_state(self, ctxt, host: str, instance_uuid: str, *, timeout=None) -> str:
        self.journal.append(('ask', host))
        if host not in self.states:
            raise messaging.MessagingTimeout(f'{host} did not answer')
        return self.states[host]

    def discard_instance(self, ctxt, host: str, instance_uuid: str) -> None:
        self.journal.append(('discard', host))

    def take_back(self, ctxt, instance, migration) -> None:
        self.journal.append(('take_back', migration.source_host))


@pytest.fixture
def world(cell_db):
    journal: list = []
    compute = _Compute(journal)
    placement = _Placement(journal)
    moves = CellMoves(engine=cell_db, placement=placement, compute=compute, max_attempts=2)
    check = StalledMoves(engine=cell_db, moves=moves, compute=compute, move_timeout=0.001)
    return cell_db, journal, compute, check


def _moving(engine, *, kind: str = MIGRATION, status: str = migrations.MIGRATING,
            source: str = 'h1', dest: str = 'h2') -> migrations.Migration:
    uuid = str(uuidlib.uuid4())
    with engine.begin() as conn:
        instances.create_instance(conn, Instance(
            uuid=uuid, project_id='proj', user_id='user', flavor=FLAVOR,
            vm_state=ACTIVE, task_state='resize_migrating', host=source, node=source))
        migration = migrations.create(
            conn, uuid=str(uuidlib.uuid4()), instance_uuid=uuid, migration_type=kind,
            source_host=source, source_node=source, old_flavor=FLAVOR, new_flavor=FLAVOR)
        instance_actions.start_action(conn, uuid, instance_actions.ACTION_MIGRATE)
        migrations.advance(conn, migration.uuid, migrations.PRE_MIGRATING, dest_host=dest,
                           dest_node=dest)
        if status == migrations.MIGRATING:
            migrations.advance(conn, migration.uuid, migrations.MIGRATING)
    time.sleep(0.01)    # older than move_timeout
    return migration


def _now(engine, migration) -> tuple[migrations.Migration, dict]:
    with engine.connect() as conn:
        return (migrations.get(conn, migration.uuid),
                instances.get_instance(conn, migration.instance_uuid))


def test_a_move_a_host_still_works_on_is_left_alone(world):
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {'h1': 'moving', 'h2': 'absent'}

    assert check.check() == 0
    assert _now(engine, moving)[0].status == migrations.MIGRATING
    assert [e for e in journal if e[0] != 'ask'] == []


def test_a_destination_that_runs_the_instance_finishes_the_move(world):
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {'h1': 'stopped', 'h2': 'running'}

    assert check.check() == 1
    migration, row = _now(engine, moving)
    assert migration.status == migrations.FINISHED
    assert (row['host'], row['vm_state']) == ('h2', instances.RESIZED)
    assert [e for e in journal if e[0] != 'ask'] == []


def test_a_move_neither_host_answers_for_is_left_for_the_next_look(world):
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {}

    assert check.check() == 0
    assert _now(engine, moving)[0].status == migrations.MIGRATING
    assert [e for e in journal if e[0] != 'ask'] == []


def test_a_move_nobody_works_on_is_rolled_back_to_its_running_source(world):
    engine, journal, compute, check = world
    moving = _moving(engine, kind=LIVE_MIGRATION, status=migrations.PRE_MIGRATING)
    compute.states = {'h1': 'running', 'h2': 'absent'}

    assert check.check() == 0       # the first look only suspects it
    assert _now(engine, moving)[0].status == migrations.PRE_MIGRATING
    assert check.check() == 1
    migration, row = _now(engine, moving)
    assert migration.status == migrations.FAILED
    assert migration.error.startswith('the move made no progress for move_timeout')
    assert 'destination h2 holds it absent, source h1 holds it running' in migration.error
    assert (row['host'], row['vm_state'], row['task_state']) == ('h1', ACTIVE, None)
    # The migration ended first; then Placement; the source runs it: no take_back.
    assert [e for e in journal if e[0] != 'ask'] == [
        ('unclaim_move', moving.instance_uuid, moving.uuid), ('discard', 'h2')]


def test_moves_to_a_silent_destination_are_rolled_back_asking_it_once_a_look(world):
    engine, journal, compute, check = world
    first, second = _moving(engine), _moving(engine)
    compute.states = {'h1': 'stopped'}

    assert check.check() == 0
    assert check.check() == 2
    for moving in (first, second):
        migration, row = _now(engine, moving)
        assert migration.status == migrations.ERROR
        assert 'destination h2 did not answer' in migration.error
        assert row['host'] == 'h1'
    assert journal.count(('ask', 'h2')) == 2     # once a look
    assert journal.count(('take_back', 'h1')) == 2


def test_a_report_arriving_after_the_check_finished_the_move_is_not_discarded(world):
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {'h1': 'stopped', 'h2': 'running'}
    check.check()
    journal.clear()

    check._moves.finished(None, moving.uuid, moving.instance_uuid, 'h2', 'h2')

    assert journal == []
    assert _now(engine, moving)[0].status == migrations.FINISHED


def test_a_move_its_report_finishes_while_the_hosts_are_asked_is_not_rolled_back(world):
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {'h1': 'stopped', 'h2': 'absent'}
    assert check.check() == 0           # suspected
    asked = compute.guest_state

    def finished_meanwhile(ctxt, host, instance_uuid, *, timeout=None):
        answer = asked(ctxt, host, instance_uuid, timeout=timeout)
        if host == 'h2':     # answered before it ran it; its report lands now
            check._moves.finished(None, moving.uuid, moving.instance_uuid, 'h2', 'h2')
        return answer
    compute.guest_state = finished_meanwhile

    assert check.check() == 0
    migration, row = _now(engine, moving)
    assert migration.status == migrations.FINISHED
    assert (row['host'], row['vm_state']) == ('h2', instances.RESIZED)
    assert [e for e in journal if e[0] != 'ask'] == []


def test_a_move_caught_between_two_hosts_once_is_not_rolled_back(world):
    # The source handed over after a copy longer than move_timeout; the
    # destination has not taken the message yet: nobody works on it, once.
    engine, journal, compute, check = world
    moving = _moving(engine)
    compute.states = {'h1': 'stopped', 'h2': 'absent'}
    assert check.check() == 0
    compute.states = {'h1': 'stopped', 'h2': 'moving'}    # the message arrived
    assert check.check() == 0
    compute.states = {'h1': 'stopped', 'h2': 'absent'}    # a new look starts over
    assert check.check() == 0
    assert _now(engine, moving)[0].status == migrations.MIGRATING
    assert [e for e in journal if e[0] != 'ask'] == []


def test_a_move_that_progressed_between_two_looks_is_looked_at_anew(world):
    engine, journal, compute, check = world
    moving = _moving(engine, status=migrations.PRE_MIGRATING)
    compute.states = {'h1': 'running', 'h2': 'absent'}
    assert check.check() == 0
    with engine.begin() as conn:       # the source's hand-over arrived
        migrations.advance(conn, moving.uuid, migrations.MIGRATING)
    time.sleep(0.01)
    assert check.check() == 0          # the same answers, another migration row
    assert _now(engine, moving)[0].status == migrations.MIGRATING
    assert check.check() == 1
    assert _now(engine, moving)[0].status == migrations.ERROR
