"""The scheduler's endpoint logs an expected failure as one line and answers it, no traceback."""
from __future__ import annotations

import logging

import pytest

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
import oslo_messaging as messaging

from placement.client import PlacementUnreachable
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler.manager import SchedulerManager


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
