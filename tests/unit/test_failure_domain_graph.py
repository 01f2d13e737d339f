"""The failure-domain graph, in memory: containment, every host of a domain, and the refusals with their data."""
from __future__ import annotations

import pytest

from cellplane.objects.failure_domain_graph import (
    DomainGraph,
    DomainInUse,
    DomainNotFound,
    FailureDomainError,
    HostConflict,
    LevelsInUse,
    hosts_changed,
)

RACK1, RACK2, ROW_A, ROW_B = 1, 2, 3, 4


def _graph() -> DomainGraph:
    """row:A is made of rack:r1 (h1) and has h3 of its own; rack:r2 (h2) is in no row; row:B is empty."""
    return DomainGraph(
        levels=['rack', 'row'],
        domains={RACK1: ('u-r1', 'rack', 'r1'), RACK2: ('u-r2', 'rack', 'r2'),
                 ROW_A: ('u-A', 'row', 'A'), ROW_B: ('u-B', 'row', 'B')},
        own={RACK1: {'h1'}, RACK2: {'h2'}, ROW_A: {'h3'}},
        contents={ROW_A: {RACK1}})


def test_a_domain_has_its_own_hosts_and_those_of_what_it_contains():
    graph = _graph()
    assert graph.effective()[ROW_A] == {'h1', 'h3'}
    row_a = graph.view(ROW_A, graph.effective())
    assert (row_a.hosts, row_a.own_hosts, row_a.contains) == (('h1', 'h3'), ('h3',),
                                                              ('rack:r1',))
    assert graph.view(RACK1, graph.effective()).contained_in == ('row:A',)
    assert graph.via(ROW_A, 'h1') == ' (through rack:r1)'
    assert graph.via(ROW_A, 'h3') == ''


def test_a_domain_is_found_by_label_or_uuid_and_a_missing_one_is_named():
    graph = _graph()
    assert graph.find('rack:r2') == graph.find('u-r2') == RACK2
    with pytest.raises(DomainNotFound) as missing:
        graph.find('rack:nope')
    assert missing.value.ref == 'rack:nope'


def test_the_host_rows_follow_containment_and_a_host_in_two_domains_of_a_level_is_refused():
    graph = _graph()
    rows = graph.host_rows()
    assert rows[('row', 'h1')] == (ROW_A, False)
    assert rows[('row', 'h3')] == (ROW_A, True)
    graph.contents[ROW_B] = {RACK2}
    assert hosts_changed(rows, graph.host_rows()) == ('h2',)
    graph.own[ROW_B] = {'h1'}
    with pytest.raises(HostConflict, match=r'host h1 would be in row:A \(through rack:r1\) '
                                           r'and in row:B; a host is in at most one row'):
        graph.host_rows()


def test_a_domain_in_use_is_refused_with_what_holds_it():
    graph = _graph()
    with pytest.raises(DomainInUse) as contained:
        graph.refuse_in_use(RACK1)
    assert (contained.value.label, contained.value.containers) == ('rack:r1', ('row:A',))
    with pytest.raises(DomainInUse) as owning:
        graph.refuse_in_use(RACK2)
    assert (owning.value.containers, owning.value.own_hosts) == ((), ('h2',))
    graph.refuse_in_use(ROW_B)     # nothing holds it


def test_only_smaller_domains_not_in_another_of_the_level_can_be_contained():
    graph = _graph()
    assert graph.checked_member('row', 'row:B', 'rack:r2') == RACK2
    with pytest.raises(FailureDomainError, match='a rack is made of smaller levels only'):
        graph.checked_member('rack', 'rack:r9', 'row:A')
    with pytest.raises(FailureDomainError, match='rack:r1 is already in row:A'):
        graph.checked_member('row', 'row:B', 'rack:r1')


def test_levels_must_keep_every_used_level_in_an_order_containment_fits():
    graph = _graph()
    graph.check_levels_fit(['rack', 'row', 'room'])
    with pytest.raises(LevelsInUse, match='row have domains'):
        graph.check_levels_fit(['rack'])
    with pytest.raises(LevelsInUse, match='does not put rack below row'):
        graph.check_levels_fit(['row', 'rack'])
