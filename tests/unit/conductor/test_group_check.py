"""The group check of a reschedule: would this alternate break the server group's hard policy?

``breaks_group`` asks Placement (a fake here, ``fakes.py``) where the other
members' allocations are and which aggregates their nodes are in; it
reads no database, so these tests need none.
"""
from __future__ import annotations

import pytest

from conductor.cell.group_check import breaks_group
from placement.client import PlacementClientError, PlacementUnreachable
from rpc_schemas.request_spec import InstanceGroup, RequestSpec
from tests.unit.conductor.fakes import FLAVOR, FakePlacement, node, selection

SELF = '00000000-0000-4000-8000-000000000000'
M1 = '00000000-0000-4000-8000-000000000001'
M2 = '00000000-0000-4000-8000-000000000002'
RACK_A = '00000000-0000-4000-8000-0000000000aa'
RACK_B = '00000000-0000-4000-8000-0000000000bb'
RACKS = {'h1': RACK_A, 'h2': RACK_A, 'h3': RACK_A, 'h4': RACK_B}


def _placement(members_on: dict[str, str]) -> FakePlacement:
    """Placement with the hosts in RACKS and each member's allocation on its host."""
    placement = FakePlacement()
    for host, rack in RACKS.items():
        placement.aggregates[node(host)] = {rack}
    for member, host in members_on.items():
        placement.hold(member, host)
    return placement


def _spec(policy: str = 'anti-affinity', *, level: str | None = 'rack',
          max_per_domain: int = 1, members=(M1, M2)) -> RequestSpec:
    return RequestSpec(flavor=FLAVOR, project_id='proj', user_id='user',
                       instance_group=InstanceGroup(
                           uuid='g1', name='web', policy=policy, level=level,
                           max_per_domain=max_per_domain, members=[*members, SELF],
                           domains=[RACK_A, RACK_B]))


def _check(placement, spec, host):
    return breaks_group(placement, spec, SELF, selection(host))


# -- max_per_domain ------------------------------------------------------------

def test_max_per_domain_two_lets_a_second_member_into_a_rack():
    placement = _placement({M1: 'h1'})
    assert _check(placement, _spec(max_per_domain=2), 'h2') is None
    # The same rack at the default of one member per rack is refused.
    assert _check(placement, _spec(), 'h2') == (
        f'anti-affinity at rack: h2 is in the rack of member(s) {M1} of group web')


def test_max_per_domain_two_refuses_a_third_member_in_a_rack():
    placement = _placement({M1: 'h1', M2: 'h3'})
    assert _check(placement, _spec(max_per_domain=2), 'h2') == (
        f'anti-affinity at rack: h2 is in the rack of member(s) {M1}, {M2} of group web')
    assert _check(placement, _spec(max_per_domain=2), 'h4') is None


def test_max_per_domain_at_the_host_level_counts_members_per_host():
    spec = _spec(level=None, max_per_domain=2)
    assert _check(_placement({M1: 'h2'}), spec, 'h2') is None
    assert _check(_placement({M1: 'h2', M2: 'h2'}), spec, 'h2') == (
        f'anti-affinity at host: h2 is in the host of member(s) {M1}, {M2} of group web')


def test_the_rescheduled_instance_is_not_counted_against_itself():
    placement = _placement({M1: 'h1'})
    placement.hold(SELF, 'h2')   # its old claim, were it still there
    assert _check(placement, _spec(max_per_domain=2), 'h2') is None


# -- members that cannot be located --------------------------------------------

UNREADABLE = [PlacementUnreachable('placement unreachable after 3 attempt(s)'),
              PlacementClientError(500, 'the database is gone')]


@pytest.mark.parametrize('failure', UNREADABLE, ids=['unreachable', 'error'])
@pytest.mark.parametrize('policy', ['anti-affinity', 'affinity'])
def test_a_member_that_cannot_be_located_in_placement_refuses_the_alternate(policy, failure):
    placement = _placement({M1: 'h1'})
    placement.fail_reads = failure
    assert _check(placement, _spec(policy), 'h4') == (
        f'{policy} at rack: the members of group web could not be located in Placement '
        f'({failure}), so the alternate cannot be shown to keep the policy')


def test_a_member_with_no_allocation_holds_no_domain():
    # M2 has no allocation (failed, deleted, between two hosts).
    placement = _placement({M1: 'h4'})
    assert _check(placement, _spec(), 'h2') is None
