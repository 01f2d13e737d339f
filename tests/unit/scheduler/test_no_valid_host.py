"""NoValidHost's text: the claims rolled back (summarised when many), the group's refusal, each member's own fault."""
from __future__ import annotations

from cellplane.objects.server_group_places import Member
from placement.client import Candidates
from scheduler import no_valid_host
from scheduler.errors import NoValidHost
from scheduler.trace import InstanceTrace, SchedulingTrace
from tests.unit.scheduler.server_group.test_places import FakeBook, _group, _read

RACKS = FakeBook([]).domain_names('rack')


def _error(rolled_back: list[str]) -> str:
    trace = SchedulingTrace(request_id='req-1', project_id='p', num_instances=len(rolled_back) + 1,
                            num_alternates=2)
    trace.candidate_hosts = 2
    trace.rolled_back = rolled_back
    instance = InstanceTrace(instance_uuid='last')
    return str(no_valid_host.for_instance(trace, instance, len(rolled_back),
                                          len(rolled_back) + 1))


def test_a_few_rolled_back_claims_are_all_named():
    text = _error(['u1', 'u2', 'u3', 'u4'])
    assert text.endswith('claims already made for this request were removed (u1, u2, u3, u4)')


def test_many_rolled_back_claims_are_counted_not_listed():
    uuids = [f'{i:036d}' for i in range(120)]
    text = _error(uuids)
    assert text.endswith(f'were removed (120 instances: {uuids[0]}, {uuids[1]}, {uuids[2]} '
                         'and 117 more; the scheduling record lists them all)')
    assert len(text) < 600


def test_the_group_refusal_names_every_domain_when_all_are_full_and_the_count_asked():
    book = FakeBook([Member(u, d, 0) for u, d in (('a', 'r1'), ('b', 'r2'), ('c', 'r3'))])
    assert no_valid_host.group_refusal(_read(_group(), book, {}), 1, RACKS) == (
        'anti-affinity at rack: group web has members in every rack '
        '(rack-1, rack-2, rack-3); 1 member asked for beside 3 placed, 3 racks')
    book = FakeBook([Member('a', 'r1', 0)])
    assert no_valid_host.group_refusal(_read(_group(), book, {}), 2, RACKS) == (
        'anti-affinity at rack: group web has members in rack rack-1, and no host of '
        'another rack could take it; 2 members asked for beside 1 placed')


def test_the_group_refusal_counts_the_places_the_failed_request_took():
    # Three members asked for, three racks: the first two took r1 and r2,
    # the third found r3 full (another scheduler) and nothing else.
    places = _read(_group(), FakeBook([], full=['r3']), {}, mine=('x', 'y', 'z'))
    assert places.reserve('x', 'h1') and places.reserve('y', 'h3') and not places.reserve('z', 'h4')
    assert no_valid_host.group_refusal(places, 3, RACKS) == (
        'anti-affinity at rack: group web has members in every rack '
        '(rack-1, rack-2, rack-3); 3 members asked for, 3 racks')


def test_the_group_refusal_of_affinity_names_where_the_members_are():
    book = FakeBook([Member('a', 'r2', 0)])
    assert no_valid_host.group_refusal(_read(_group('affinity'), book, {}), 1, RACKS) == (
        'affinity at rack: group web keeps its members in rack rack-2; '
        '1 member asked for beside 1 placed')


def test_each_member_of_a_failed_multi_create_is_named_in_its_own_fault():
    error = NoValidHost('No valid host for instance u3 (3 of 3); anti-affinity at row: '
                        'group db has members in every row (A, B); 3 members asked for, 2 rows')
    assert error.for_member('u3', 3, 3) == str(error)
    first = error.for_member('u1', 1, 3)
    assert first.startswith('No valid host for instance u1 (1 of 3): not placed, as the '
                            'request places all its instances or none, and its instance '
                            '3 of 3 found no host; anti-affinity at row')
    assert 'u3' not in first


class _NothingOutsideTheRacks:
    """Placement whose every provider is in a forbidden rack; it has DISK_GB to spare."""

    def allocation_candidates(self, query):
        if query.forbidden_aggregates:
            return Candidates(allocation_requests=(), provider_summaries={})
        return Candidates(
            allocation_requests=({'allocations': {'rp': {'resources': dict(query.resources)}}},),
            provider_summaries={})


def test_an_aggregate_asked_alone_is_not_blamed_on_the_resource_it_is_probed_with():
    from scheduler.candidates_query import CandidatesQuery
    query = CandidatesQuery(resources={'DISK_GB': 1, 'VCPU': 1},
                            forbidden_aggregates=('r1', 'r2'))
    short, limits = no_valid_host.diagnose_shortage(_NothingOutsideTheRacks(), query)
    assert short == ['member_of !in:r1,r2']
    assert limits == []


def test_the_domains_that_empty_the_candidates_are_found_by_asking_without_them():
    from scheduler.candidates_query import CandidatesQuery
    without = CandidatesQuery(resources={'DISK_GB': 1}, limit=1)
    found = no_valid_host.emptied_by(_NothingOutsideTheRacks(), without, [
        ('server group web', no_valid_host.OUTSIDE, ['r2', 'r1']),
        ('same_domain hint', no_valid_host.INSIDE, [])])
    assert found == [('server group web', '!in', ('r1', 'r2'))]
