"""The cell conductor's Rescheduler: after a failed build, the next alternate that can be claimed.

Placement and the compute agents are fakes (``fakes.py``); the record the
operator reads (attempt history, build plan, fault) is the real cell
database code on a database in memory (``conftest.py``).
"""
from __future__ import annotations

import dataclasses
import datetime
import uuid as uuidlib

import pytest

from cellplane.context import RequestContext
from cellplane.db.cell.models import services as services_table
from cellplane.db.columns import utcnow
from cellplane.objects import build_plans, compute_nodes, instance_actions, instances, services
from conductor.cell.reschedule import RescheduleOutcome, Rescheduler
from placement.client import CONCURRENT_UPDATE, ClaimConflict, PlacementClientError, PlacementUnreachable
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import InstanceGroup, RequestSpec
from rpc_schemas.service_status import ServiceStatus
from tests.unit.conductor.cell.fakes import CELL, FLAVOR, FakeCompute, FakePlacement, node, selection

NO_IP = 'No more IP addresses'
DOWN_TIME = 60


class Cell:
    """A cell conductor's Rescheduler over fakes, and one instance whose build on h1 failed."""

    def __init__(self, engine, *, group: InstanceGroup | None = None,
                 service_down_time: float | None = None) -> None:
        self.engine = engine
        self.journal: list[tuple] = []
        self.placement = FakePlacement(self.journal)
        self.compute = FakeCompute(self.journal)
        self.rescheduler = Rescheduler(engine=engine, placement=self.placement,
                                       compute=self.compute, max_attempts=5,
                                       service_down_time=service_down_time)
        self.instance = Instance(uuid=str(uuidlib.uuid4()), project_id='proj',
                                 user_id='user', flavor=FLAVOR, cell_uuid=CELL)
        self.uuid = self.instance.uuid
        if group is not None:
            # As the super conductor fills it: the members include this instance.
            group = dataclasses.replace(group, members=[*group.members, self.uuid])
        self.spec = RequestSpec(flavor=FLAVOR, project_id='proj', user_id='user',
                                instance_group=group)
        # What the super conductor did: the instance, its plan on h1, h1 claimed.
        with engine.begin() as conn:
            instances.create_instance(conn, self.instance)
            build_plans.record(conn, self.instance, self.spec, [selection('h1')])
        self.placement.hold(self.uuid, 'h1')

    def build_failed(self, alternates: list[str], *, on: str = 'h1',
                     reason: str = NO_IP) -> RescheduleOutcome:
        now = datetime.datetime.now(datetime.timezone.utc)
        attempt = BuildAttempt(host=on, nodename=on, start=now, finish=now,
                               result='failed', reason=reason)
        return self.rescheduler.reschedule(RequestContext(), self.instance, self.spec,
                                           [selection(h) for h in alternates], attempt)

    def heartbeat(self, host: str, *, seconds_ago: float = 0) -> None:
        services.record_heartbeat(self.engine, ServiceStatus(
            host=host, binary=compute_nodes.COMPUTE_BINARY, topic='compute',
            report_time=datetime.datetime.now(datetime.timezone.utc), version='1'))
        if seconds_ago:
            with self.engine.begin() as conn:
                conn.execute(services_table.update().where(
                    services_table.c.host == host).values(
                    last_seen_at=utcnow() - datetime.timedelta(seconds=seconds_ago)))

    def history(self) -> list[tuple[str, str, str | None]]:
        with self.engine.connect() as conn:
            return [(e.host, e.result, e.reason)
                    for e in instance_actions.history(conn, self.uuid)]

    def row(self) -> dict:
        with self.engine.connect() as conn:
            return instances.get_instance(conn, self.uuid)

    def owner(self) -> str | None:
        with self.engine.connect() as conn:
            return build_plans.owner(conn, self.uuid).host

    def fault(self) -> dict:
        with self.engine.connect() as conn:
            (fault,) = instances.faults(conn, self.uuid)
        return fault


