"""One RPC listener for several server names: how a hollow compute agent hosts many hosts.

oslo.messaging's ``RPCServer`` listens as one server: on RabbitMQ it opens
a connection of its own and consumes the topic queue, the queue
``<topic>.<server>`` and a fanout queue. A process hosting 500 hosts with
500 servers would hold 500 connections (RabbitMQ's default limit on this
machine is 832 sockets in all), 500 heartbeat threads and 500 poll loops.

``listen_as(transport, target, servers)`` gives the same listener for
several server names at once, on ONE connection:

- RabbitMQ (``rabbit://``): one consumer per ``<topic>.<server>`` queue,
  each the very queue a standalone server of that name would consume, so a
  cast to ``server=<name>`` reaches it exactly as it would reach a
  one-host process; plus the topic queue and one fanout queue. oslo.messaging
  re-declares all of them when it reconnects (they are the connection's
  consumers, as its own listener's are).
- The in-process ``fake://`` driver (the embedded mode): one listener with
  one target per server name.

Which server a message was sent to is not passed on: the endpoints find the
host a message is for in its arguments (compute API 1.2 gives every method
one). This module uses oslo.messaging's driver classes directly (the rabbit
driver's connection and listener, the fake driver's listener); it is the
only place that does, and ``tests/integration/test_multi_listen.py`` runs it
against a real broker.
"""
from __future__ import annotations

from typing import Sequence

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
import oslo_messaging as messaging  # noqa: E402,I100
from oslo_messaging._drivers import amqpdriver, base, common, impl_fake  # noqa: E402,I100
from oslo_messaging.rpc.server import RPCServer  # noqa: E402,I100


class UnsupportedTransport(Exception):
    """The transport's driver cannot serve several server names on one listener."""


def listen_as(transport: messaging.Transport, target: messaging.Target,
              servers: Sequence[str], *, batch_size: int = 1,
              batch_timeout: float | None = None):
    """A listener for ``target.topic`` as every name in ``servers`` (the first is ``target.server``)."""
    driver = transport._driver
    if isinstance(driver, amqpdriver.AMQPDriverBase):
        return _listen_amqp(driver, target, servers, batch_size, batch_timeout)
    if isinstance(driver, impl_fake.FakeDriver):
        return _listen_fake(driver, target, servers, batch_size, batch_timeout)
    raise UnsupportedTransport(
        f'one process serving several hosts needs the rabbit:// or fake:// transport, '
        f'not {type(driver).__name__}')


def _listen_amqp(driver, target, servers, batch_size, batch_timeout):
    conn = driver._get_connection(common.PURPOSE_LISTEN)
    listener = amqpdriver.RpcAMQPListener(driver, conn)
    exchange = driver._get_exchange(target)
    conn.declare_topic_consumer(exchange_name=exchange, topic=target.topic,
                                callback=listener)
    for server in servers:
        conn.declare_topic_consumer(exchange_name=exchange,
                                    topic=f'{target.topic}.{server}', callback=listener)
    conn.declare_fanout_consumer(target.topic, listener)
    return base.PollStyleListenerAdapter(listener, batch_size, batch_timeout)


def _listen_fake(driver, target, servers, batch_size, batch_timeout):
    exchange = target.exchange or driver._default_exchange
    targets = [messaging.Target(topic=target.topic, server=server, exchange=exchange)
               for server in servers]
    targets.append(messaging.Target(topic=target.topic, exchange=exchange))
    listener = impl_fake.FakeListener(driver._exchange_manager, targets)
    return base.PollStyleListenerAdapter(listener, batch_size, batch_timeout)


class MultiServerRPCServer(RPCServer):
    """oslo.messaging's RPC server, listening as ``servers`` (see ``listen_as``)."""

    def __init__(self, transport, target, dispatcher, *, servers: Sequence[str]) -> None:
        super().__init__(transport, target, dispatcher)
        self._servers = list(servers)

    def _create_listener(self):
        return listen_as(self.transport, self._target, self._servers)
