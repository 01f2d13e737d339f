"""The hard server-group filters (affinity, anti-affinity) at the host level and at a failure-domain level."""
from __future__ import annotations

from rpc_schemas.request_spec import InstanceGroup
from scheduler.server_group import affinity_filter as affinity
from scheduler.server_group import anti_affinity_filter as anti_affinity
from tests.unit.scheduler.factories import host, scheduling_request, spec


def _check(host_filter, host_state, request_spec=None, **request_overrides):
    return host_filter.check(host_state, scheduling_request(request_spec, **request_overrides))


def _group(policy, hosts=()):
    return spec(instance_group=InstanceGroup(uuid='g1', policy=policy, hosts=list(hosts)))


def test_affinity_with_an_empty_group_passes_any_host():
    assert _check(affinity.ServerGroupAffinityFilter(), host('h1'), _group('affinity')) is None


def test_affinity_keeps_only_the_group_host():
    f = affinity.ServerGroupAffinityFilter()
    request_spec = _group('affinity', ['h1'])
    assert _check(f, host('h1'), request_spec) is None
    rejection = _check(f, host('h2'), request_spec)
    assert rejection.reason == affinity.NOT_GROUP_HOST
    assert 'h1' in rejection.detail


def test_affinity_follows_the_host_chosen_for_an_earlier_instance_of_the_request():
    f = affinity.ServerGroupAffinityFilter()
    rejection = _check(f, host('h2'), _group('affinity'), chosen_hosts=['h1'])
    assert rejection.reason == affinity.NOT_GROUP_HOST
    assert 'h1' in rejection.detail
    assert _check(f, host('h1'), _group('affinity'), chosen_hosts=['h1']) is None


def test_affinity_ignores_anti_affinity_groups():
    assert _check(affinity.ServerGroupAffinityFilter(), host('h2'),
                  _group('anti-affinity', ['h1'])) is None


def test_anti_affinity_rejects_hosts_running_a_member():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    request_spec = _group('anti-affinity', ['h1'])
    assert _check(f, host('h1'), request_spec).reason == anti_affinity.RUNS_GROUP_MEMBER
    assert _check(f, host('h2'), request_spec) is None


def test_anti_affinity_rejects_the_host_chosen_for_an_earlier_instance():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    assert _check(f, host('h1'), _group('anti-affinity'), chosen_hosts=['h1']).reason == \
        anti_affinity.RUNS_GROUP_MEMBER
    assert _check(f, host('h2'), _group('anti-affinity'), chosen_hosts=['h1']) is None


def test_anti_affinity_ignores_affinity_groups():
    assert _check(anti_affinity.ServerGroupAntiAffinityFilter(), host('h1'),
                  _group('affinity', ['h1'])) is None


# -- failure-domain levels (racks as Placement aggregates) ---------------------

RACKS = {'h1': 'rack-1', 'h2': 'rack-1', 'h3': 'rack-2'}


def _rack_group(policy, hosts=()):
    return spec(instance_group=InstanceGroup(uuid='g1', policy=policy,
                                             hosts=list(hosts), level='rack'))


def _racked(name):
    rack = RACKS.get(name)
    return host(name, failure_domains={'rack': rack} if rack else {})


def _rack_of(host_name, level):
    return RACKS.get(host_name) if level == 'rack' else None


def test_rack_anti_affinity_rejects_every_host_of_a_members_rack():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    request_spec = _rack_group('anti-affinity', ['h1'])
    rejection = _check(f, _racked('h2'), request_spec, domain_of_host=_rack_of)
    assert rejection.reason == anti_affinity.DOMAIN_HAS_GROUP_MEMBER
    assert 'rack rack-1' in rejection.detail
    assert _check(f, _racked('h3'), request_spec, domain_of_host=_rack_of) is None


def test_rack_anti_affinity_refuses_a_host_in_no_known_rack():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    assert _check(f, _racked('h9'), _rack_group('anti-affinity', ['h1']),
                  domain_of_host=_rack_of).reason == anti_affinity.HOST_DOMAIN_UNKNOWN


