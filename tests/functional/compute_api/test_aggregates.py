"""``GET /os-aggregates`` and ``/os-aggregates/{id}`` through the compute API (what
``openstack hypervisor show`` reads), validated against tempest's 2.1 and 2.41 schemas."""
from __future__ import annotations

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import aggregates as v21
from tempest.lib.api_schema.response.compute.v2_41 import aggregates as v241

from cellplane.objects import aggregates
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('os-aggregates'), cells=1, hosts_per_cell=1)
    engine = cloud.services.api_engine
    aggregates.create(engine, 'rack-a', zone='az-a')
    aggregates.add_host(engine, 'rack-a', 'cell1-host1')
    aggregates.create(engine, 'plain', properties={'ssd': 'true'})
    yield cloud
    cloud.stop()


def test_the_list_and_show_match_tempest_with_uuid_from_2_41(api):
    old = check(v21.list_aggregates, api.request('GET', '/v2.1/os-aggregates', token=ADMIN))
    assert [(a['name'], a['availability_zone'], a['hosts'], a['metadata']) for a in
            old['aggregates']] == [('rack-a', 'az-a', ['cell1-host1'],
                                    {'availability_zone': 'az-a'}),
                                   ('plain', None, [], {'ssd': 'true'})]
    new = check(v241.list_aggregates, api.request('GET', '/v2.1/os-aggregates', token=ADMIN,
                                                  version='2.41'))['aggregates']
    assert new[0]['uuid'] == aggregates.get(api.services.api_engine, 'rack-a').uuid
    shown = check(v241.get_aggregate, api.request(
        'GET', f'/v2.1/os-aggregates/{new[1]["id"]}', token=ADMIN, version='2.69'))
    assert shown['aggregate']['name'] == 'plain'


@pytest.mark.parametrize('path, token, status', [
    ('/v2.1/os-aggregates', 'u:p', 403), ('/v2.1/os-aggregates/1', 'u:p', 403),
    ('/v2.1/os-aggregates/999', ADMIN, 404), ('/v2.1/os-aggregates/rack-a', ADMIN, 400)])
def test_refusals_are_novas(api, path, token, status):
    assert api.request('GET', path, token=token).status == status
