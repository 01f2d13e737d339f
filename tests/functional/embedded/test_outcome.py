"""The demo's outcome reads each flavor's Placement resources as the scheduler does."""
from __future__ import annotations

from cellplane.db import engines, migrate
from cellplane.objects import flavors
from cellplane_embedded import outcome


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
