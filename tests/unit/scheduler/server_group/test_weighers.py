"""The soft server-group weighers: the members' domain first, or the least crowded one."""
from __future__ import annotations

from rpc_schemas.request_spec import InstanceGroup
from scheduler.server_group.soft_affinity_weigher import ServerGroupSoftAffinityWeigher
from scheduler.server_group.soft_anti_affinity_weigher import ServerGroupSoftAntiAffinityWeigher
from scheduler.weighers.base import weigh_hosts
from tests.unit.scheduler.factories import host, scheduling_request, spec


def _group_request(policy, soft=True, **kw):
    return scheduling_request(spec(instance_group=InstanceGroup(
        uuid='g', policy=policy, soft=soft, level='rack')),
        domain_of_host=lambda h, level: {'h1': 'r1', 'h2': 'r1', 'h3': 'r2'}[h], **kw)


def test_soft_anti_affinity_prefers_the_rack_with_fewest_members():
    request = _group_request('anti-affinity', member_counts={'r1': 2, 'r2': 1})
    weighed = weigh_hosts([ServerGroupSoftAntiAffinityWeigher(10.0)],
                          [host('h1'), host('h3')], request)
    assert [w.host.host for w in weighed] == ['h3', 'h1']


def test_soft_affinity_prefers_the_rack_of_the_members_and_ignores_hard_groups():
    request = _group_request('affinity', chosen_hosts=['h3'])
    weighed = weigh_hosts([ServerGroupSoftAffinityWeigher(10.0)],
                          [host('h1'), host('h3')], request)
    assert [w.host.host for w in weighed] == ['h3', 'h1']
    hard = _group_request('affinity', soft=False, chosen_hosts=['h3'])
    assert ServerGroupSoftAffinityWeigher(10.0).raw_weight(host('h3'), hard) == 0.0
