"""The diagnostics endpoint every cellplane daemon serves: ``ping``.

It lives in its own RPC namespace with its own version, beside each
service's API, so that any daemon can be pinged with the same client call
whatever its service's API version is.
"""
from __future__ import annotations

import logging
import time

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc.serializer import PayloadSerializer

# isort: split
import oslo_messaging as messaging

from rpc_schemas.ping import MAX_HOLD_SECONDS, Ping, Pong

LOG = logging.getLogger(__name__)

NAMESPACE = 'diagnostics'
API_VERSION = '1.0'


def ping(transport: messaging.Transport, ctxt, *, topic: str, server: str | None = None,
         message: str = '', hold_seconds: float | None = None,
         timeout: float | None = None) -> Pong:
    """Ping a server of ``topic`` (``server``: that host's) and return its ``Pong``.

    The building block of ``cellplane-manage rpc ping`` style diagnostics;
    raises ``oslo_messaging.MessagingTimeout`` when nobody answers.
    """
    kwargs = {}
    if server is not None:
        kwargs['server'] = server
    if timeout is not None:
        kwargs['timeout'] = timeout
    client = messaging.get_rpc_client(
        transport, messaging.Target(topic=topic, namespace=NAMESPACE, version=API_VERSION),
        serializer=PayloadSerializer())
    if kwargs:
        client = client.prepare(**kwargs)
    return client.call(ctxt, 'ping', ping=Ping(message=message, hold_seconds=hold_seconds))


class DiagnosticsEndpoint:
    """Answers ``ping`` for the daemon identified by ``host`` and ``binary``."""

    target = messaging.Target(namespace=NAMESPACE, version=API_VERSION)

    def __init__(self, *, host: str, binary: str) -> None:
        self.host = host
        self.binary = binary

    def ping(self, ctxt, ping: Ping) -> Pong:
        if not isinstance(ping, Ping):
            raise TypeError(f'ping expects a Ping payload, got {type(ping).__name__}')
        hold = min(ping.hold_seconds or 0.0, MAX_HOLD_SECONDS)
        if hold:
            LOG.info('Ping %r: holding %.1f s before answering', ping.message, hold)
            time.sleep(hold)
            LOG.info('Ping %r: held %.1f s, answering', ping.message, hold)
        LOG.debug('Answering ping %r', ping.message)
        return Pong(message=ping.message, host=self.host, binary=self.binary,
                    held_seconds=hold)
