"""How many servers fit a project's quota (``cellplane_api.quotas.fit``), and Nova's words when none do."""
from __future__ import annotations

import pytest

from cellplane_api.quotas import QuotaExceeded, fit

LIMITS = {'instances': 10, 'cores': 20, 'ram': 51200}


def _used(instances=0, cores=0, ram=0):
    return {'instances': instances, 'cores': cores, 'ram': ram}


def test_all_asked_for_fit():
    assert fit(LIMITS, _used(8, 8, 1024), vcpus=1, memory_mb=512, min_count=2,
               max_count=2) == 2


def test_as_many_as_the_tightest_resource_allows_when_min_count_permits():
    # 4 more instances, 12 cores / 4 = 3: three.
    assert fit(LIMITS, _used(6, 8), vcpus=4, memory_mb=1, min_count=1, max_count=5) == 3


def test_none_fit_names_every_resource_passed_in_novas_words():
    with pytest.raises(QuotaExceeded) as refused:
        fit(LIMITS, _used(9, 18, 100), vcpus=2, memory_mb=512, min_count=3, max_count=3)
    assert str(refused.value) == ('Quota exceeded for cores, instances: Requested 6, 3, but '
                                  'already used 18, 9 of 20, 10 cores, instances')


def test_a_range_is_named_as_min_dash_max():
    with pytest.raises(QuotaExceeded) as refused:
        fit(LIMITS, _used(9), vcpus=1, memory_mb=1, min_count=2, max_count=4)
    assert str(refused.value) == ('Quota exceeded for instances: Requested 2-4, but already '
                                  'used 9 of 10 instances')


def test_unlimited_resources_never_refuse():
    unlimited = {'instances': -1, 'cores': -1, 'ram': -1}
    assert fit(unlimited, _used(10**6, 10**6, 10**9), vcpus=64, memory_mb=10**6,
               min_count=1000, max_count=1000) == 1000


def test_usage_already_over_a_lowered_limit_refuses_without_negative_room():
    with pytest.raises(QuotaExceeded):
        fit(LIMITS, _used(12), vcpus=1, memory_mb=1, min_count=1, max_count=1)
