"""Stalled moves: the cell conductor finishes or rolls back a move whose hosts went silent.

A move goes from host to host on the cell's bus (``conductor/cell/moves.py``)
and the cell conductor hears of it again only when a host reports. A host
killed mid-move takes the step it was doing with it (its message was
acknowledged when received), and so does a cell conductor killed while it
handled a report; the migration would stay ``pre-migrating`` or
``migrating`` for good, the migration's consumer holding the source host's
allocation and the instance's the destination's.

So every ``[conductor] stalled_move_check_interval`` the cell conductor
reads the migrations in those states that made no progress (their
``updated_at``) for ``[conductor] move_timeout`` and asks both hosts what
they hold of the instance (compute API 1.7 ``guest_state``, a call with a
short timeout):

- either host still works on it (``moving``: a long copy): left alone;
- the destination runs it (another host than the source): its report was
  lost; the move is finished as the report would have finished it
  (``CellMoves.finished``: a cold move waits for confirm, a live one is
  done and its source freed);
- neither host answers: taken for a problem of the bus or of this
  conductor, not of the hosts; left for the next look, with a warning;
- otherwise, once two looks in a row found it so (the migration unchanged,
  each host saying the same), it is rolled back. One look is not enough:
  between two steps the move is a message on its way from one host to the
  other, neither working on it, and after a long copy its ``updated_at``
  is older than ``move_timeout`` already; a look that falls in that moment
  would undo a healthy move. The second look comes a check interval
  later. Rolled back, the migration ends (``error``, or
  ``failed`` for a live one) saying why, with a compare-and-set, so a
  report that arrives later is refused as stale and what it made is
  discarded; the instance is ACTIVE on its source doing nothing; the
  source allocation goes back to the instance and the destination's claim
  goes (``unclaim_move``); the destination discards whatever it made of
  the instance and its local promise; the source runs the instance again
  (``take_back``) unless it says it runs it. Casts to a dead host wait in
  its queue until it is back. An evacuation (its source is down) rolled
  back ends ``failed`` with the instance in ERROR on its source, as an
  evacuation out of alternates does (``CellMoves.give_up``): nothing is
  taken back.
"""
from __future__ import annotations

import datetime
import logging

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.context import new_context
from cellplane.db.columns import utcnow
from cellplane.objects import instance_actions, instances, migrations
from compute_agent.rpcapi import ComputeAPI
from conductor.cell.moves import MOVE_ACTIONS, CellMoves

# isort: split
import oslo_messaging as messaging

from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, Instance

LOG = logging.getLogger(__name__)

# Seconds each host is given to answer guest_state.
ASK_TIMEOUT = 5.0

MOVING = 'moving'
RUNNING = 'running'


