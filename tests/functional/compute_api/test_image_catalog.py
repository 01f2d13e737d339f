"""The read-only image catalog at ``/image`` (Glance v2's GET routes) and ``POST /servers`` checked against it.

Over the embedded control plane with the compute API's app built as the
daemon builds it, given a catalog file: discovery without a token, list
with filters and paging, show, 404, 405 for writes, 401 without a token;
a server booted from a listed image records it and is scheduled with the
image's properties (an architecture no host offers ends in ERROR, removed by
ImagePropertiesFilter); an unlisted imageRef is 400 with nothing written.
"""
from __future__ import annotations

import dataclasses

import pytest

from cellplane.objects import flavors
from cellplane_api import wsgi
from cellplane_api.image_catalog import ImageCatalog
from tests.functional.compute_api.harness import ComputeCloud

CIRROS = '7f1c4a8e-2b3d-4c5e-9f60-718293a4b5c6'
SPARC = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3'
UBUNTU = 'f0e1d2c3-b4a5-4968-8766-554433221100'
CATALOG = f"""
images:
  - id: {CIRROS}
    name: cirros
    disk_format: qcow2
    min_disk: 1
    size: 21692416
    properties: {{os_distro: cirros}}
  - id: {SPARC}
    name: solaris
    properties: {{hw_architecture: sparc}}
  - id: {UBUNTU}
    name: ubuntu
    min_ram: 512
"""


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    state = tmp_path_factory.mktemp('image-catalog')
    cloud = ComputeCloud(state, cells=1, hosts_per_cell=1)
    flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=256, root_gb=1,
                   flavorid='small')
    (state / 'images.yaml').write_text(CATALOG)
    cloud.services = dataclasses.replace(cloud.services,
                                         images=ImageCatalog(state / 'images.yaml'))
    cloud.app = wsgi.make_app(cloud.services, auth_strategy='noauth2')
    yield cloud
    cloud.stop()


def test_discovery_needs_no_token_and_points_at_v2(api):
    root = api.request('GET', '/image', token=None)
    assert root.status == 300
    [version] = root.json['versions']
    assert version['links'][0]['href'].endswith('/image/v2/')
    assert api.request('GET', '/image/versions', token=None).status == 200
    assert api.request('GET', '/image/v2/images', token=None).status == 401


def test_images_are_listed_filtered_paged_and_shown_as_glance_does(api):
    listed = api.request('GET', '/image/v2/images')
    assert listed.status == 200, listed.text
    assert [i['name'] for i in listed.json['images']] == ['ubuntu', 'cirros', 'solaris']
    assert listed.json['first'] == '/v2/images' and 'next' not in listed.json

    by_name = api.request('GET', '/image/v2/images?name=cirros').json['images']
    assert [i['id'] for i in by_name] == [CIRROS]
    assert by_name[0]['os_distro'] == 'cirros' and by_name[0]['status'] == 'active'
    by_property = api.request('GET', '/image/v2/images?hw_architecture=sparc').json['images']
    assert [i['id'] for i in by_property] == [SPARC]
    assert api.request('GET', '/image/v2/images?os_hidden=true').json['images'] == []
    either = api.request('GET', f'/image/v2/images?id=in:{CIRROS},{SPARC}').json['images']
    assert {i['name'] for i in either} == {'cirros', 'solaris'}

    first = api.request('GET', '/image/v2/images?limit=2&sort_key=name&sort_dir=asc').json
    assert [i['name'] for i in first['images']] == ['cirros', 'solaris']
    second = api.request('GET', '/image' + first['next']).json
    assert [i['name'] for i in second['images']] == ['ubuntu'] and 'next' not in second

    shown = api.request('GET', f'/image/v2/images/{CIRROS}').json
    assert (shown['name'], shown['disk_format'], shown['min_disk'], shown['size'],
            shown['self']) == ('cirros', 'qcow2', 1, 21692416, f'/v2/images/{CIRROS}')


@pytest.mark.parametrize('method, path, status', [
    ('GET', '/image/v2/images/cirros', 404),
    ('GET', '/image/v2/images?limit=many', 400),
    ('GET', '/image/v2/images?sort_key=colour', 400),
    ('GET', f'/image/v2/images?marker={SPARC[::-1]}', 400),
    ('POST', '/image/v2/images', 405),
    ('DELETE', f'/image/v2/images/{CIRROS}', 405),
    ('GET', f'/image/v2/images/{CIRROS}/file', 404),
])
def test_what_the_catalog_does_not_serve_is_a_4xx(api, method, path, status):
    answer = api.request(method, path, headers={'Accept': 'application/json'})
    assert answer.status == status, answer.text


def _boot(api, image_ref, name):
    return api.request('POST', '/v2.1/servers', {'server': {
        'name': name, 'flavorRef': 'small', 'imageRef': image_ref}}, token='img:img')


def test_a_server_of_a_listed_image_records_it_and_is_scheduled_with_its_properties(api):
    booted = _boot(api, CIRROS.upper(), 'from-cirros')
    assert booted.status == 202, booted.text
    server = api.wait_for_status(booted.json['server']['id'], 'ACTIVE', token='img:img')
    assert server['image']['id'] == CIRROS

    refused = _boot(api, SPARC, 'on-sparc')
    assert refused.status == 202, refused.text
    failed = api.wait_for_status(refused.json['server']['id'], 'ERROR', token='img:img')
    assert 'removed by ImagePropertiesFilter' in failed['fault']['message'], failed['fault']


def test_an_imageref_the_catalog_does_not_list_is_400_with_nothing_written(api):
    before = api.request('GET', '/v2.1/servers', token='img:img').json['servers']
    refused = _boot(api, 'cirros', 'by-name')
    assert refused.status == 400
    assert refused.json['badRequest']['message'] == (
        'Invalid input for field/attribute imageRef: image cirros could not be found.')
    assert api.request('GET', '/v2.1/servers', token='img:img').json['servers'] == before


def test_the_image_as_a_local_block_device_is_accepted_and_volumes_are_refused(api):
    # What python-openstackclient sends for ``server create --image``.
    local = {'uuid': CIRROS, 'boot_index': 0, 'source_type': 'image',
             'destination_type': 'local', 'delete_on_termination': True}
    booted = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'osc-style', 'flavorRef': 'small', 'imageRef': CIRROS, 'networks': [],
        'block_device_mapping_v2': [local]}}, token='img:img')
    assert booted.status == 202, booted.text
    before = api.request('GET', '/v2.1/servers', token='img:img').json['servers']
    for bdm in ({**local, 'destination_type': 'volume', 'volume_size': 1},
                {**local, 'uuid': UBUNTU}, {'source_type': 'blank', 'boot_index': 0}):
        refused = api.request('POST', '/v2.1/servers', {'server': {
            'name': 'volume', 'flavorRef': 'small', 'imageRef': CIRROS,
            'block_device_mapping_v2': [bdm]}}, token='img:img')
        assert refused.status == 400, (bdm, refused.text)
        assert 'block_device_mapping_v2' in refused.json['badRequest']['message']
    assert api.request('GET', '/v2.1/servers', token='img:img').json['servers'] == before


def test_an_unexpected_error_is_a_500_without_a_traceback(api, monkeypatch):
    def broken():
        raise RuntimeError('catalog exploded')
    monkeypatch.setattr(api.services.images, 'images', broken)
    answer = api.request('GET', '/image/v2/images', headers={'Accept': 'application/json'})
    assert answer.status == 500
    assert 'exploded' not in answer.text and 'Traceback' not in answer.text
