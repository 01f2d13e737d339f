"""The image catalog file: what it accepts, what it refuses (naming the entry), and edits picked up."""
from __future__ import annotations

import os

import pytest

from cellplane_api.image_catalog import CatalogError, ImageCatalog, parse

CIRROS = '7f1c4a8e-2b3d-4c5e-9f60-718293a4b5c6'
UBUNTU = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3'


def test_entries_take_glances_defaults_and_ids_are_normalised():
    [image] = parse(f'images:\n  - id: {CIRROS.upper().replace("-", "")}\n    name: cirros\n')
    assert (image.id, image.name, image.disk_format, image.container_format, image.min_disk,
            image.min_ram, image.size, image.properties) == (CIRROS, 'cirros', 'raw', 'bare',
                                                             0, 0, None, {})


@pytest.mark.parametrize('text, named', [
    ('images: [', 'is not YAML'),
    ('[]', 'must be object'),
    ('images:\n  - name: no-id\n', 'images[0] must contain'),
    ('images:\n  - id: not-a-uuid\n    name: x\n', 'images[0].id'),
    (f'images:\n  - id: {CIRROS}\n    name: x\n    disk_format: floppy\n',
     'images[0].disk_format'),
    (f'images:\n  - id: {CIRROS}\n    name: x\n    min_ram: -1\n', 'images[0].min_ram'),
    (f'images:\n  - id: {CIRROS}\n    name: x\n    colour: blue\n', 'images[0] must not'),
    (f'images:\n  - id: {CIRROS}\n    name: x\n    properties: {{min_ram: "1"}}\n',
     'images[0].properties uses the reserved name min_ram'),
    (f'images:\n  - id: {CIRROS}\n    name: a\n  - id: {CIRROS}\n    name: b\n',
     f'images[1] repeats the id {CIRROS}'),
])
def test_a_wrong_file_is_refused_naming_the_entry(text, named):
    with pytest.raises(CatalogError, match='the image catalog') as raised:
        parse(text)
    assert named in str(raised.value)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    with pytest.raises(CatalogError, match='cannot be read'):
        ImageCatalog(tmp_path / 'nothing.yaml')


def test_an_edit_is_read_again_and_a_broken_edit_keeps_the_last_good_catalog(tmp_path):
    path = tmp_path / 'images.yaml'
    path.write_text(f'images:\n  - id: {CIRROS}\n    name: cirros\n')
    catalog = ImageCatalog(path)
    assert [i.name for i in catalog.images()] == ['cirros']
    path.write_text(f'images:\n  - id: {CIRROS}\n    name: cirros\n'
                    f'  - id: {UBUNTU}\n    name: ubuntu\n    properties: {{os_distro: ubuntu}}\n')
    os.utime(path, ns=(1, 2_000_000_000_000_000_000))
    assert catalog.get(UBUNTU).properties == {'os_distro': 'ubuntu'}
    path.write_text('images: [')
    os.utime(path, ns=(1, 3_000_000_000_000_000_000))
    assert {i.name for i in catalog.images()} == {'cirros', 'ubuntu'}


def test_no_file_is_an_empty_catalog():
    catalog = ImageCatalog(None)
    assert (catalog.configured, catalog.images(), catalog.get(CIRROS)) == (False, [], None)
