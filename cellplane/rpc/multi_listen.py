"""One RPC listener for several server names: how a hollow compute agent hosts many hosts.

oslo.messaging's ``RPCServer`` listens as one server: on RabbitMQ it opens
a connection of its own and consumes the topic queue, the queue
``<topic>.<server>`` and a fanout queue. A process hosting 500 hosts with
500 servers would hold 500 connections (RabbitMQ's default limit on this
machine is 832 sockets in all), 500 heartbeat threads and 500 poll loops.

``listen_as(transport, target, servers)`` gives the same listener for
several server names at once, on ONE connection:

- RabbitMQ (``rabbit://``): ONE queue for all the names, the first name's
  ``<topic>.<server>`` (what a standalone server of that name consumes),
  bound to the exchange with the routing key ``<topic>.<name>`` of every
  other name too: a cast to ``server=<name>`` is routed to it as it would
  be to a one-host process's own queue; plus the topic queue and one fanout
  queue. A queue per name was the alternative, and what this did before:
  with quorum queues (cellplane's default) each is a Raft group with its
  own process, log and timers on the broker; 10 agents of 500 hosts
  declaring 5,000 of them took the machine's broker minutes (about 26 ms
  each here) and it stopped answering new connections meanwhile, where
  5,000 bindings take seconds and hold nothing between messages.
  oslo.messaging re-declares the queue when it reconnects (it is the
  connection's consumer, as its own listener's are), and the bindings
  with it. Messages a hollow agent of an earlier version left in its
  per-host queues stay there: delete those queues (or the vhost's, as
  ``deploy/run-local.sh purge`` does) when upgrading.
- The in-process ``fake://`` driver (the embedded mode): one listener with
  one target per server name, which looks at all its queues under one lock
  per sweep (the driver's own listener takes two locks and builds an
  exchange object per queue per sweep: 20,000 times a second for 1,000
  hosts).

Which server a message was sent to is not passed on: the endpoints find the
host a message is for in its arguments (compute API 1.2 gives every method
one). This module uses oslo.messaging's driver classes directly (the rabbit
driver's connection and listener, the fake driver's listener); it is the
only place that does: ``tests/functional/rpc/test_multi_listen.py`` runs it
on the in-memory bus, ``tests/integration/test_hollow_agents.py`` through the
daemons on a real broker.
"""
from __future__ import annotations

import time
from typing import Sequence

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
import oslo_messaging as messaging
from oslo_messaging._drivers import amqpdriver, base, common, impl_fake, impl_rabbit
from oslo_messaging.rpc.server import RPCServer


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
    first, *others = servers
    # As Connection.declare_topic_consumer makes it, plus the other names' keys.
    conn.declare_consumer(_ManyKeysConsumer(
        exchange_name=exchange, queue_name=f'{target.topic}.{first}',
        routing_key=f'{target.topic}.{first}', type='topic', durable=conn.durable,
        exchange_auto_delete=conn.amqp_auto_delete,
        queue_auto_delete=conn.amqp_auto_delete, callback=listener,
        rabbit_ha_queues=conn.rabbit_ha_queues,
        enable_cancel_on_failover=conn.enable_cancel_on_failover,
        rabbit_quorum_queue=conn.rabbit_quorum_queue,
        rabbit_quorum_queue_config=conn.rabbit_quorum_queue_config,
        more_routing_keys=[f'{target.topic}.{name}' for name in others]))
    conn.declare_fanout_consumer(target.topic, listener)
    return base.PollStyleListenerAdapter(listener, batch_size, batch_timeout)


class _ManyKeysConsumer(impl_rabbit.Consumer):
    """oslo.messaging's consumer of one queue, bound with more routing keys than its own.

    ``declare`` runs at the first connection and again at each reconnection:
    the bindings are made again with the queue (binding twice is a no-op).
    They are sent without waiting for each answer; the last one waits, so a
    refused binding fails the declaration as a refused queue would.
    """

    def __init__(self, *args, more_routing_keys: Sequence[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.more_routing_keys = list(more_routing_keys)

    def declare(self, conn):
        super().declare(conn)
        for index, key in enumerate(self.more_routing_keys):
            self.queue.bind_to(self.exchange, routing_key=key,
                               nowait=index < len(self.more_routing_keys) - 1)


def _listen_fake(driver, target, servers, batch_size, batch_timeout):
    exchange = target.exchange or driver._default_exchange
    targets = [messaging.Target(topic=target.topic, server=server, exchange=exchange)
               for server in servers]
    targets.append(messaging.Target(topic=target.topic, exchange=exchange))
    listener = _ManyQueuesFakeListener(driver._exchange_manager, targets)
    return base.PollStyleListenerAdapter(listener, batch_size, batch_timeout)


class _ManyQueuesFakeListener(impl_fake.FakeListener):
    """The fake driver's listener, for many queues of one exchange.

    A sweep takes the exchange's lock once and looks at every queue; it
    starts where the last message was found, so no host's queue waits
    behind the others'. Between empty sweeps it sleeps as the driver's does.
    """

    PAUSE = 0.05

    def __init__(self, exchange_manager, targets, pool=None) -> None:
        super().__init__(exchange_manager, targets, pool)
        self._exchange_name = targets[0].exchange
        self._queue_keys = [
            ('server', (t.topic, t.server)) if t.server else ('topic', (t.topic, pool))
            for t in targets]
        self._next = 0

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped.is_set():
            found = self._take_one()
            if found is not None:
                ctxt, message, reply_q, requeue = found
                return impl_fake.FakeIncomingMessage(ctxt, message, reply_q, requeue)
            pause = self.PAUSE
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                pause = min(pause, left)
            time.sleep(pause)
        return None

    def _take_one(self):
        # Looked up per sweep, not once: the driver's exchanges can be reset.
        exchange = self._exchange_manager.get_exchange(self._exchange_name)
        count = len(self._queue_keys)
        with exchange._queues_lock:
            for step in range(count):
                index = (self._next + step) % count
                kind, key = self._queue_keys[index]
                queues = exchange._server_queues if kind == 'server' else exchange._topic_queues
                queue = queues.get(key)
                if queue:
                    self._next = (index + 1) % count
                    return queue.pop(0)
        return None


class MultiServerRPCServer(RPCServer):
    """oslo.messaging's RPC server, listening as ``servers`` (see ``listen_as``)."""

    def __init__(self, transport, target, dispatcher, *, servers: Sequence[str]) -> None:
        super().__init__(transport, target, dispatcher)
        self._servers = list(servers)

    def _create_listener(self):
        return listen_as(self.transport, self._target, self._servers)
