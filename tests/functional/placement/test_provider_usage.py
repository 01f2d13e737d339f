"""GET /resource_providers/{uuid}/usages: the sum of the provider's allocations."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from placement.db.models import allocations
from placement.objects import resource_class as rc_obj


def test_missing_provider_is_404(client):
    assert client.get(f'/resource_providers/{uuid.uuid4()}/usages').status_int == 404


def test_usages_sum_allocations_and_list_every_inventory_class(client):
    rp = client.provider('cn1')['uuid']
    client.put(f'/resource_providers/{rp}/inventories', {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 8}, 'DISK_GB': {'total': 100}}})
    with client.engine.begin() as conn:
        rp_id = conn.execute(sa.text('SELECT id FROM resource_providers WHERE uuid = :u'),
                             {'u': rp}).scalar()
        for used in (2, 3):
            conn.execute(allocations.insert().values(
                resource_provider_id=rp_id, consumer_id=str(uuid.uuid4()),
                resource_class_id=rc_obj.STANDARD_IDS['VCPU'], used=used))
    resp = client.get(f'/resource_providers/{rp}/usages', mv='1.15')
    assert resp.status_int == 200
    assert resp.json == {'resource_provider_generation': 1,
                         'usages': {'VCPU': 5, 'DISK_GB': 0}}
    assert resp.headers['Cache-Control'] == 'no-cache'


def test_no_inventory_no_usages(client):
    rp = client.provider('cn1')['uuid']
    assert client.get(f'/resource_providers/{rp}/usages').json == {
        'resource_provider_generation': 0, 'usages': {}}
