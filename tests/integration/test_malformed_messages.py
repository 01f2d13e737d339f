"""A daemon refuses malformed messages with one logged ERROR each and goes on serving.

The daemon under test is a cell conductor; the test process sends the bad
messages (through oslo.messaging with raw dicts in place of payloads, or
published raw to the topic queue with kombu) and then a good ping, which
must be answered.
"""
from __future__ import annotations

import kombu
import oslo_messaging as messaging
import pytest

from cellplane.context import new_context
from cellplane.rpc.serializer import PayloadSerializer
from conductor.cell.rpcapi import CellConductorAPI
from rpc_schemas.ping import Pong
from tests.integration.daemons import cell_conductor_config

NOW = '2026-11-22T08:00:00+00:00'


@pytest.fixture
def conductor(daemons, transport_url_factory, sqlite_cell_db, client_transport_factory):
    url = transport_url_factory('malformed')
    daemon = daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db))
    daemon.start().wait_until_serving()
    transport = client_transport_factory(url)
    daemon.url = url
    daemon.api = CellConductorAPI(transport, timeout=30)
    # A plain oslo.messaging client: it sends dicts as they are, so the test
    # can put on the wire what no cellplane client would.
    daemon.raw = messaging.get_rpc_client(
        transport, messaging.Target(topic='conductor'), serializer=PayloadSerializer(),
        timeout=30)
    return daemon


def _still_serving(conductor) -> None:
    pong = conductor.api.ping(new_context(), 'still there?')
    assert pong == Pong(message='still there?', host='cond1',
                        binary='cellplane-conductor', held_seconds=0.0)


def _raw_ping_call(conductor, envelope: dict) -> str:
    """Call ping with ``envelope`` as it is on the wire; return the remote error text."""
    client = conductor.raw.prepare(namespace='diagnostics', version='1.0')
    with pytest.raises(messaging.RemoteError) as err:
        client.call(new_context(), 'ping', ping=envelope)
    assert err.value.exc_type == 'PayloadRejected'
    return err.value.value


def test_unknown_payload_name_is_rejected_and_logged_and_the_daemon_goes_on(conductor):
    reason = _raw_ping_call(conductor, {'cellplane.name': 'Pingg', 'cellplane.version': '1.0',
                                        'cellplane.data': {}})
    assert "unknown payload 'Pingg'" in reason
    [line] = conductor.wait_for_log(r'ERROR .*Rejected an RPC message')
    assert "unknown payload 'Pingg' (version '1.0')" in line
    _still_serving(conductor)


def test_unknown_payload_version_is_rejected_and_logged_and_the_daemon_goes_on(conductor):
    reason = _raw_ping_call(conductor, {'cellplane.name': 'Ping', 'cellplane.version': '2.0',
                                        'cellplane.data': {}})
    assert 'Ping version 2.0 is not supported here' in reason
    [line] = conductor.wait_for_log(r'ERROR .*Rejected an RPC message')
    assert 'Ping version 2.0 is not supported here' in line
    _still_serving(conductor)


def test_cast_with_a_missing_field_is_rejected_and_logged_and_the_daemon_goes_on(conductor):
    status_without_host = {
        'cellplane.name': 'ServiceStatus', 'cellplane.version': '1.0',
        'cellplane.data': {'binary': 'cellplane-compute', 'topic': 'compute',
                           'version': '0.1.0', 'report_time': NOW}}
    conductor.raw.prepare(version='1.0').cast(
        new_context(), 'service_heartbeat', status=status_without_host)
    [line] = conductor.wait_for_log(r'ERROR .*Rejected an RPC message')
    assert "ServiceStatus 1.0 data is invalid: 'host' is a required property" in line
    _still_serving(conductor)
    # Logged once, with no second traceback from oslo.messaging for it.
    assert 'Exception during message handling' not in conductor.log()


@pytest.mark.parametrize('body, content_type', [
    (b'this is not json {', 'application/json'),
    (b'plain words', 'text/plain'),
    (b'[1, 2, 3]', 'application/json'),
    (b'{"oslo.version": "2.0", "oslo.message": "not json either"}', 'application/json'),
], ids=['not-json', 'text-plain', 'json-array', 'inner-not-json'])
def test_body_that_is_not_a_json_message_is_dropped_logged_once_and_the_daemon_goes_on(
        conductor, body, content_type):
    with kombu.Connection(conductor.url.replace('rabbit://', 'amqp://', 1)) as conn:
        conn.Producer().publish(
            body, exchange=kombu.Exchange('openstack', type='topic', durable=False),
            routing_key='conductor', content_type=content_type, content_encoding='utf-8')
    conductor.wait_for_log(r'ERROR .*Dropped an RPC message that is not a JSON')
    _still_serving(conductor)
    # Rejected without requeue: it is not redelivered (which would log again).
    _still_serving(conductor)
    dropped = [line for line in conductor.log().splitlines()
               if 'Dropped an RPC message' in line]
    assert len(dropped) == 1, dropped


def test_json_object_that_is_not_an_rpc_message_is_rejected_and_the_daemon_goes_on(conductor):
    with kombu.Connection(conductor.url.replace('rabbit://', 'amqp://', 1)) as conn:
        conn.Producer().publish(
            '{"oslo.version": "2.0", "oslo.message": "{\\"hello\\": 1}"}',
            exchange=kombu.Exchange('openstack', type='topic', durable=False),
            routing_key='conductor', content_type='application/json',
            content_encoding='utf-8')
    [line] = conductor.wait_for_log(r'ERROR .*Rejected an RPC message')
    assert 'it names no method (method = None)' in line
    _still_serving(conductor)
    assert 'Traceback' not in conductor.log()
