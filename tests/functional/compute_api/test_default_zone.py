"""Booting into ``nova``, Nova's default availability zone, which clients send.

A compute host that no aggregate puts in a zone and whose agent reports none
is in ``[DEFAULT] default_availability_zone`` (``nova``): the compute API
accepts that zone while such a host exists, the scheduler places the server
on one of them, and the server shows the zone it is in.
"""
from __future__ import annotations

import pytest

from cellplane.objects import aggregates, instance_mappings
from tests.functional.compute_api.harness import ComputeCloud

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('default-zone'), cells=2, hosts_per_cell=1)
    engine = cloud.services.api_engine
    created = cloud.request('POST', '/v2.1/flavors', {'flavor': {
        'name': 'small', 'id': 'small', 'ram': 64, 'vcpus': 1, 'disk': 0}}, token=ADMIN)
    assert created.status == 200, created.text
    # cell2-host1 is in az-b; cell1-host1 is in no zone, so in nova.
    aggregates.create(engine, 'rack-b', zone='az-b')
    aggregates.add_host(engine, 'rack-b', 'cell2-host1')
    yield cloud
    cloud.stop()


def _boot(api, zone=None, count=1):
    server = {'name': 'web', 'flavorRef': 'small', 'max_count': count}
    if zone is not None:
        server['availability_zone'] = zone
    return api.request('POST', '/v2.1/servers', {'server': server})


def test_a_boot_into_nova_lands_on_the_hosts_in_no_zone(api):
    answer = _boot(api, 'nova', count=3)
    assert answer.status == 202, answer.text
    uuids = _uuids_of_last_boot(api, 3)
    shown = [api.wait_for_status(u, 'ACTIVE', token=ADMIN) for u in uuids]
    assert {s['OS-EXT-SRV-ATTR:host'] for s in shown} == {'cell1-host1'}
    assert {s['OS-EXT-AZ:availability_zone'] for s in shown} == {'nova'}


def test_a_boot_into_an_aggregate_zone_still_lands_in_it(api):
    assert _boot(api, 'az-b', count=2).status == 202
    shown = [api.wait_for_status(u, 'ACTIVE', token=ADMIN) for u in _uuids_of_last_boot(api, 2)]
    assert {s['OS-EXT-SRV-ATTR:host'] for s in shown} == {'cell2-host1'}
    assert {s['OS-EXT-AZ:availability_zone'] for s in shown} == {'az-b'}


def test_a_server_that_asked_no_zone_shows_the_zone_of_its_host(api):
    assert _boot(api, count=4).status == 202
    shown = [api.wait_for_status(u, 'ACTIVE', token=ADMIN) for u in _uuids_of_last_boot(api, 4)]
    zone_of = {'cell1-host1': 'nova', 'cell2-host1': 'az-b'}
    assert all(s['OS-EXT-AZ:availability_zone'] == zone_of[s['OS-EXT-SRV-ATTR:host']]
               for s in shown)


def test_nova_is_refused_with_nothing_written_once_every_host_is_in_a_zone(api):
    engine = api.services.api_engine
    aggregates.create(engine, 'rack-a', zone='az-a')
    aggregates.add_host(engine, 'rack-a', 'cell1-host1')
    try:
        before = instance_mappings.mapped_at(engine)
        refused = _boot(api, 'nova')
        assert refused.status == 400, refused.text
        message = refused.json['badRequest']['message']
        assert message.startswith('Invalid input for field/attribute availability_zone: '
                                  "availability zone 'nova' does not exist")
        assert instance_mappings.mapped_at(engine) == before
    finally:
        aggregates.remove_host(engine, 'rack-a', 'cell1-host1')
        aggregates.delete(engine, 'rack-a')
    assert _boot(api, 'nova').status == 202


def _uuids_of_last_boot(api, count):
    """The ``count`` servers accepted last (one boot's, the mappings being in creation order)."""
    return [m[0] for m in instance_mappings.mapped_at(api.services.api_engine)][-count:]
