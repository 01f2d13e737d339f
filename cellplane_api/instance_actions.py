"""An instance's actions as the API role shows them: each build attempt an event, with its host and reason.

The history of an instance that reached a cell is its cell's
(``cellplane.objects.instance_actions``: the ``create`` action, the super
conductor's scheduling event, one event per build and per refused claim
of an alternate). An instance that failed before reaching a cell
(NoValidHost) has no cell to keep it: its history is made here from its
build request (when it failed, and why) and the scheduling record of its
request (the request id), as Nova shows the one event its cell0 keeps.
An instance still being scheduled has no action yet, as in Nova. Such an
action's request id is the record's once the scheduler's writer has stored
it (milliseconds after the failure); before that, or when the scheduler
keeps its records elsewhere, it is ``req-<instance uuid>``, and the action
keeps answering to that id (``Action.answers_to``).

Results are Nova's words (``Success``, ``Error``); an action with a failed
event carries a message: the instance's fault when it ended in ERROR,
else ``Error``, as Nova sets it.
"""
from __future__ import annotations

import dataclasses
import datetime

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import gather
from cellplane.objects import (
    build_requests,
    instance_actions,
    instance_mappings,
    scheduling_records,
)
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT

SUCCESS = 'Success'
ERROR = 'Error'
_RESULTS = {instance_actions.RESULT_OK: SUCCESS, instance_actions.RESULT_FAILED: ERROR}
# The event Nova's conductor records when scheduling fails (and the one
# cellplane's super conductor records when it succeeds).
EVENT_SCHEDULE = 'conductor_schedule_and_build_instances'


class CellUnreadable(Exception):
    """The instance's cell database did not answer; the message names the cell."""


@dataclasses.dataclass(frozen=True)
class Event:
    event: str
    host: str | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    result: str | None          # Success, Error, or None while it runs
    reason: str | None          # why it failed; None unless it did


@dataclasses.dataclass(frozen=True)
class Action:
    action: str
    instance_uuid: str
    request_id: str
    user_id: str | None
    project_id: str | None
    start_time: datetime.datetime | None
    message: str | None
    updated_at: datetime.datetime | None
    events: tuple[Event, ...]

    def answers_to(self, request_id: str) -> bool:
        """Is this the action of ``request_id`` (its own, or the id it had before it was known)?"""
        return request_id in (self.request_id, _stand_in_id(self.instance_uuid))


def _stand_in_id(instance_uuid: str) -> str:
    # The request id of an action whose request's id is not known.
    return f'req-{instance_uuid}'


def _event(attempt: instance_actions.AttemptEvent) -> Event:
    result = _RESULTS.get(attempt.result, attempt.result)
    return Event(event=attempt.event, host=attempt.host, start_time=attempt.start,
                 finish_time=attempt.finish, result=result,
                 reason=(attempt.reason or 'no reason given') if result == ERROR else None)


def from_record(record: instance_actions.ActionRecord) -> Action:
    """The action as the API shows it, from its cell's record."""
    events = tuple(_event(e) for e in record.events)
    message = record.message or (ERROR if any(e.result == ERROR for e in events) else None)
    return Action(action=record.action, instance_uuid=record.instance_uuid,
                  # An action written without a request id still needs one to be shown by.
                  request_id=record.request_id or _stand_in_id(record.instance_uuid),
                  user_id=record.user_id, project_id=record.project_id,
                  start_time=record.start_time, message=message,
                  updated_at=record.updated_at, events=events)


def _from_build_request(api_engine: Engine, request: build_requests.BuildRequest) -> Action:
    instance = request.instance
    record = next(iter(scheduling_records.find(api_engine, instance_uuid=instance.uuid,
                                               last=1)), {})
    failed_at = request.failed_at or request.created_at
    message = (request.fault_message or '').split('\n', 1)[0] or ERROR
    return Action(action=instance_actions.ACTION_CREATE, instance_uuid=instance.uuid,
                  request_id=record.get('request_id') or _stand_in_id(instance.uuid),
                  user_id=instance.user_id, project_id=instance.project_id,
                  start_time=request.created_at, message=message, updated_at=failed_at,
                  events=(Event(event=EVENT_SCHEDULE, host=None,
                                start_time=request.created_at, finish_time=failed_at,
                                result=ERROR, reason=request.fault_message),))


def actions_of(api_engine: Engine, cells: CellDatabases, instance_uuid: str, *,
               cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> list[Action]:
    """The instance's actions, newest first (as Nova sorts them); [] for an unknown instance."""
    for _ in range(2):
        mapped = instance_mappings.cell_uuids_of(api_engine, [instance_uuid])
        if not mapped:
            return []
        cell_uuid = mapped[0][1]
        if cell_uuid is not None:
            return _read_cell(cells, cell_uuid, instance_uuid, cell_timeout)
        pending = build_requests.get_many(api_engine, [instance_uuid]).get(instance_uuid)
        if pending is not None:
            return [_from_build_request(api_engine, pending)] if pending.failed else []
        # Placed in a cell between the two reads (or deleted): read its mapping again.
    return []


def _read_cell(cells: CellDatabases, cell_uuid: str, instance_uuid: str,
               cell_timeout: float) -> list[Action]:
    def read():
        with cells.engine(cell_uuid).connect() as conn:
            return instance_actions.actions(conn, instance_uuid)
    answer = gather({cell_uuid: read}, cell_timeout)[cell_uuid]
    if isinstance(answer, BaseException):
        name = cells.mapping(cell_uuid).name
        raise CellUnreadable(f'Cell {name} is not responding and hence instance info is '
                             f'not available.') from answer
    return [from_record(record) for record in reversed(answer)]