def test_rack_anti_affinity_follows_racks_chosen_earlier_in_the_request():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    chosen = dict(chosen_hosts=['h1'], domain_of_host=_rack_of)
    rejection = _check(f, _racked('h2'), _rack_group('anti-affinity'), **chosen)
    assert rejection.reason == anti_affinity.DOMAIN_HAS_GROUP_MEMBER
    assert 'rack rack-1' in rejection.detail
    assert _check(f, _racked('h3'), _rack_group('anti-affinity'), **chosen) is None


def test_rack_affinity_accepts_another_host_of_the_members_rack():
    f = affinity.ServerGroupAffinityFilter()
    request_spec = _rack_group('affinity', ['h1'])
    assert _check(f, _racked('h2'), request_spec, domain_of_host=_rack_of) is None
    rejection = _check(f, _racked('h3'), request_spec, domain_of_host=_rack_of)
    assert rejection.reason == affinity.NOT_GROUP_DOMAIN
    assert 'rack-2' in rejection.detail and 'rack-1' in rejection.detail


def test_rack_affinity_with_members_in_unknown_racks_accepts_no_host():
    f = affinity.ServerGroupAffinityFilter()
    rejection = _check(f, _racked('h2'), _rack_group('affinity', ['h9']),
                       domain_of_host=_rack_of)
    assert rejection.reason == affinity.MEMBERS_DOMAIN_UNKNOWN


def test_rack_affinity_of_an_empty_group_accepts_any_host():
    assert _check(affinity.ServerGroupAffinityFilter(), _racked('h3'),
                  _rack_group('affinity'), domain_of_host=_rack_of) is None


def test_level_host_is_the_same_as_no_level():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    request_spec = spec(instance_group=InstanceGroup(
        uuid='g1', policy='anti-affinity', hosts=['h1'], level='host'))
    assert _check(f, host('h1'), request_spec).reason == anti_affinity.RUNS_GROUP_MEMBER
    assert _check(f, host('h2'), request_spec) is None



def test_rack_anti_affinity_admits_up_to_max_per_domain_members():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    request_spec = spec(instance_group=InstanceGroup(
        uuid='g1', policy='anti-affinity', level='rack', max_per_domain=2))
    one = dict(member_counts={'rack-1': 1}, domain_of_host=_rack_of)
    assert _check(f, _racked('h1'), request_spec, **one) is None
    two = dict(member_counts={'rack-1': 1}, chosen_hosts=['h2'], domain_of_host=_rack_of)
    assert _check(f, _racked('h1'), request_spec, **two).reason == \
        anti_affinity.DOMAIN_HAS_GROUP_MEMBER


def test_rack_anti_affinity_refuses_a_rack_another_scheduler_filled_meanwhile():
    f = anti_affinity.ServerGroupAntiAffinityFilter()
    assert _check(f, _racked('h1'), _rack_group('anti-affinity'),
                  domain_of_host=_rack_of) is None
    filled = dict(domain_of_host=_rack_of, full_domains=frozenset({'rack-1'}))
    rejection = _check(f, _racked('h1'), _rack_group('anti-affinity'), **filled)
    assert rejection.reason == anti_affinity.DOMAIN_HAS_GROUP_MEMBER
    assert 'rack rack-1' in rejection.detail
    assert _check(f, _racked('h3'), _rack_group('anti-affinity'), **filled) is None


def test_soft_groups_are_left_to_the_weighers():
    soft = spec(instance_group=InstanceGroup(uuid='g1', policy='anti-affinity', soft=True,
                                             hosts=['h1']))
    assert _check(anti_affinity.ServerGroupAntiAffinityFilter(), host('h1'), soft) is None
    soft = spec(instance_group=InstanceGroup(uuid='g1', policy='affinity', soft=True,
                                             hosts=['h1']))
    assert _check(affinity.ServerGroupAffinityFilter(), host('h2'), soft) is None