def test_the_next_alternate_is_claimed_and_the_build_cast_there_with_those_behind_it(cell_db):
    cell = Cell(cell_db)
    outcome = cell.build_failed(['h2', 'h3'])
    assert outcome == RescheduleOutcome(host='h2')
    assert cell.compute.casts == [('h2', ['h2', 'h3'])]
    assert cell.placement.allocations == {cell.uuid: {node('h2'): {'VCPU': 1, 'MEMORY_MB': 512}}}
    assert cell.owner() == 'h2'
    assert cell.row()['vm_state'] == 'building'
    assert cell.history() == [('h1', 'failed', NO_IP)]


def test_the_failed_hosts_claim_goes_first_then_the_alternates_claim_then_the_cast(cell_db):
    cell = Cell(cell_db)
    owner_at_cast = []
    cell.compute.during_cast = lambda: owner_at_cast.append(cell.owner())
    cell.build_failed(['h2', 'h3'])
    # The claim is the request spec's project and user; the build plan names
    # h2 before the cast, so h2's report finds itself the owner.
    assert cell.journal == [('unclaim', cell.uuid),
                            ('claim', cell.uuid, node('h2'), 'proj', 'user'),
                            ('cast', 'h2')]
    assert owner_at_cast == ['h2']


@pytest.mark.parametrize('code, why', [(None, 'refused'), (CONCURRENT_UPDATE, 'lost a race')])
def test_a_refused_claim_is_recorded_and_the_walk_moves_on(cell_db, code, why):
    cell = Cell(cell_db)
    cell.placement.refuse[node('h2')] = ClaimConflict(409, f'no room on {node("h2")}', code)
    outcome = cell.build_failed(['h2', 'h3', 'h4'])
    assert outcome == RescheduleOutcome(host='h3')
    assert cell.journal == [('unclaim', cell.uuid),
                            ('claim', cell.uuid, node('h2'), 'proj', 'user'),
                            ('claim', cell.uuid, node('h3'), 'proj', 'user'),
                            ('cast', 'h3')]
    assert cell.compute.casts == [('h3', ['h3', 'h4'])]
    assert cell.history() == [
        ('h1', 'failed', NO_IP),
        ('h2', 'failed', f'Placement {why} the claim: no room on {node("h2")}')]


def test_an_alternate_on_a_down_host_is_skipped_without_a_claim(cell_db):
    cell = Cell(cell_db, service_down_time=DOWN_TIME)
    cell.heartbeat('h2', seconds_ago=3600)
    cell.heartbeat('h3')
    outcome = cell.build_failed(['h2', 'h3'])
    assert outcome == RescheduleOutcome(host='h3')
    assert ('claim', cell.uuid, node('h2'), 'proj', 'user') not in cell.journal
    assert cell.compute.casts == [('h3', ['h3'])]
    (_, (host, result, reason)) = cell.history()
    assert (host, result) == ('h2', 'failed')
    assert reason.startswith('host h2 is down: no heartbeat since ')
    assert reason.endswith(f'(service_down_time {DOWN_TIME} s)')


def test_a_host_that_never_sent_a_heartbeat_is_not_taken_for_down(cell_db):
    cell = Cell(cell_db, service_down_time=DOWN_TIME)
    assert cell.build_failed(['h2']) == RescheduleOutcome(host='h2')


def test_running_out_of_alternates_is_error_naming_every_host_and_why(cell_db):
    cell = Cell(cell_db, service_down_time=DOWN_TIME)
    cell.placement.refuse[node('h2')] = ClaimConflict(409, 'no room on h2', None)
    cell.heartbeat('h3', seconds_ago=3600)
    outcome = cell.build_failed(['h2', 'h3'])

    assert outcome.host is None
    fault = cell.fault()
    # Every host, in the order tried, with its reason; then what ended the walk.
    lines = fault['details'].splitlines()
    assert lines[:2] == ['Hosts tried, in order:', f'h1: build failed: {NO_IP}']
    assert lines[2] == ('h2: claim refused by Placement: Placement refused the claim: '
                        'no room on h2')
    assert lines[3].startswith('h3: claim refused by Placement: host h3 is down: '
                               'no heartbeat since ')
    assert lines[4:] == [
        'Then: no alternate host left: every host the scheduler offered was tried']
    assert outcome.fault == fault['details']
    # The message (what `server show` prints) names them all in one line.
    assert fault['message'].startswith(
        f'Build failed on every host tried (h1: build failed: {NO_IP}; h2: claim refused')
    assert '; h3: claim refused by Placement: host h3 is down' in fault['message']
    assert cell.row()['vm_state'] == 'error'
    assert cell.compute.casts == []
    # No allocation left, and the build plan ended with no owner.
    assert cell.uuid not in cell.placement.allocations
    assert cell.journal[-1] == ('unclaim', cell.uuid)
    assert cell.owner() is None


