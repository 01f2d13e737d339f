"""Quotas from unified limits through the compute API: os-quota-sets, limits, refusals.

In-process over the embedded control plane with the ``unified_limits``
driver and oslo.limit's real ``Enforcer``; Keystone's answers come from
oslo.limit's own ``LimitFixture`` (registered limits, a project limit).
Usage is counted from the cloud's real Placement and API database. Answers
are validated against tempest's schemas. The same driver against a real
Keystone: tests/integration/test_unified_limits_keystone.py.
"""
from __future__ import annotations

import pytest
from oslo_config import cfg
from oslo_limit import fixture as limit_fixture
from oslo_limit import limit  # noqa: F401  (registers [oslo_limit] in the global options)
from tempest.lib.api_schema.response.compute.v2_1 import limits as limits_2_1
from tempest.lib.api_schema.response.compute.v2_57 import limits as limits_2_57

from cellplane.objects import flavors, instance_mappings
from cellplane_api.unified_limits import UnifiedLimitsQuotas
from tests.functional.compute_api.harness import ComputeCloud, check
from tests.functional.compute_api.test_quotas import QUOTA_SCHEMAS

ADMIN = 'admin:admin'
REGISTERED = {'servers': 3, 'class:VCPU': 4, 'class:MEMORY_MB': 4096,
              'server_groups': 1, 'server_group_members': 2}
# Project 'big' has its own servers limit.
PROJECT_LIMITS = {'big': {'servers': 5}}


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    keystone = limit_fixture.LimitFixture(REGISTERED, PROJECT_LIMITS)
    keystone.setUp()
    cfg.CONF.set_override('endpoint_id', 'compute-endpoint', group='oslo_limit')
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api-unified-limits'), cells=1,
                         hosts_per_cell=2,
                         quota_driver_for=lambda c: UnifiedLimitsQuotas(c.api_engine,
                                                                        c.placement))
    try:
        flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=256,
                       root_gb=1, flavorid='small')
        yield cloud
    finally:
        cloud.stop()
        cfg.CONF.clear_override('endpoint_id', group='oslo_limit')
        keystone.cleanUp()


def _boot(api, project, name, **fields):
    return api.request('POST', '/v2.1/servers', {'server': {
        'name': name, 'flavorRef': 'small', 'imageRef': 'cirros', **fields}},
        token=f'{project}-user:{project}')


def _mapped(api, project) -> int:
    with api.services.api_engine.connect() as conn:
        return instance_mappings.count_of_project(conn, project)


@pytest.mark.parametrize('version', ['2.1', '2.36', '2.57'])
def test_quota_sets_show_keystones_limits_and_an_update_changes_nothing(api, version):
    show, update, detail = QUOTA_SCHEMAS[version]
    shown = check(show, api.request('GET', '/v2.1/os-quota-sets/big', token=ADMIN,
                                    version=version))['quota_set']
    assert (shown['instances'], shown['cores'], shown['ram'], shown['server_groups'],
            shown['server_group_members']) == (5, 4, 4096, 1, 2)
    defaults = check(show, api.request('GET', '/v2.1/os-quota-sets/big/defaults',
                                       token=ADMIN, version=version))['quota_set']
    assert defaults['instances'] == 3
    updated = check(update, api.request('PUT', '/v2.1/os-quota-sets/big', {
        'quota_set': {'instances': 50}}, token=ADMIN, version=version))['quota_set']
    assert updated['instances'] == 5
    assert api.request('DELETE', '/v2.1/os-quota-sets/big', token=ADMIN).status == 202
    check(detail, api.request('GET', '/v2.1/os-quota-sets/big/detail', token=ADMIN,
                              version=version))
    again = api.request('GET', '/v2.1/os-quota-sets/big', token=ADMIN,
                        version=version).json['quota_set']
    assert again == shown


def test_over_the_registered_servers_limit_is_a_403_with_oslo_limits_words(api):
    assert _boot(api, 'ul-a', 'three', min_count=3, max_count=3).status == 202
    refused = _boot(api, 'ul-a', 'fourth')
    assert refused.status == 403
    assert refused.json == {'forbidden': {'code': 403, 'message': (
        'Project ul-a is over a limit for [Resource servers is over limit of 3 due to '
        'current usage 3 and delta 1]')}}
    assert _mapped(api, 'ul-a') == 3


def test_cores_are_counted_and_min_count_makes_as_many_as_fit(api):
    # class:VCPU 4 (1 per server) with servers 5 for project 'big': 4 fit of 5 asked.
    made = _boot(api, 'big', 'many', min_count=1, max_count=5)
    assert made.status == 202, made.text
    assert _mapped(api, 'big') == 4
    refused = _boot(api, 'big', 'one-more')
    assert refused.status == 403
    assert 'Resource class:VCPU is over limit of 4' in refused.json['forbidden']['message']
    assert _mapped(api, 'big') == 4


@pytest.mark.parametrize('version, schema', [('2.1', limits_2_1.get_limit),
                                             ('2.57', limits_2_57.get_limit)])
def test_limits_reports_keystones_limits_and_the_usage(api, version, schema):
    booted = _boot(api, 'ul-l', 'one')
    assert booted.status == 202
    # Usage counts a build request being claimed both from its flavor and from
    # Placement for a moment (too much, never too little: quotas.placement_usage);
    # the server placed, each is counted once.
    api.wait_for_status(booted.json['server']['id'], 'ACTIVE', token='ul-l-user:ul-l')
    absolute = check(schema, api.request('GET', '/v2.1/limits', token='ul-l-user:ul-l',
                                         version=version))['limits']['absolute']
    assert (absolute['maxTotalInstances'], absolute['maxTotalCores'],
            absolute['maxTotalRAMSize'], absolute['maxServerGroups']) == (3, 4, 4096, 1)
    assert absolute['totalInstancesUsed'] == _mapped(api, 'ul-l')
    assert absolute['totalRAMUsed'] == 256 * _mapped(api, 'ul-l')


def test_group_members_and_groups_stop_at_their_limits(api):
    token = 'ul-g-user:ul-g'
    group = api.request('POST', '/v2.1/os-server-groups', {'server_group': {
        'name': 'g', 'policies': ['anti-affinity']}}, token=token)
    assert group.status == 200, group.text
    refused = api.request('POST', '/v2.1/os-server-groups', {'server_group': {
        'name': 'g2', 'policies': ['anti-affinity']}}, token=token)
    assert refused.status == 403
    assert 'Resource server_groups is over limit of 1' in refused.json['forbidden']['message']
    hints = {'os:scheduler_hints': {'group': group.json['server_group']['id']}}
    too_many = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'm', 'flavorRef': 'small', 'imageRef': 'cirros', 'min_count': 3,
        'max_count': 3}, **hints}, token=token)
    assert too_many.status == 403
    assert 'server_group_members' in too_many.json['forbidden']['message']
    assert _mapped(api, 'ul-g') == 0
