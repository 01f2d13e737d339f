"""PayloadSerializer: payloads cross as JSON-safe envelopes; bad ones are rejected and logged."""
from __future__ import annotations

import datetime
import json
import logging

import pytest

from cellplane.context import RequestContext, is_request_id, new_context
from cellplane.rpc.serializer import PayloadRejected, PayloadSerializer, PinnedPayload
from rpc_schemas.errors import PayloadDowngradeError
from rpc_schemas.ping import Ping
from rpc_schemas.service_status import ServiceStatus

NOW = datetime.datetime(2026, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)


@pytest.fixture
def serializer():
    return PayloadSerializer()


def _status() -> ServiceStatus:
    return ServiceStatus(host='h', binary='b', topic='t', report_time=NOW, version='1')


def test_payloads_in_lists_and_dicts_become_json_safe_envelopes_and_come_back(serializer):
    ctxt = new_context()
    entity = {'status': _status(), 'pings': [Ping(message='a'), Ping(hold_seconds=1.0)],
              'plain': 3}
    wire = json.loads(json.dumps(serializer.serialize_entity(ctxt, entity)))
    assert wire['status']['cellplane.name'] == 'ServiceStatus'
    assert wire['pings'][1] == {'cellplane.name': 'Ping', 'cellplane.version': '1.0',
                                'cellplane.data': {'message': '', 'hold_seconds': 1.0}}
    assert serializer.deserialize_entity(ctxt, wire) == entity


@pytest.mark.parametrize('envelope, reason', [
    ({'cellplane.name': 'Nope', 'cellplane.version': '1.0', 'cellplane.data': {}},
     "unknown payload 'Nope'"),
    ({'cellplane.name': 'Ping', 'cellplane.version': '9.0', 'cellplane.data': {}},
     'Ping version 9.0 is not supported here'),
    ({'cellplane.name': 'ServiceStatus', 'cellplane.version': '1.0',
      'cellplane.data': {'binary': 'b', 'topic': 't', 'version': '1',
                         'report_time': NOW.isoformat()}},
     "'host' is a required property"),
], ids=['unknown-name', 'unknown-version', 'missing-field'])
def test_bad_envelope_is_rejected_with_an_error_log_naming_the_problem(
        serializer, caplog, envelope, reason):
    ctxt = new_context()
    with caplog.at_level(logging.ERROR, logger='cellplane.rpc.serializer'):
        with pytest.raises(PayloadRejected, match=reason):
            serializer.deserialize_entity(ctxt, envelope)
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert reason in record.getMessage()
    assert ctxt.request_id in record.getMessage()


def test_pinned_payload_is_sent_at_its_older_version(serializer):
    # Ping has no older minor; a pin to its own version is the identity.
    wire = serializer.serialize_entity(None, PinnedPayload(Ping(message='x'), '1.0'))
    assert wire['cellplane.version'] == '1.0'


def test_pinning_to_an_impossible_version_fails_at_the_sender():
    with pytest.raises(PayloadDowngradeError):
        PinnedPayload(Ping(), '2.0')


def test_context_carries_request_and_identity_only(serializer):
    ctxt = RequestContext(user_id='u1', project_id='p1', auth_token='secret',
                          overwrite=False)
    wire = serializer.serialize_context(ctxt)
    assert wire == {'request_id': ctxt.request_id, 'global_request_id': None,
                    'user_id': 'u1', 'project_id': 'p1'}
    received = serializer.deserialize_context(json.loads(json.dumps(wire)))
    assert (received.request_id, received.user_id, received.project_id) == (
        ctxt.request_id, 'u1', 'p1')


@pytest.mark.parametrize('wire', [{}, None, 'junk', {'request_id': 'x; DROP', 'user_id': 5}])
def test_missing_or_damaged_context_gets_a_fresh_request_id(serializer, wire):
    received = serializer.deserialize_context(wire)
    assert is_request_id(received.request_id)
    assert received.user_id is None


def test_generated_request_ids_are_req_uuid():
    assert is_request_id(new_context().request_id)
    assert new_context().request_id != new_context().request_id
