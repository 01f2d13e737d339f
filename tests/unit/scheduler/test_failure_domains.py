"""Failure domains of compute nodes come from their Placement aggregates and the operator's levels."""
from __future__ import annotations

from scheduler.failure_domains import with_failure_domains
from tests.unit.scheduler.factories import record

LEVELS = {'agg-rack1': 'rack', 'agg-rack2': 'rack', 'agg-row1': 'row'}


def test_each_level_gets_the_aggregate_of_that_level():
    (node,), conflicts = with_failure_domains(
        [record('h1')], {'rp-h1': ['agg-rack1', 'agg-row1', 'agg-az1']}, LEVELS)
    assert node.failure_domains == {'rack': 'agg-rack1', 'row': 'agg-row1'}
    assert conflicts == []


def test_aggregates_without_a_level_are_not_failure_domains():
    (node,), _ = with_failure_domains([record('h1')], {'rp-h1': ['agg-az1']}, LEVELS)
    assert node.failure_domains == {}


def test_a_node_in_two_racks_gets_no_rack_and_is_reported():
    (node,), conflicts = with_failure_domains(
        [record('h1')], {'rp-h1': ['agg-rack1', 'agg-rack2', 'agg-row1']}, LEVELS)
    assert node.failure_domains == {'row': 'agg-row1'}
    (conflict,) = conflicts
    assert (conflict.host, conflict.level) == ('h1', 'rack')
    assert 'agg-rack1, agg-rack2' in str(conflict)


def test_a_node_placement_does_not_know_gets_no_domain():
    (node,), _ = with_failure_domains([record('h1')], {}, LEVELS)
    assert node.failure_domains == {}
