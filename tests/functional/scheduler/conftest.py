"""A real Placement for scheduler tests: the WSGI app in-process on a fresh SQLite file.

The migrated schema is built once per session and copied per test.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from cellplane.db import engines, migrate
from placement.client import Inventory, PlacementClient

_template: list[str] = []


def _migrated_template() -> str:
    if not _template:
        path = os.path.join(tempfile.mkdtemp(prefix='scheduler-placement-'), 'placement.db')
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync('placement', engine)
        engine.dispose()
        _template.append(path)
    return _template[0]


@pytest.fixture
def placement(tmp_path):
    path = tmp_path / 'placement.db'
    shutil.copy(_migrated_template(), path)
    engine = engines.create_engine(f'sqlite:///{path}')
    yield PlacementClient.in_process(engine)
    engine.dispose()


def add_compute_node(client: PlacementClient, name: str, *, vcpus: int = 16,
                     memory_mb: int = 4096, disk_gb: int = 100,
                     traits: tuple[str, ...] = ()) -> str:
    """A compute node provider with inventory; its UUID (rp-<name>-uuid)."""
    import uuid as uuidlib
    uuid = str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, name))
    client.ensure_provider(uuid, name)
    client.set_inventory(uuid, {'VCPU': Inventory(vcpus), 'MEMORY_MB': Inventory(memory_mb),
                                'DISK_GB': Inventory(disk_gb)})
    if traits:
        client.set_traits(uuid, traits)
    return uuid
