"""The hard server-group rule the scheduler and the cell conductor share: full domains, and may a member join."""
from __future__ import annotations

from cellplane import server_group_policy as policy
from rpc_schemas.request_spec import HOST_LEVEL, InstanceGroup


def _group(policy_name='anti-affinity', **kw):
    return InstanceGroup(uuid='g', policy=policy_name, level='rack', **kw)


def test_anti_affinity_fills_a_domain_at_max_per_domain_members():
    group = _group(max_per_domain=2)
    counts = {'r1': 2, 'r2': 1}
    assert policy.full_domains(group, counts) == {'r1'}
    assert not policy.allows(group, counts, ['r1'])
    assert policy.allows(group, counts, ['r2'])
    assert policy.allows(group, counts, [])      # a domain no member holds
    assert policy.place_limit(group) == 2


def test_affinity_joins_a_members_domain_unless_there_is_none():
    group = _group('affinity')
    assert policy.allows(group, {}, ['r9'])
    assert policy.member_domains(group, {'r1': 1}) == {'r1'}
    assert policy.allows(group, {'r1': 1}, ['r1'])
    assert not policy.allows(group, {'r1': 1}, ['r2'])
    assert not policy.allows(group, {'r1': 1}, [])
    assert policy.place_limit(group) is None


def test_soft_policies_allow_everything_and_fill_nothing():
    for name in ('affinity', 'anti-affinity'):
        group = _group(name, soft=True)
        assert policy.allows(group, {'r1': 5}, ['r1']) and policy.allows(group, {'r1': 5}, [])
        assert policy.full_domains(group, {'r1': 5}) == set()
        assert policy.member_domains(group, {'r1': 5}) == set()


def test_the_payload_says_once_that_none_and_host_are_the_host_level():
    assert InstanceGroup(uuid='g', policy='affinity').domain_level is None
    assert InstanceGroup(uuid='g', policy='affinity', level=HOST_LEVEL).domain_level is None
    assert InstanceGroup(uuid='g', policy='affinity', level=HOST_LEVEL).level_name == 'host'
    assert _group().domain_level == 'rack' and _group().level_name == 'rack'
