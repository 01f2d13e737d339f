"""Error ``detail`` is readable through clients that show its last line.

osc-placement raises ``detail.split('\\n')[-1].strip()`` as the command's
error. A schema-validation 400 must therefore put the reason on that line:
the validator's own line breaks are folded into spaces, as the reference
does.
"""
from __future__ import annotations

import uuid

import pytest

from tests.functional.placement.conftest import error

RP = str(uuid.uuid4())


def osc_message(detail: str) -> str:
    """What osc-placement prints for an error response (its http.py)."""
    return detail.split('\n')[-1].strip()


def _inventory(client):
    return client.put(f'/resource_providers/{RP}/inventories',
                      {'resource_provider_generation': 0,
                       'inventories': {'VCPU': {'total': 0}}})


def _allocation_bad_consumer_type(client):
    return client.put(f'/allocations/{uuid.uuid4()}',
                      {'allocations': {RP: {'resources': {'VCPU': 1}}},
                       'project_id': 'p', 'user_id': 'u',
                       'consumer_generation': None, 'consumer_type': 'lower'})


# (what the operator ran, the request it sends, the line osc must show first)
CASES = [
    ('resource class create lowercase_bad',
     lambda c: c.post('/resource_classes', {'name': 'lowercase_bad'}),
     "JSON does not validate: 'lowercase_bad' does not match '^CUSTOM_[A-Z0-9_]+$'"),
    ('resource provider create --uuid not-a-uuid',
     lambda c: c.post('/resource_providers', {'name': 'x', 'uuid': 'not-a-uuid'}),
     "JSON does not validate: 'not-a-uuid' is not a 'uuid'"),
    ('resource provider create <201 characters>',
     lambda c: c.post('/resource_providers', {'name': 'n' * 201}),
     f"JSON does not validate: '{'n' * 201}' is too long"),
    ('allocation candidate list --limit 0',
     lambda c: c.get('/allocation_candidates?resources=VCPU:1&limit=0'),
     "Invalid query string parameters: '0' does not match '^[1-9][0-9]*$'"),
    ('resource provider inventory set --resource VCPU=0',
     _inventory,
     'JSON does not validate: 0 is less than the minimum of 1'),
    ('allocation set with consumer type "lower"',
     _allocation_bad_consumer_type,
     "JSON does not validate: 'lower' does not match '^[A-Z0-9_]+$'"),
]


@pytest.mark.parametrize('request_, reason', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_validation_error_is_one_line_with_its_reason(client, request_, reason):
    client.provider('rp', uuid=RP)
    resp = request_(client)
    assert resp.status_int == 400, resp.text
    detail = error(resp)['detail']
    explanation, _, message = detail.partition('\n\n')
    assert explanation.startswith('The server could not comply with the request')
    assert '\n' not in message and '\r' not in message
    shown = osc_message(detail)
    assert shown.startswith(reason), shown
    # The rest of the validator's message is kept, on the same line.
    assert "Failed validating" in shown


def test_line_breaks_a_client_sent_are_folded_too(client):
    client.provider('a\r\nb')
    resp = client.post('/resource_providers', {'name': 'a\r\nb'})
    assert resp.status_int == 409
    assert osc_message(error(resp)['detail']) == \
        'Conflicting resource provider name: a b already exists.'


def test_angle_brackets_in_a_name_are_kept(client):
    # The reference's WebOb strips anything between < and >; a name is
    # what the operator needs to read, so we keep it.
    client.provider('a<b>c')
    resp = client.post('/resource_providers', {'name': 'a<b>c'})
    assert osc_message(error(resp)['detail']) == \
        'Conflicting resource provider name: a<b>c already exists.'
