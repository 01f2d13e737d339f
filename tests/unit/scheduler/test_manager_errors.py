"""The scheduler's endpoint logs an expected failure as one line and answers it, no traceback."""
from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
import oslo_messaging as messaging

from placement.client import PlacementUnreachable
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler.destinations import SchedulingResult
from scheduler.manager import SchedulerManager
from scheduler.trace import SchedulingTrace


class _PlacementAway:
    def select_destinations(self, spec, uuids, num_alternates, migration_uuid=None):
        raise PlacementUnreachable('placement at http://p:8778 unreachable after 9 '
                                   'attempt(s) in 30.0 s: Connection refused')


def test_placement_unreachable_is_an_expected_answer_logged_in_one_line(caplog):
    caplog.set_level(logging.INFO, logger='scheduler.manager')
    manager = SchedulerManager(_PlacementAway())
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1, root_gb=0),
                       project_id='p', user_id='u')
    # The decorator marks it expected: the RPC layer answers it without logging.
    with pytest.raises(messaging.ExpectedException) as raised:
        manager.select_destinations(None, spec, ['i-1'], 2)
    assert isinstance(raised.value.exc_info[1], PlacementUnreachable)
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert record.getMessage() == (
        'select_destinations for i-1 failed: placement at http://p:8778 unreachable '
        'after 9 attempt(s) in 30.0 s: Connection refused')


class _DatabaseAwayOnce:
    """A selector whose first run meets its database away (it unwound what it claimed)."""

    def __init__(self) -> None:
        self.runs = 0

    def select_destinations(self, spec, uuids, num_alternates, migration_uuid=None):
        self.runs += 1
        if self.runs == 1:
            raise sa.exc.OperationalError(
                'SELECT', {}, Exception('server closed the connection unexpectedly'))
        return SchedulingResult(selections=[], trace=SchedulingTrace(project_id='p', num_instances=1,
                                                                   num_alternates=2))


def test_a_run_that_meets_its_database_away_is_run_again_within_the_bound():
    selector = _DatabaseAwayOnce()
    manager = SchedulerManager(selector, database_retry_timeout=10)
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1, root_gb=0),
                       project_id='p', user_id='u')
    assert manager.select_destinations(None, spec, ['i-1'], 2) == []
    assert selector.runs == 2


def test_without_a_bound_the_database_error_is_answered():
    manager = SchedulerManager(_DatabaseAwayOnce())
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1, root_gb=0),
                       project_id='p', user_id='u')
    with pytest.raises(sa.exc.OperationalError):
        manager.select_destinations(None, spec, ['i-1'], 2)
