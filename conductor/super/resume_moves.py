"""Resuming the moves a dead super conductor left queued, or that no super conductor picked up.

A super conductor's ``migrate_server`` message is acknowledged when it is
received, so one killed while it asks the scheduler, or before it hands the
move to the cell, takes the message along: the migration stays ``queued``
in its cell, and the scheduler may have claimed for it (the migration's
consumer holding the source host's allocation, the instance's the
destination's). The super conductor takes each migration it schedules
(``migrations.take``: its ``updated_at`` moves on), so a queued migration
that nobody took or changed for ``[conductor] move_resume_after`` seconds
is lost. ``MoveResumption.run`` (at start and every ``[conductor]
resume_interval``) takes each such migration over with the same
compare-and-set (of several super conductors, one wins), moves back what
the lost run may have claimed (``unclaim_move``: the instance holds its
source again, the migration nothing; nothing to do if it never claimed)
and schedules the move again: the outage is a delay. A cell that cannot
be read is looked at again at the next run; a Placement that cannot take
the undo, ``move_resume_after`` later.

The same look finishes the confirms and reverts a dead super conductor
began: a ``finished`` migration whose instance has stayed
``resize_confirming`` or ``resize_reverting`` (its ``updated_at``) for
``move_resume_after`` is taken over with a compare-and-set on the
instance (``instances.retake_task``) and its confirm or revert is done
again from the start (``SuperMoves.resume_ending``: Placement's step is a
no-op when the dead run had done it, and the hosts' steps are told
before the cell's write, so a kill after the write leaves nothing to do).
The API role sets the task_state before it casts the confirm or revert, so
a super conductor killed holding the message (acknowledged when received)
leaves the instance in it too, and the ask is finished here, not lost.

``move_resume_after`` must exceed the longest a live super conductor holds
a queued move: its one ``select_destinations`` call (``rpc_response_timeout``)
and its cast to the cell; and a confirm or revert: its wait in the queue,
one Placement call, its casts to the hosts and a cell write.
"""
from __future__ import annotations

import datetime
import logging

from cellplane.cells.databases import CellDatabases
from cellplane.context import new_context
from cellplane.db.columns import utcnow
from cellplane.objects import instances, migrations
from conductor.super.moves import MoveRefused, SuperMoves
from placement.client import PlacementClient, PlacementClientError, PlacementUnreachable

LOG = logging.getLogger(__name__)

# The task states of a confirm or revert under way, and what each is.
ENDING = {instances.RESIZE_CONFIRMING: 'confirm', instances.RESIZE_REVERTING: 'revert'}


class MoveResumption:
    """Finds the queued moves nobody schedules and schedules them again through ``moves``."""

    def __init__(self, moves: SuperMoves, *, cells: CellDatabases,
                 placement: PlacementClient, resume_after: float) -> None:
        self._moves = moves
        self._placement = placement
        self._cells = cells
        self._resume_after = resume_after

    def run(self) -> int:
        """Schedule again the moves left queued longer than ``move_resume_after``, and finish
        the confirms and reverts left as long; how many."""
        cutoff = utcnow() - datetime.timedelta(seconds=self._resume_after)
        resumed = 0
        for mapping in self._cells.reload():
            resumed += self._endings(mapping, cutoff)
            engine = self._cells.engine(mapping.uuid)
            try:
                with engine.connect() as conn:
                    lost = [m for m in migrations.find(conn, statuses=[migrations.QUEUED])
                            if m.updated_at is not None and m.updated_at < cutoff]
            except Exception as exc:  # noqa: BLE001 - one cell's outage must not stop the others
                LOG.warning('Could not look for lost moves in cell %s: %s', mapping.name,
                            str(exc).splitlines()[0])
                continue
            for migration in lost:
                try:
                    with engine.begin() as conn:
                        taken = migrations.take(conn, migration.uuid,
                                                updated_at=migration.updated_at)
                    if not taken:
                        continue    # another super conductor resumed it, or it moved on
                    LOG.warning('Resuming move %s of instance %s: queued and untouched '
                                'for more than move_resume_after (%g s); the super '
                                'conductor that had it is taken for dead',
                                migration.uuid, migration.instance_uuid,
                                self._resume_after)
                    try:
                        # What the lost run's scheduler may have claimed.
                        self._placement.unclaim_move(migration.instance_uuid,
                                                     migration.uuid)
                    except (PlacementUnreachable, PlacementClientError) as exc:
                        # Taken, so looked at again move_resume_after from now.
                        LOG.warning('Not resuming move %s yet: what its lost run may '
                                    'have claimed could not be moved back (%s)',
                                    migration.uuid, exc)
                        continue
                    self._moves.migrate(new_context(), mapping.uuid, migration.uuid,
                                        resumed=True)
                    resumed += 1
                except Exception:  # one move must not stop the others
                    LOG.exception('Resuming move %s failed; trying again at the next look',
                                  migration.uuid)
        return resumed

    def _endings(self, mapping, cutoff: datetime.datetime) -> int:
        """Finish the confirms and reverts of ``mapping``'s cell begun before ``cutoff``; how many."""
        engine = self._cells.engine(mapping.uuid)
        try:
            with engine.connect() as conn:
                finished = migrations.find(conn, statuses=[migrations.FINISHED])
                rows = {r['uuid']: r for r in instances.get_many(
                    conn, [m.instance_uuid for m in finished])} if finished else {}
        except Exception as exc:  # noqa: BLE001 - one cell's outage must not stop the others
            LOG.warning('Could not look for lost confirms and reverts in cell %s: %s',
                        mapping.name, str(exc).splitlines()[0])
            return 0
        resumed = 0
        for migration in finished:
            row = rows.get(migration.instance_uuid)
            if row is None or row['task_state'] not in ENDING \
                    or row['updated_at'] is None or row['updated_at'] >= cutoff:
                continue
            try:
                with engine.begin() as conn:
                    taken = instances.retake_task(conn, row['uuid'],
                                                  task_state=row['task_state'],
                                                  updated_at=row['updated_at'])
                if not taken:
                    continue    # another super conductor took it, or it ended
                LOG.warning('Resuming the %s of move %s of instance %s: %s and untouched '
                            'for more than move_resume_after (%g s); the super conductor '
                            'that had it is taken for dead', ENDING[row['task_state']],
                            migration.uuid, row['uuid'], row['task_state'],
                            self._resume_after)
                self._moves.resume_ending(new_context(), mapping.uuid, migration.uuid,
                                          row['task_state'])
                resumed += 1
            except MoveRefused as exc:
                LOG.warning('Not finishing move %s yet: %s', migration.uuid, exc)
            except Exception:  # one move must not stop the others
                LOG.exception('Resuming the end of move %s failed; trying again at the '
                              'next look', migration.uuid)
        return resumed
