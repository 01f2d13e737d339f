"""What the super conductor writes into a cell database: the instances it placed there, and their removal.

The super conductor writes into a cell's database for one thing: the
instances of a boot it scheduled into that cell (``create_many``, one
transaction per cell), each with its ``create`` action and a ``schedule``
event naming the claimed host and the alternates handed along (the first
line of the instance's attempt history), and its build plan (the host,
request spec and alternates, so that the cell conductor can move the build
if that host dies: ``cellplane/objects/build_plans.py``). Everything after
that is written by the cell's own conductor. ``withdraw`` removes what
``create_many`` wrote for an instance that is not placed after all: the user
deleted it while it was being scheduled, its mapping could not be pointed at
the cell, another super conductor took its build request over, or a
resumption clears what a lost run left (``conductor/super/resume.py``). A
``CellRow`` is that write as a reservation (``cellplane.reservations``), its
undo ``withdraw``.
"""
from __future__ import annotations

import datetime
from typing import Sequence

from sqlalchemy.engine import Engine

from cellplane.db.columns import utcnow
from cellplane.objects import build_plans, instance_actions, instances
from cellplane.reservations import Reservation
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

EVENT_SCHEDULE = 'conductor_schedule_and_build_instances'


def describe_selection(host_list: Sequence[Selection]) -> str:
    """``claimed cmp1/cmp1; alternates: cmp2/cmp2, cmp3/cmp3`` - the schedule event's text."""
    chosen, alternates = host_list[0], host_list[1:]
    text = f'claimed {chosen.service_host}/{chosen.nodename}'
    if alternates:
        text += '; alternates: ' + ', '.join(
            f'{s.service_host}/{s.nodename}' for s in alternates)
    else:
        text += '; no alternates'
    return text


def create_many(engine: Engine, placed: Sequence[tuple[Instance, Sequence[Selection]]],
                request_spec: RequestSpec, *, request_id: str | None,
                scheduling_started: datetime.datetime) -> None:
    """Insert each instance, its ``create`` action, the ``schedule`` event and the build plan, atomically.

    ``placed``: the instances of one boot placed in this cell, each with its
    host list (the claimed host first). All are written or, on an error, none.
    """
    finished = utcnow()
    # A new row: its plan and action cannot exist yet (a resumed boot
    # withdrew what the lost run wrote first), so none is looked for.
    # Each table is one statement whatever the number of instances.
    with engine.begin() as conn:
        instances.create_instances(conn, [instance for instance, _ in placed])
        build_plans.record_first(conn, request_spec, placed)
        instance_actions.record_scheduled(conn, EVENT_SCHEDULE, [
            instance_actions.Scheduled(
                instance_uuid=instance.uuid, request_id=request_id,
                user_id=instance.user_id, project_id=instance.project_id,
                host=host_list[0].service_host, node=host_list[0].nodename,
                start=scheduling_started, finish=finished,
                reason=describe_selection(host_list))
            for instance, host_list in placed])


def withdraw(engine: Engine, instance_uuid: str) -> None:
    """Remove the instance ``create_many`` wrote, with its build plan, actions and events (none: nothing to do)."""
    with engine.begin() as conn:
        build_plans.forget(conn, instance_uuid)
        instance_actions.delete_for_instance(conn, instance_uuid)
        instances.delete(conn, instance_uuid)


class CellRow(Reservation):
    """An instance ``create_many`` wrote into a cell, held until its mapping points there."""

    def __init__(self, engine: Engine, instance_uuid: str, cell_name: str) -> None:
        self._engine = engine
        self.consumer = instance_uuid
        self._cell_name = cell_name

    def _release(self) -> None:
        withdraw(self._engine, self.consumer)

    def __str__(self) -> str:
        return f'the row of instance {self.consumer} in cell {self._cell_name}'
