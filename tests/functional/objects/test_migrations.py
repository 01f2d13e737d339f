"""Migration records in a migrated cell database: created queued, moved only along the state machine."""
from __future__ import annotations

import uuid as uuidlib

import pytest

from cellplane.db import engines, migrate
from cellplane.objects import migrations
from rpc_schemas.flavor import Flavor

SMALL = Flavor(name='small', vcpus=1, memory_mb=512)
LARGE = Flavor(name='large', vcpus=2, memory_mb=1024)


@pytest.fixture
def cell(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/cell.sqlite')
    migrate.sync('cell', engine)
    yield engine
    engine.dispose()


def _new(conn, migration_type=migrations.RESIZE, instance_uuid=None):
    return migrations.create(
        conn, uuid=str(uuidlib.uuid4()), instance_uuid=instance_uuid or str(uuidlib.uuid4()),
        migration_type=migration_type, source_host='h1', source_node='h1',
        old_flavor=SMALL, new_flavor=LARGE, request_id='req-1')


def test_a_resize_goes_queued_to_confirmed_recording_its_destination(cell):
    with cell.begin() as conn:
        made = _new(conn)
        assert (made.status, made.dest_host, made.final) == (migrations.QUEUED, None, False)
        assert (made.old_flavor, made.new_flavor) == (SMALL, LARGE)
        migrations.advance(conn, made.uuid, migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        # The next alternate: pre-migrating again, to another destination.
        again = migrations.advance(conn, made.uuid, migrations.PRE_MIGRATING,
                                   dest_host='h3', dest_node='h3')
        assert (again.dest_host, again.dest_node) == ('h3', 'h3')
        migrations.advance(conn, made.uuid, migrations.MIGRATING)
        finished = migrations.advance(conn, made.uuid, migrations.FINISHED)
        assert finished.finished_at is None and migrations.in_progress(
            conn, made.instance_uuid) == finished
        confirmed = migrations.advance(conn, made.uuid, migrations.CONFIRMED)
    assert confirmed.final and confirmed.finished_at is not None
    assert confirmed.dest_host == 'h3'
    with cell.connect() as conn:
        assert migrations.in_progress(conn, made.instance_uuid) is None


@pytest.mark.parametrize('path, refused', [
    ([], migrations.FINISHED),                       # queued cannot skip to finished
    ([migrations.PRE_MIGRATING], migrations.CONFIRMED),
    ([migrations.ERROR], migrations.PRE_MIGRATING),  # a final status is the end
    ([migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.FINISHED,
      migrations.REVERTED], migrations.CONFIRMED),
])
def test_a_transition_the_state_machine_lacks_is_refused_and_changes_nothing(
        cell, path, refused):
    with cell.begin() as conn:
        made = _new(conn)
        for status in path:
            migrations.advance(conn, made.uuid, status)
        before = migrations.get(conn, made.uuid)
        with pytest.raises(migrations.InvalidMigrationTransition) as caught:
            migrations.advance(conn, made.uuid, refused, error='x')
        assert migrations.get(conn, made.uuid) == before
    assert f'cannot become {refused}' in str(caught.value)


def test_an_error_names_why_and_ends_the_migration(cell):
    with cell.begin() as conn:
        made = _new(conn, migrations.MIGRATION)
        migrations.advance(conn, made.uuid, migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        ended = migrations.advance(conn, made.uuid, migrations.ERROR,
                                   error='h2: move failed: disk full')
    assert (ended.status, ended.error, ended.final) == (
        migrations.ERROR, 'h2: move failed: disk full', True)


def test_unknown_type_status_and_uuid_are_refused(cell):
    with cell.begin() as conn:
        with pytest.raises(ValueError, match='unknown migration type'):
            _new(conn, 'teleport')
        with pytest.raises(ValueError, match='unknown migration status'):
            migrations.advance(conn, _new(conn).uuid, 'paused')
        with pytest.raises(migrations.MigrationNotFound):
            migrations.advance(conn, str(uuidlib.uuid4()), migrations.ERROR)


def test_find_filters_by_instance_and_status(cell):
    with cell.begin() as conn:
        first = _new(conn, instance_uuid='i' * 36)
        second = _new(conn, instance_uuid='i' * 36)
        _new(conn)
        migrations.advance(conn, first.uuid, migrations.ERROR)
        assert [m.uuid for m in migrations.find(conn, instance_uuid='i' * 36)] == \
            [first.uuid, second.uuid]
        assert [m.uuid for m in migrations.find(conn, statuses=[migrations.ERROR])] == \
            [first.uuid]


def test_an_evacuation_done_awaits_its_source_until_completed_and_nothing_after(cell):
    with cell.begin() as conn:
        evacuation = _new(conn, migrations.EVACUATION)
        resize = _new(conn)
        for status in (migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.DONE):
            done = migrations.advance(conn, evacuation.uuid, status, dest_host='h2',
                                      dest_node='h2')
        assert done.final and migrations.awaits_cleanup(done)
        assert migrations.in_progress(conn, evacuation.instance_uuid) is None
        assert [m.uuid for m in migrations.awaiting_cleanup(conn, ['h1'])] == [
            evacuation.uuid]
        assert migrations.awaiting_cleanup(conn, ['h2']) == []
        completed = migrations.advance(conn, evacuation.uuid, migrations.COMPLETED)
        assert not migrations.awaits_cleanup(completed)
        assert migrations.awaiting_cleanup(conn, ['h1']) == []
        with pytest.raises(migrations.InvalidMigrationTransition):
            migrations.advance(conn, evacuation.uuid, migrations.DONE)
        # Only a done migration may be completed.
        with pytest.raises(migrations.InvalidMigrationTransition):
            migrations.advance(conn, resize.uuid, migrations.COMPLETED)


def test_a_queued_migration_is_taken_once_first_by_its_creation_time_then_by_what_was_read(
        cell):
    with cell.begin() as conn:
        migration = _new(conn)
        assert migration.updated_at == migration.created_at
        # Its message's super conductor: the migration never taken.
        assert migrations.take(conn, migration.uuid, updated_at=migration.created_at)
        # The same message again (redelivered): taken already.
        assert not migrations.take(conn, migration.uuid, updated_at=migration.created_at)
        taken = migrations.get(conn, migration.uuid)
        # A resumption that read it before another one took it over loses.
        assert migrations.take(conn, migration.uuid, updated_at=taken.updated_at)
        assert not migrations.take(conn, migration.uuid, updated_at=taken.updated_at)
        migrations.advance(conn, migration.uuid, migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        current = migrations.get(conn, migration.uuid)
        # No longer queued: nobody takes it.
        assert not migrations.take(conn, migration.uuid, updated_at=current.updated_at)


def test_progress_of_reads_how_far_each_migration_is_in_one_statement(cell):
    with cell.begin() as conn:
        made, other = _new(conn), _new(conn)
        migrations.advance(conn, made.uuid, migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        migrations.advance(conn, other.uuid, migrations.ERROR, error='no room')
    with cell.connect() as conn:
        found = migrations.progress_of(conn, [made.uuid, other.uuid, str(uuidlib.uuid4())])
        assert migrations.progress_of(conn, []) == {}
    assert found == {
        made.uuid: migrations.Progress(made.uuid, migrations.PRE_MIGRATING, 'h2', None, False),
        other.uuid: migrations.Progress(other.uuid, migrations.ERROR, None, 'no room', False)}


def test_a_hand_over_goes_migrating_only_from_pre_migrating_to_its_destination(cell):
    with cell.begin() as conn:
        made = _new(conn)
        # Still queued: no destination handed over to yet.
        assert migrations.copying(conn, made.uuid, 'h2') is None
        migrations.advance(conn, made.uuid, migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        # A destination the move has left (or never had) is refused.
        assert migrations.copying(conn, made.uuid, 'h3') is None
        assert migrations.get(conn, made.uuid).status == migrations.PRE_MIGRATING
        copying = migrations.copying(conn, made.uuid, 'h2')
        assert (copying.status, copying.dest_host) == (migrations.MIGRATING, 'h2')
        assert copying.updated_at >= made.updated_at
        # Told twice: the second finds it migrating already.
        assert migrations.copying(conn, made.uuid, 'h2') is None
        assert migrations.get(conn, made.uuid) == copying
