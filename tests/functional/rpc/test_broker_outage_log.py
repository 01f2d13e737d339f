"""A broker outage is said once per process: one WARNING when RabbitMQ stops answering, one INFO when it is back.

A real RabbitMQ (its own vhost) reached through a TCP proxy that is stopped
(every connection dropped, new ones refused) and started again, under an
RPC server and client as every daemon builds them. oslo.messaging logs an
ERROR per connection and retry; ``cellplane.outage`` says it once.
Issue 28, finding 6. The client's pooled sending connection sits idle
through the outage; called only once the broker is said to answer again,
it finds its socket dead then, and that is no second outage.
"""
from __future__ import annotations

import logging
import time
import uuid

import oslo_messaging as messaging
import pytest
from sqlalchemy.engine import make_url

from cellplane.context import RequestContext
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from tests.support.tcp_proxy import TcpProxy

OUTAGE_SECONDS = 4


class Echo:
    target = messaging.Target(version='1.0')

    def echo(self, ctxt, value):
        return value


def _outage_said(caplog):
    return [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name == 'cellplane.outage']


@pytest.mark.parametrize('call_when', ['at_once', 'once_said_back'])
def test_a_broker_outage_logs_one_warning_and_one_info(transport_url_factory, caplog,
                                                       call_when):
    real = transport_url_factory('outage')
    parsed = make_url(real.replace('rabbit://', 'postgresql://', 1))   # a URL parser
    proxy = TcpProxy(parsed.host or '127.0.0.1', parsed.port or 5672).start()
    through = real.replace(f'@{parsed.host}:{parsed.port}/', f'@127.0.0.1:{proxy.port}/')
    assert through != real
    transport = get_transport(through)
    topic = f'echo-{uuid.uuid4().hex[:8]}'
    server = build_server(transport, topic=topic, server='h1', endpoints=[Echo()])
    client = messaging.get_rpc_client(transport, messaging.Target(topic=topic),
                                      timeout=60)
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    server.start()
    try:
        assert client.call(RequestContext().to_dict(), 'echo', value=1) == 1
        proxy.stop()
        time.sleep(OUTAGE_SECONDS)
        proxy.start()
        if call_when == 'once_said_back':
            deadline = time.monotonic() + 30
            while len(_outage_said(caplog)) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert [level for level, _ in _outage_said(caplog)] == ['WARNING', 'INFO']
        assert client.call(RequestContext().to_dict(), 'echo', value=2) == 2
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
        proxy.stop()
    said = _outage_said(caplog)
    broker = f'amqp://127.0.0.1:{proxy.port}'
    assert [level for level, _ in said] == ['WARNING', 'INFO'], said
    assert said[0][1].startswith(f'Broker at {broker} is not answering: ')
    assert said[1][1].startswith(f'Broker at {broker} answers again, after ')
