"""Where an instance is: the one answer the scheduler's locator and the cell conductor's group check share."""
from __future__ import annotations

from placement.client import ConsumerAllocations


def test_where_an_instance_is_is_its_first_provider_the_caller_accepts():
    found = ConsumerAllocations({'b-node': {'VCPU': 1}, 'a-disk': {'DISK_GB': 10}},
                                None, None, None)
    assert found.node() == 'a-disk'
    assert found.node(lambda provider: provider.endswith('node')) == 'b-node'
    assert ConsumerAllocations({}, None, None, None).node() is None
