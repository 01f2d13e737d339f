"""Weighers: normalized 0..1 across hosts, times multiplier, summed; spread or pack."""
from __future__ import annotations

import pytest

from scheduler.weighers.base import normalize, weigh_hosts
from scheduler.weighers.build_failure import BuildFailureWeigher
from scheduler.weighers.cpu import CPUWeigher
from scheduler.weighers.disk import DiskWeigher
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import host, scheduling_request


def _order(weighers, hosts):
    return [w.host.host for w in weigh_hosts(weighers, hosts, scheduling_request())]


def _hosts_by(resource_class):
    return [host('small', used={resource_class: 12 if resource_class == 'VCPU' else 400}),
            host('large'),
            host('middle', used={resource_class: 8 if resource_class == 'VCPU' else 200})]


def test_normalize_scales_to_zero_one():
    assert normalize([10, 20, 15]) == [0.0, 1.0, 0.5]


def test_normalize_all_equal_gives_zeros():
    assert normalize([7, 7]) == [0.0, 0.0]
    assert normalize([]) == []


@pytest.mark.parametrize('weigher_cls,resource_class', [
    (RAMWeigher, 'MEMORY_MB'), (CPUWeigher, 'VCPU'), (DiskWeigher, 'DISK_GB')])
def test_positive_multiplier_spreads_to_the_emptiest_host(weigher_cls, resource_class):
    assert _order([weigher_cls(1.0)], _hosts_by(resource_class)) == ['large', 'middle', 'small']


@pytest.mark.parametrize('weigher_cls,resource_class', [
    (RAMWeigher, 'MEMORY_MB'), (CPUWeigher, 'VCPU'), (DiskWeigher, 'DISK_GB')])
def test_negative_multiplier_packs_onto_the_fullest_host(weigher_cls, resource_class):
    assert _order([weigher_cls(-1.0)], _hosts_by(resource_class)) == ['small', 'middle', 'large']


def test_build_failures_push_a_host_below_healthy_ones():
    hosts = [host('flaky', stats={'failed_builds': 2}), host('ok'),
             host('bad', stats={'failed_builds': 5})]
    assert _order([BuildFailureWeigher(1000000.0)], hosts) == ['ok', 'flaky', 'bad']


def test_build_failures_outweigh_free_ram_with_the_default_multiplier():
    hosts = [host('empty-but-failing', stats={'failed_builds': 1}),
             host('fuller', used={'MEMORY_MB': 8000})]
    assert _order([RAMWeigher(1.0), BuildFailureWeigher(1000000.0)], hosts)[0] == 'fuller'


def test_weights_are_summed_per_weigher_and_recorded():
    hosts = [host('a', used={'MEMORY_MB': 1000}), host('b', used={'VCPU': 8})]
    weighed = weigh_hosts([RAMWeigher(2.0), CPUWeigher(1.0)], hosts, scheduling_request())
    by_name = {w.host.host: w for w in weighed}
    assert by_name['a'].parts == {'RAMWeigher': 0.0, 'CPUWeigher': 1.0}
    assert by_name['b'].parts == {'RAMWeigher': 2.0, 'CPUWeigher': 0.0}
    assert [w.host.host for w in weighed] == ['b', 'a']
    assert by_name['b'].weight == 2.0


def test_zero_multiplier_leaves_the_order_to_the_others():
    hosts = [host('a', used={'MEMORY_MB': 1000}), host('b')]
    assert _order([RAMWeigher(0.0)], hosts) == ['a', 'b']


def test_ties_keep_placement_order():
    assert _order([RAMWeigher(1.0)], [host('x'), host('y'), host('z')]) == ['x', 'y', 'z']
