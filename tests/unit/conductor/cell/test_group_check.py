"""The cell conductor's group check: would an alternate break the group's hard policy?

Placement is a fake that answers where each instance's allocations are and
which aggregates a provider is in; the rule is ``cellplane.server_group_policy``.
"""
from __future__ import annotations

import pytest

from conductor.cell.group_check import breaks_group
from placement.client import ConsumerAllocations, PlacementClientError, PlacementUnreachable
from rpc_schemas.request_spec import InstanceGroup, RequestSpec
from rpc_schemas.selection import Selection
from tests.unit.scheduler.factories import flavor

RACK = {'n1': 'r1', 'n2': 'r1', 'n3': 'r2', 'n4': 'r3'}


class FakePlacement:
    def __init__(self, nodes, unreachable=False, *, fail_with=None):
        self._nodes = nodes           # instance -> its compute node provider
        # What every read raises, if anything.
        self._failure = fail_with or (
            PlacementUnreachable('connection refused') if unreachable else None)

    def get_allocations(self, instance_uuid):
        if self._failure is not None:
            raise self._failure
        node = self._nodes.get(instance_uuid)
        allocations = {} if node is None else {node: {'VCPU': 1}}
        return ConsumerAllocations(allocations, None, None, None)

    def get_aggregates(self, node):
        if self._failure is not None:
            raise self._failure
        return frozenset({RACK[node]} if node in RACK else ()), 1


def _spec(policy='anti-affinity', level='rack', members=(), domains=(), **kw):
    return RequestSpec(flavor=flavor(), project_id='p', user_id='u',
                       instance_group=InstanceGroup(
                           uuid='g', name='web', policy=policy, level=level,
                           members=list(members), domains=list(domains), **kw))


def _alternate(node):
    return Selection(service_host=f'host-{node}', nodename=node, compute_node_uuid=node,
                     cell_uuid='c', allocation_request={'allocations': {}},
                     allocation_request_version='1.36')


def test_anti_affinity_refuses_a_member_s_rack_and_allows_another():
    spec = _spec(members=['me', 'a'], domains=['r1', 'r2', 'r3'])
    placement = FakePlacement({'a': 'n1'})
    assert breaks_group(placement, spec, 'me', _alternate('n2')) == (
        'anti-affinity at rack: host-n2 is in the rack of member(s) a of group web')
    assert breaks_group(placement, spec, 'me', _alternate('n3')) is None


def test_anti_affinity_admits_max_per_domain_members_in_one_rack():
    spec = _spec(members=['me', 'a', 'b'], domains=['r1', 'r2'], max_per_domain=2)
    assert breaks_group(FakePlacement({'a': 'n1'}), spec, 'me', _alternate('n2')) is None
    full = FakePlacement({'a': 'n1', 'b': 'n2'})
    assert breaks_group(full, spec, 'me', _alternate('n2')) == (
        'anti-affinity at rack: host-n2 is in the rack of member(s) a, b of group web')
    # The third goes to another rack.
    assert breaks_group(full, spec, 'me', _alternate('n3')) is None


def test_anti_affinity_admits_max_per_domain_members_on_one_host():
    spec = _spec(level=None, members=['me', 'a', 'b'], max_per_domain=2)
    assert breaks_group(FakePlacement({'a': 'n1'}), spec, 'me', _alternate('n1')) is None
    assert breaks_group(FakePlacement({'a': 'n1', 'b': 'n1'}), spec, 'me',
                        _alternate('n1')) == (
        'anti-affinity at host: host-n1 is in the host of member(s) a, b of group web')


def test_the_rescheduled_instance_does_not_count_against_itself():
    # Its old allocation, were it still there, is not a member's.
    spec = _spec(members=['me', 'a'], domains=['r1', 'r2'], max_per_domain=2)
    placement = FakePlacement({'a': 'n1', 'me': 'n2'})
    assert breaks_group(placement, spec, 'me', _alternate('n2')) is None


def test_an_anti_affinity_member_with_no_allocation_holds_no_rack():
    # b failed, was deleted, or is between two hosts.
    spec = _spec(members=['me', 'a', 'b'], domains=['r1', 'r2'])
    assert breaks_group(FakePlacement({'a': 'n3'}), spec, 'me', _alternate('n1')) is None


def test_the_request_s_own_other_instances_count_as_members():
    # The super conductor sends every member, the multi-create's own
    # included: instance 'me' rescheduled must avoid its sibling's host.
    spec = _spec(level=None, members=['me', 'sibling'])
    placement = FakePlacement({'sibling': 'n1'})
    assert breaks_group(placement, spec, 'me', _alternate('n1')) == (
        'anti-affinity at host: host-n1 is in the host of member(s) sibling of group web')
    assert breaks_group(placement, spec, 'me', _alternate('n2')) is None


def test_affinity_keeps_the_members_rack_and_falls_back_to_the_places_held():
    spec = _spec(policy='affinity', members=['me', 'a'], domains=['r1'])
    assert breaks_group(FakePlacement({'a': 'n1'}), spec, 'me', _alternate('n2')) is None
    assert breaks_group(FakePlacement({'a': 'n1'}), spec, 'me', _alternate('n3')) == (
        'affinity at rack: host-n3 is outside the rack of the members of group web')
    # a has no allocation now: the rack it held when the scheduler chose.
    assert 'outside the rack' in breaks_group(FakePlacement({}), spec, 'me', _alternate('n3'))
    assert breaks_group(FakePlacement({}), spec, 'me', _alternate('n1')) is None


def test_level_host_and_no_level_are_the_same():
    for level in (None, 'host'):
        spec = _spec(level=level, members=['me', 'a'])
        assert 'at host' in breaks_group(FakePlacement({'a': 'n1'}), spec, 'me',
                                         _alternate('n1'))


def test_members_that_cannot_be_located_refuse_the_alternate_saying_why():
    spec = _spec(members=['me', 'a'])
    assert breaks_group(FakePlacement({}, unreachable=True), spec, 'me', _alternate('n3')) == (
        'anti-affinity at rack: the members of group web could not be located in Placement '
        '(connection refused), so the alternate cannot be shown to keep the policy')


@pytest.mark.parametrize('failure', [PlacementUnreachable('connection refused'),
                                     PlacementClientError(500, 'the database is gone')],
                         ids=['unreachable', 'error'])
@pytest.mark.parametrize('policy', ['anti-affinity', 'affinity'])
def test_a_placement_error_refuses_the_alternate_under_either_policy(policy, failure):
    spec = _spec(policy=policy, members=['me', 'a'], domains=['r1'])
    placement = FakePlacement({'a': 'n1'}, fail_with=failure)
    assert breaks_group(placement, spec, 'me', _alternate('n1')) == (
        f'{policy} at rack: the members of group web could not be located in Placement '
        f'({failure}), so the alternate cannot be shown to keep the policy')


def test_soft_groups_and_lone_members_are_never_refused():
    soft = _spec(members=['me', 'a'], soft=True)
    assert breaks_group(FakePlacement({'a': 'n1'}), soft, 'me', _alternate('n1')) is None
    alone = _spec(members=['me'])
    assert breaks_group(FakePlacement({}, unreachable=True), alone, 'me',
                        _alternate('n1')) is None