def test_an_unreachable_placement_while_claiming_ends_in_error_saying_so(cell_db):
    cell = Cell(cell_db)
    cell.placement.refuse[node('h2')] = PlacementUnreachable(
        'placement unreachable after 3 attempt(s)')
    outcome = cell.build_failed(['h2', 'h3'])
    assert outcome.host is None
    assert 'Placement could not be reached to claim an alternate' in cell.fault()['message']
    assert cell.compute.casts == []


def test_an_alternate_that_would_break_the_server_group_is_skipped_with_the_reason(cell_db):
    member = str(uuidlib.uuid4())
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), name='web', policy='anti-affinity',
                          members=[member])
    cell = Cell(cell_db, group=group)
    cell.placement.hold(member, 'h2')
    outcome = cell.build_failed(['h2', 'h3'])
    assert outcome == RescheduleOutcome(host='h3')
    assert ('claim', cell.uuid, node('h2'), 'proj', 'user') not in cell.journal
    assert cell.history()[1] == (
        'h2', 'failed', f'anti-affinity at host: h2 is in the host of member(s) {member} '
                        f'of group web')


def test_members_that_cannot_be_located_leave_no_alternate_usable(cell_db):
    member = str(uuidlib.uuid4())
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), name='web', policy='anti-affinity',
                          members=[member])
    cell = Cell(cell_db, group=group)
    cell.placement.fail_reads = PlacementUnreachable('placement unreachable after 3 attempt(s)')
    outcome = cell.build_failed(['h2', 'h3'])
    assert outcome.host is None
    assert [c for c in cell.journal if c[0] == 'claim'] == []
    details = cell.fault()['details'].splitlines()
    for host, line in zip(('h2', 'h3'), details[2:4], strict=True):
        assert line.startswith(f'{host}: claim refused by Placement: anti-affinity at host: '
                               f'the members of group web could not be located in Placement')


class _UnclaimAway:
    """The cell's fake Placement, whose first removal fails as the client does when it gives up."""

    def __init__(self, placement, failure: Exception) -> None:
        self._placement = placement
        self._failure = failure
        self.failed = 0

    def __getattr__(self, name):
        return getattr(self._placement, name)

    def unclaim(self, consumer_uuid):
        if not self.failed:
            self.failed += 1
            raise self._failure
        return self._placement.unclaim(consumer_uuid)


@pytest.mark.parametrize('failure', [
    PlacementUnreachable('placement unreachable after 12 attempt(s) in 30.0 s'),
    PlacementClientError(503, 'Placement cannot reach its database'),
], ids=['unreachable', '503'])
def test_a_failed_builds_allocation_placement_cannot_remove_is_removed_once_it_answers(
        cell_db, failure):
    cell = Cell(cell_db)
    away = _UnclaimAway(cell.placement, failure)
    cell.rescheduler._placement = away
    cell.rescheduler.pending._placement = away
    outcome = cell.build_failed(['h2'])

    assert outcome.host is None
    assert 'It is removed once Placement answers' in cell.fault()['details']
    assert cell.rescheduler.pending.pending() == [cell.uuid]
    assert cell.uuid in cell.placement.allocations
    assert cell.rescheduler.pending.retry() == 1
    assert cell.uuid not in cell.placement.allocations
