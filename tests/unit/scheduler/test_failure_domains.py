"""Failure domains of compute nodes are those of their host, as the API database keeps them."""
from __future__ import annotations

from scheduler.failure_domains import with_failure_domains
from tests.unit.scheduler.factories import record

DOMAINS = {'h1': {'rack': 'agg-rack1', 'row': 'agg-row1'}, 'h2': {'row': 'agg-row1'}}


def test_each_node_gets_the_domains_of_its_host():
    h1, h2 = with_failure_domains([record('h1'), record('h2')], DOMAINS)
    assert h1.failure_domains == {'rack': 'agg-rack1', 'row': 'agg-row1'}
    assert h2.failure_domains == {'row': 'agg-row1'}


def test_a_host_in_no_domain_gets_none_and_loses_those_it_had():
    (node,) = with_failure_domains([record('h3')], DOMAINS)
    assert node.failure_domains == {}
    (had,) = with_failure_domains([record('h1')], DOMAINS)
    (node,) = with_failure_domains([had], {})
    assert node.failure_domains == {}


def test_a_record_already_right_is_kept_as_it_is():
    (first,) = with_failure_domains([record('h1')], DOMAINS)
    (again,) = with_failure_domains([first], DOMAINS)
    assert again is first
