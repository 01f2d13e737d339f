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


def _window(api, monkeypatch, uuids: dict[str, str], *, claimed, pivot: str,
            query: str) -> list[str]:
    """Claim once on each of ``claimed`` (their rows written again), then ask a
    randomized Placement for ``query`` with its pivot pinned at ``pivot``: the
    names of the window's providers, in the answer's order."""
    for name in claimed:
        api._ok(api.claim(str(uuidlib.uuid4()), {uuids[name]: {'VCPU': 1}}))
    pivot_id = _ids_by_name(api.engine)[pivot]
    windowed = Api(make_app(api.engine, auth_strategy='noauth2', sync_standards=False,
                            randomize_candidates=True), api.engine)
    monkeypatch.setattr(search.random, 'randint', lambda low, high: pivot_id)
    found = windowed.get(f'/allocation_candidates?resources=VCPU:1&{query}')
    assert found.status == 200, found.text
    names = {uuid: name for name, uuid in uuids.items()}
    return [names[next(iter(r['allocations']))] for r in found.json['allocation_requests']]


def test_a_window_is_the_providers_in_id_order_from_its_pivot(api, monkeypatch):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8})
             for i in range(PROVIDERS)}
    # Claims on cn03..cn06 write their rows again (their generations).
    window = _window(api, monkeypatch, uuids, claimed=['cn03', 'cn04', 'cn05', 'cn06'],
                     pivot='cn03', query='limit=4')
    assert window == ['cn03', 'cn04', 'cn05', 'cn06']


def test_a_window_wraps_around_in_id_order(api, monkeypatch):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8})
             for i in range(PROVIDERS)}
    window = _window(api, monkeypatch, uuids, claimed=['cn00', 'cn01', 'cn10'],
                     pivot='cn10', query='limit=4')
    assert window == ['cn10', 'cn11', 'cn00', 'cn01']


@pytest.mark.parametrize('query', ['required=CUSTOM_CELL_ONE', f'member_of={AGGREGATE}'])
def test_a_window_over_providers_with_a_trait_or_in_an_aggregate_is_in_id_order(
        api, monkeypatch, query):
    uuids = {f'cn{i:02d}': api.provider(f'cn{i:02d}', inventory={'VCPU': 8},
                                        traits=['CUSTOM_CELL_ONE'] if i % 2 else [],
                                        aggregates=[AGGREGATE] if i % 2 else [])
             for i in range(PROVIDERS)}
    window = _window(api, monkeypatch, uuids, claimed=['cn03', 'cn05'], pivot='cn02',
                     query=f'limit=3&{query}')
    assert window == ['cn03', 'cn05', 'cn07']
