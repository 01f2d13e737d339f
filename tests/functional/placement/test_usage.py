"""GET /usages: totals per project (and user), by consumer type from 1.38."""
from __future__ import annotations

import pytest

C1 = '11111111-1111-4111-8111-111111111111'
C2 = '22222222-2222-4222-8222-222222222222'
C3 = '33333333-3333-4333-8333-333333333333'


@pytest.fixture
def used(api):
    rp = api.provider('cn1', inventory={'VCPU': 16, 'MEMORY_MB': 8192})
    body = {'allocations': {rp: {'resources': {'VCPU': 2, 'MEMORY_MB': 512}}},
            'project_id': 'proj', 'user_id': 'alice', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'}
    assert api.put(f'/allocations/{C1}', body).status == 204
    body.update(user_id='bob', consumer_type='MIGRATION')
    body['allocations'][rp]['resources'] = {'VCPU': 1}
    assert api.put(f'/allocations/{C2}', body).status == 204
    # Written before 1.38: no consumer type ("unknown").
    old = {'allocations': {rp: {'resources': {'VCPU': 4}}}, 'project_id': 'proj',
           'user_id': 'bob', 'consumer_generation': None}
    assert api.put(f'/allocations/{C3}', old, mv='1.37').status == 204
    return api


def test_totals_per_project_and_user(used):
    assert used.get('/usages?project_id=proj', mv='1.9').json == {
        'usages': {'VCPU': 7, 'MEMORY_MB': 512}}
    assert used.get('/usages?project_id=proj&user_id=bob', mv='1.9').json == {
        'usages': {'VCPU': 5}}
    assert used.get('/usages?project_id=nobody', mv='1.9').json == {'usages': {}}


def test_by_consumer_type_from_1_38(used):
    assert used.get('/usages?project_id=proj').json == {'usages': {
        'INSTANCE': {'VCPU': 2, 'MEMORY_MB': 512, 'consumer_count': 1},
        'MIGRATION': {'VCPU': 1, 'consumer_count': 1},
        'unknown': {'VCPU': 4, 'consumer_count': 1}}}
    assert used.get('/usages?project_id=proj&consumer_type=all').json == {'usages': {
        'all': {'VCPU': 7, 'MEMORY_MB': 512, 'consumer_count': 3}}}
    assert used.get('/usages?project_id=proj&consumer_type=unknown').json == {'usages': {
        'unknown': {'VCPU': 4, 'consumer_count': 1}}}
    assert used.get('/usages?project_id=proj&consumer_type=MIGRATION').json == {'usages': {
        'MIGRATION': {'VCPU': 1, 'consumer_count': 1}}}
    assert used.get('/usages?project_id=proj&consumer_type=COW').json == {'usages': {}}
    assert used.get('/usages?project_id=proj&user_id=alice&consumer_type=all').json == {
        'usages': {'all': {'VCPU': 2, 'MEMORY_MB': 512, 'consumer_count': 1}}}


def test_usage_follows_deletes(used):
    assert used.delete(f'/allocations/{C3}').status == 204
    assert used.get('/usages?project_id=proj', mv='1.9').json == {
        'usages': {'VCPU': 3, 'MEMORY_MB': 512}}


@pytest.mark.parametrize('query, mv', [
    ('', '1.9'),                                   # project_id is required
    ('project_id=', '1.9'),
    ('project_id=proj&bogus=1', '1.9'),
    ('project_id=proj&consumer_type=INSTANCE', '1.37'),
    ('project_id=proj&consumer_type=lower', '1.38'),
])
def test_bad_queries_are_400(used, query, mv):
    result = used.get(f'/usages?{query}', mv=mv)
    assert result.status == 400
    assert 'Invalid query string parameters' in result.error['detail']


def test_absent_before_1_9(used):
    assert used.get('/usages?project_id=proj', mv='1.8').status == 404
