"""``/os-simple-tenant-usage``: each project's server hours and flavor usage over a period, across cells.

Answers validated against tempest's ``tenant_usages`` schemas (2.1; 2.40
adds only the links, checked by hand). The servers are booted through the
API, then their launch and deletion times are set in their cells so that
the hours are known exactly.
"""
from __future__ import annotations

import datetime
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy as sa
from tempest.lib.api_schema.response.compute.v2_1 import tenant_usages as schemas

from cellplane.db.cell.models import instances
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
P1 = 'u1:p1'
P2 = 'u2:p2'
DAY = '?start=2026-01-01T00:00:00&end=2026-01-02T00:00:00'
T0 = datetime.datetime(2026, 1, 1)


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('usage'), cells=2, hosts_per_cell=1)
    created = cloud.request('POST', '/v2.1/flavors', {'flavor': {
        'name': 'small', 'id': 'small', 'ram': 128, 'vcpus': 2, 'disk': 1}}, token=ADMIN)
    assert created.status == 200, created.text
    ids = {}
    for name, token in (('a', P1), ('b', P1), ('c', P2), ('late', P2)):
        answer = cloud.request('POST', '/v2.1/servers', {
            'server': {'name': name, 'flavorRef': 'small'}}, token=token)
        assert answer.status == 202, answer.text
        ids[name] = answer.json['server']['id']
        cloud.wait_for_status(ids[name], 'ACTIVE', token=token)
    assert cloud.request('DELETE', f'/v2.1/servers/{ids["b"]}', token=P1).status == 204
    cloud.wait_until(lambda: cloud.request('GET', f'/v2.1/servers/{ids["b"]}',
                                           token=P1).status == 404, 'b deleted')
    # a: the whole day; b: its second half, then deleted; c: from 06:00; late: after it.
    times = {'a': (T0 - datetime.timedelta(days=3), None),
             'b': (T0 + datetime.timedelta(hours=12), T0 + datetime.timedelta(days=1, hours=5)),
             'c': (T0 + datetime.timedelta(hours=6), None),
             'late': (T0 + datetime.timedelta(days=2), None)}
    for cell in cloud.services.cells.enabled():
        with cloud.services.cells.engine(cell.uuid).begin() as conn:
            for name, (launched, deleted) in times.items():
                values = {'launched_at': launched}
                if deleted is not None:
                    values['deleted_at'] = deleted
                conn.execute(sa.update(instances).where(instances.c.uuid == ids[name])
                             .values(**values))
    cloud.ids = ids
    yield cloud
    cloud.stop()


def _list(api, query=DAY, version='2.1', token=ADMIN):
    return api.request('GET', f'/v2.1/os-simple-tenant-usage{query}', token=token,
                       version=version)


def test_an_admin_lists_every_projects_usage_over_the_period(api):
    body = check(schemas.list_tenant_usage, _list(api, DAY + '&detailed=1'))
    by_project = {u['tenant_id']: u for u in body['tenant_usages']}
    assert set(by_project) == {'p1', 'p2'}
    p1, p2 = by_project['p1'], by_project['p2']
    assert (p1['start'], p1['stop']) == ('2026-01-01T00:00:00.000000',
                                         '2026-01-02T00:00:00.000000')
    assert p1['total_hours'] == pytest.approx(36.0)
    assert p1['total_vcpus_usage'] == pytest.approx(72.0)
    assert p1['total_memory_mb_usage'] == pytest.approx(128 * 36.0)
    assert p1['total_local_gb_usage'] == pytest.approx(36.0)
    assert p2['total_hours'] == pytest.approx(18.0)
    servers = {s['name']: s for s in p1['server_usages'] + p2['server_usages']}
    assert set(servers) == {'a', 'b', 'c'}
    assert (servers['b']['state'], servers['b']['ended_at'], servers['b']['uptime']) == (
        'terminated', '2026-01-02T05:00:00.000000', 17 * 3600)
    assert (servers['a']['state'], servers['a']['ended_at'], servers['a']['flavor']) == (
        'active', None, 'small')
    assert (servers['a']['vcpus'], servers['a']['memory_mb'], servers['a']['local_gb']) == (
        2, 128, 1)


