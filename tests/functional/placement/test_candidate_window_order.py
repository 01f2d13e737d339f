"""A random window of allocation candidates is the providers in id order from its pivot.

With ``randomize_allocation_candidates`` and a ``limit``, Placement starts
at a random provider id and answers the first ``limit`` fitting providers
from there, wrapping around. "First" must mean by id, not in whatever
order the database happens to keep the rows: a provider's row is written
again at each claim (its generation), and PostgreSQL then returns it after
the others in a scan. Windows in that order kept landing on the providers
claimed most recently, and the scheduler's spreading weighers, which choose
within a window, filled 57 of 100 hosts with 400 instances.
"""
from __future__ import annotations

import uuid as uuidlib

import pytest
import sqlalchemy as sa

from placement.objects.allocation_candidates import search
from placement.wsgi import make_app
from tests.functional.placement.inprocess import Api

PROVIDERS = 12
AGGREGATE = '5b1f1f1e-7a5e-4a5c-9a5e-0c1f2a3b4c5d'


def _ids_by_name(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return dict(conn.execute(sa.text('SELECT name, id FROM resource_providers')).all())


def test_a_window_is_the_providers_in_id_order_from_its_pivot(api, monkeypatch):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8})
             for i in range(PROVIDERS)}
    # Claims on cn03..cn06 write their rows again (their generations).
    for i in range(3, 7):
        api._ok(api.claim(str(uuidlib.uuid4()), {uuids[f'cn{i:02d}']: {'VCPU': 1}}))
    ids = _ids_by_name(api.engine)
    windowed = Api(make_app(api.engine, auth_strategy='noauth2', sync_standards=False,
                            randomize_candidates=True), api.engine)
    monkeypatch.setattr(search.random, 'randint', lambda low, high: ids['cn03'])

    found = windowed.get('/allocation_candidates?resources=VCPU:1&limit=4')

    assert found.status == 200, found.text
    names = {uuid: name for name, uuid in uuids.items()}
    window = [names[next(iter(r['allocations']))] for r in found.json['allocation_requests']]
    assert window == ['cn03', 'cn04', 'cn05', 'cn06']


def test_a_window_wraps_around_in_id_order(api, monkeypatch):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8})
             for i in range(PROVIDERS)}
    for i in (0, 1, 10):
        api._ok(api.claim(str(uuidlib.uuid4()), {uuids[f'cn{i:02d}']: {'VCPU': 1}}))
    ids = _ids_by_name(api.engine)
    windowed = Api(make_app(api.engine, auth_strategy='noauth2', sync_standards=False,
                            randomize_candidates=True), api.engine)
    monkeypatch.setattr(search.random, 'randint', lambda low, high: ids['cn10'])

    found = windowed.get('/allocation_candidates?resources=VCPU:1&limit=4')

    names = {uuid: name for name, uuid in uuids.items()}
    window = [names[next(iter(r['allocations']))] for r in found.json['allocation_requests']]
    assert window == ['cn10', 'cn11', 'cn00', 'cn01']


@pytest.mark.parametrize('query', ['required=CUSTOM_CELL_ONE', f'member_of={AGGREGATE}'])
def test_a_window_over_providers_with_a_trait_or_in_an_aggregate_is_in_id_order(
        api, monkeypatch, query):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8},
                                        traits=['CUSTOM_CELL_ONE'] if i % 2 else [],
                                        aggregates=[AGGREGATE] if i % 2 else [])
             for i in range(PROVIDERS)}
    for i in (3, 5):
        api._ok(api.claim(str(uuidlib.uuid4()), {uuids[f'cn{i:02d}']: {'VCPU': 1}}))
    ids = _ids_by_name(api.engine)
    windowed = Api(make_app(api.engine, auth_strategy='noauth2', sync_standards=False,
                            randomize_candidates=True), api.engine)
    monkeypatch.setattr(search.random, 'randint', lambda low, high: ids['cn02'])

    found = windowed.get(f'/allocation_candidates?resources=VCPU:1&limit=3&{query}')

    assert found.status == 200, found.text
    names = {uuid: name for name, uuid in uuids.items()}
    window = [names[next(iter(r['allocations']))] for r in found.json['allocation_requests']]
    assert window == ['cn03', 'cn05', 'cn07']
