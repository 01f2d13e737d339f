"""The domain hints as the Placement query needs them, and the instances every hint names."""
from __future__ import annotations

from scheduler.hints.domains import hinted_domains, hinted_instances
from tests.unit.scheduler.factories import spec

RACK = {'h1': 'r1', 'h2': 'r2'}


def _rack_of(host, level):
    return RACK.get(host) if level == 'rack' else None


def test_every_instance_the_hints_name_is_listed_once():
    hints = spec(scheduler_hints={'same_host': ['a'], 'different_host': ['b', 'a'],
                                  'same_domain': ['rack:c'], 'different_domain': ['row:d']})
    assert hinted_instances(hints) == ['a', 'b', 'c', 'd']


def test_same_domain_asks_member_of_and_different_domain_forbids():
    hints = spec(scheduler_hints={'same_domain': ['rack:a'], 'different_domain': ['rack:b']})
    assert hinted_domains(hints, {'a': 'h1', 'b': 'h2'}, _rack_of) == ([['r1']], ['r2'], '')


def test_a_same_domain_instance_found_nowhere_is_a_problem_a_different_one_is_not():
    lost = spec(scheduler_hints={'same_domain': ['rack:a']})
    assert hinted_domains(lost, {}, _rack_of) == (
        [], [], 'same_domain=rack:a: instance a runs on no host Placement knows')
    unracked = spec(scheduler_hints={'same_domain': ['rack:a']})
    assert hinted_domains(unracked, {'a': 'h9'}, _rack_of)[2] == (
        'same_domain=rack:a: instance a runs on h9, which is in no rack')
    ignored = spec(scheduler_hints={'different_domain': ['rack:a']})
    assert hinted_domains(ignored, {}, _rack_of) == ([], [], '')