def test_the_list_without_detailed_has_no_server_usages(api):
    body = check(schemas.list_tenant_usage, _list(api))
    assert all('server_usages' not in u for u in body['tenant_usages'])
    assert all('server_usages' not in u for u in _list(api, DAY + '&detailed=0').json[
        'tenant_usages'])
    # openstacksdk asks with detailed=True.
    assert all('server_usages' in u for u in _list(api, DAY + '&detailed=True').json[
        'tenant_usages'])


def test_a_project_reads_its_own_usage_and_not_anothers(api):
    body = check(schemas.get_tenant_usage, api.request(
        'GET', f'/v2.1/os-simple-tenant-usage/p1{DAY}', token=P1))['tenant_usage']
    assert body['tenant_id'] == 'p1'
    assert sorted(s['name'] for s in body['server_usages']) == ['a', 'b']
    refused = api.request('GET', f'/v2.1/os-simple-tenant-usage/p2{DAY}', token=P1)
    assert refused.status == 403
    assert refused.json['forbidden']['message'] == (
        "Policy doesn't allow os_compute_api:os-simple-tenant-usage:show to be performed.")
    listed = _list(api, token=P1)
    assert listed.status == 403
    assert 'os_compute_api:os-simple-tenant-usage:list' in listed.json['forbidden']['message']


def test_a_project_with_nothing_in_the_period_is_an_empty_usage(api):
    answer = api.request('GET', '/v2.1/os-simple-tenant-usage/p3' + DAY, token=ADMIN)
    assert (answer.status, answer.json) == (200, {'tenant_usage': {}})


def test_from_2_40_servers_are_paged_with_links(api):
    first = _list(api, DAY + '&detailed=1&limit=2', version='2.40')
    body = check(schemas.list_tenant_usage, first)
    assert sum(len(u['server_usages']) for u in body['tenant_usages']) == 2
    (link,) = body['tenant_usages_links']
    assert link['rel'] == 'next'
    query = parse_qs(urlsplit(link['href']).query)
    assert query['limit'] == ['2'] and query['detailed'] == ['1']
    rest = check(schemas.list_tenant_usage, _list(
        api, DAY + f'&detailed=1&limit=2&marker={query["marker"][0]}', version='2.40'))
    assert sum(len(u['server_usages']) for u in rest['tenant_usages']) == 1
    assert 'tenant_usages_links' not in rest
    shown = {s['name'] for page in (body, rest) for u in page['tenant_usages']
             for s in u['server_usages']}
    assert shown == {'a', 'b', 'c'}
    # Below 2.40 limit is not read and no links are given.
    assert 'tenant_usages_links' not in _list(api, DAY + '&limit=1').json


def test_from_2_40_a_project_is_paged_too(api):
    answer = api.request('GET', f'/v2.1/os-simple-tenant-usage/p1{DAY}&limit=1', token=P1,
                         version='2.40')
    body = check(schemas.get_tenant_usage, answer)
    assert len(body['tenant_usage']['server_usages']) == 1
    assert '/os-simple-tenant-usage/p1?' in body['tenant_usage_links'][0]['href']


@pytest.mark.parametrize('query, version, message', [
    ('?start=yesterday', '2.1', 'Invalid datetime string: Datetime is in invalid format'),
    ('?start=2026-01-02T00:00:00&end=2026-01-01T00:00:00', '2.1',
     'Invalid start time. The start time cannot occur after the end time.'),
    (DAY + '&limit=-1', '2.40',
     'Invalid input for query parameters limit. Value: -1. It is not a whole number >= 0.'),
    (DAY + '&marker=nobody', '2.40', 'Marker nobody could not be found.'),
])
def test_bad_query_parameters_are_novas_400(api, query, version, message):
    answer = _list(api, query, version=version)
    assert (answer.status, answer.json) == (400, {'badRequest': {'code': 400,
                                                                 'message': message}})