class StalledMoves:
    """The periodic check of one cell conductor (``check`` is the task's body)."""

    def __init__(self, *, engine: Engine, moves: CellMoves, compute: ComputeAPI,
                 move_timeout: float, ask_timeout: float = ASK_TIMEOUT) -> None:
        self._engine = engine
        self._moves = moves
        self._compute = compute
        self._move_timeout = move_timeout
        self._ask_timeout = ask_timeout
        self._silent: set[str] = set()
        # migration uuid -> (its updated_at, destination's and source's
        # answers) of the moves the last look would have rolled back.
        self._suspects: dict[str, tuple] = {}

    def check(self) -> int:
        """Finish or roll back the moves without progress for move_timeout; how many ended."""
        cutoff = utcnow() - datetime.timedelta(seconds=self._move_timeout)
        try:
            with self._engine.connect() as conn:
                found = [m for m in migrations.find(
                    conn, statuses=[migrations.PRE_MIGRATING, migrations.MIGRATING])
                    if m.updated_at is not None and m.updated_at < cutoff]
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Could not look for stalled moves (%s); trying again at the next '
                        'check', str(exc).splitlines()[0])
            return 0
        ended = 0
        # A host that did not answer is not asked again in this look: many
        # moves to one dead host cost one timeout, not one each.
        self._silent = set()
        suspects, self._suspects = self._suspects, {}
        for migration in found:
            try:
                ended += self._settle(migration, suspects.get(migration.uuid))
            except Exception:  # one move must not stop the others
                LOG.exception('Settling the stalled move %s failed; trying again at the '
                              'next check', migration.uuid)
        return ended

    def _ask(self, host: str | None, instance_uuid: str) -> str | None:
        """What ``host`` holds of the instance; None if it did not answer."""
        if not host or host in self._silent:
            return None
        try:
            return self._compute.guest_state(new_context(), host, instance_uuid,
                                             timeout=self._ask_timeout)
        except messaging.MessagingException as exc:
            LOG.info('Host %s did not say what it holds of instance %s: %s', host,
                     instance_uuid, type(exc).__name__)
            self._silent.add(host)
            return None

    def _settle(self, migration: migrations.Migration, suspected: tuple | None) -> int:
        uuid = migration.instance_uuid
        source_host, dest_host = migration.source_host, migration.dest_host
        dest = self._ask(dest_host, uuid)
        source = dest if source_host == dest_host else self._ask(source_host, uuid)
        if MOVING in (source, dest):
            LOG.info('Move %s of instance %s made no progress for %g s but a host still '
                     'works on it (source %s: %s, destination %s: %s); left alone',
                     migration.uuid, uuid, self._move_timeout, source_host, source,
                     dest_host, dest)
            return 0
        if dest == RUNNING and dest_host != source_host:
            LOG.warning('Move %s of instance %s made no progress for %g s and %s runs '
                        'it: its report was lost; finishing the move', migration.uuid,
                        uuid, self._move_timeout, dest_host)
            self._moves.finished(new_context(), migration.uuid, uuid, dest_host,
                                 migration.dest_node)
            return 1
        if source is None and dest is None:
            LOG.warning('Move %s of instance %s made no progress for %g s and neither %s '
                        'nor %s answers: taken for a problem of the message bus or of this '
                        'conductor; looked at again at the next check', migration.uuid,
                        uuid, self._move_timeout, source_host, dest_host)
            return 0
        seen = (migration.updated_at, dest, source)
        if suspected != seen:
            self._suspects[migration.uuid] = seen
            LOG.info('Move %s of instance %s made no progress for %g s and no host works '
                     'on it (destination %s %s, source %s %s); rolled back at the next '
                     'check if nothing changes', migration.uuid, uuid,
                     self._move_timeout, dest_host, _says(dest), source_host,
                     _says(source))
            return 0
        reason = (f'the move made no progress for move_timeout {self._move_timeout:g} s '
                  f'(status {migration.status}): destination {dest_host} '
                  f'{_says(dest)}, source {source_host} {_says(source)}, at two checks '
                  f'in a row; rolled back to {source_host}')
        return self._roll_back(migration, reason, source_runs_it=source == RUNNING)

    def _roll_back(self, migration: migrations.Migration, reason: str, *,
                   source_runs_it: bool) -> int:
        uuid = migration.instance_uuid
        with self._engine.begin() as conn:
            try:
                # As it was read: a move its report finished while the hosts
                # were asked (finished may go to error too) is not undone.
                migrations.advance(conn, migration.uuid,
                                   migrations.ending_of(migration, False), error=reason,
                                   unchanged_since=migration.updated_at)
            except migrations.InvalidMigrationTransition:
                return 0    # it moved on meanwhile (a late report, another conductor)
            evacuation = migration.migration_type == migrations.EVACUATION
            if evacuation:
                # Its source is down: nothing to run it again (CellMoves.give_up's way).
                instances.set_error(conn, uuid, message=reason, details=reason,
                                    host=migration.source_host)
            else:
                instances.set_task_state(conn, uuid, None)
            row = instances.get_instance(conn, uuid)
            action_id = instance_actions.latest_action(conn, uuid, MOVE_ACTIONS)
            if action_id is not None:
                instance_actions.record_event(
                    conn, action_id, instance_actions.EVENT_MOVE, host=migration.dest_host,
                    node=migration.dest_node, result=instance_actions.RESULT_FAILED,
                    reason=reason)
                instance_actions.finish_action(conn, action_id, message=reason)
        LOG.warning('Move %s of instance %s rolled back: %s', migration.uuid, uuid, reason)
        # After the migration ended: a report still on its way is refused.
        self._moves.placement_undo(uuid, migration.uuid)
        ctxt = new_context()
        try:
            if migration.dest_host and migration.dest_host != migration.source_host:
                self._compute.discard_instance(ctxt, migration.dest_host, uuid)
            if row is not None and not source_runs_it and not evacuation:
                self._compute.take_back(ctxt, _instance(row), migration.payload())
        except messaging.MessagingException as exc:
            LOG.error('Could not tell the hosts of rolled-back move %s of instance %s: %s',
                      migration.uuid, uuid, exc)
        return 1


def _says(state: str | None) -> str:
    return 'did not answer' if state is None else f'holds it {state}'


def _instance(row: dict) -> Instance:
    """The Instance payload of a cell row, ACTIVE on its source."""
    return Instance(uuid=row['uuid'], project_id=row['project_id'],
                    user_id=row['user_id'] or row['project_id'],
                    flavor=Flavor.from_primitive(row['flavor']),
                    display_name=row['display_name'],
                    availability_zone=row['availability_zone'], vm_state=ACTIVE,
                    task_state=None, host=row['host'], node=row['node'],
                    image_ref=row['image_ref'])
