"""The demo's outcome: each flavor's resources as the scheduler reads them, every allocation by provider name."""
from __future__ import annotations

import uuid as uuidlib

from cellplane.db import engines, migrate
from cellplane.objects import flavors
from cellplane_embedded import outcome
from placement.client import Inventory, PlacementClient


def test_flavor_resources_apply_the_resources_extra_specs(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/api.sqlite')
    try:
        migrate.sync('api', engine)
        flavors.create(engine, name='plain', vcpus=1, memory_mb=512, root_gb=0)
        flavors.create(engine, name='tuned', vcpus=2, memory_mb=1024, root_gb=10,
                       extra_specs={'resources:MEMORY_MB': '256', 'resources:DISK_GB': '0',
                                    'resources:CUSTOM_FPGA': '1'})
        assert outcome.flavor_resources(engine) == {
            'plain': {'VCPU': 1, 'MEMORY_MB': 512},
            'tuned': {'VCPU': 2, 'MEMORY_MB': 256, 'CUSTOM_FPGA': 1}}
    finally:
        engine.dispose()


def test_placement_allocations_name_each_consumers_providers(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/placement.sqlite')
    try:
        migrate.sync('placement', engine)
        placement = PlacementClient.in_process(engine)
        node = str(uuidlib.uuid4())
        placement.ensure_provider(node, 'cell1-host1')
        placement.set_inventory(node, {'VCPU': Inventory(8), 'MEMORY_MB': Inventory(4096)})
        consumer = str(uuidlib.uuid4())
        placement.claim(consumer, {node: {'VCPU': 2, 'MEMORY_MB': 512}},
                        project_id='p', user_id='u')
        assert outcome.placement_allocations(placement) == {
            consumer: {'cell1-host1': {'VCPU': 2, 'MEMORY_MB': 512}}}
    finally:
        engine.dispose()
