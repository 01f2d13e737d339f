"""An in-process message bus for the embedded mode: one isolated bus per level, messages copied.

It is oslo.messaging's ``fake://`` driver with two changes, so that the
embedded mode behaves like RabbitMQ where it matters:

- **Copies, as a broker does.** Every message (context and arguments) is
  encoded with ``oslo_serialization.jsonutils`` and decoded again before a
  server sees it, and so is every reply before the caller sees it: the
  very encoding the rabbit driver puts on the wire. A payload that would not
  survive RabbitMQ does not survive here, and a receiver that changes what
  it received cannot change the sender's objects (plain ``fake://`` hands
  over the sender's dicts by reference, which hides serialization bugs).
- **Isolated levels.** ``fake://`` keeps its exchanges in a class attribute
  shared by every transport of the process, so two ``fake://`` transports
  are one bus. Each ``MemoryBus`` has an exchange name of its own, which
  makes the top level and each cell separate, like RabbitMQ vhosts, and
  ``cleanup`` forgets only its own exchange.

Why not ``kombu+memory:////``, which also copies: it polls. Measured on this
2-core box (oslo.messaging 18.3.1, 12 idle RPC servers, 5 s): kombu+memory
burns 56 % of a core doing nothing and answers a call in 13 ms (median);
``fake://`` with this copying burns under 1 % and answers in 3 ms. The
embedded demo runs a dozen servers on a shared 2-core machine, so the
choice is this one. (Idle ``fake://`` listeners still wake every 50 ms; a
message waits at most that long for its server.)
"""
from __future__ import annotations

import queue
import uuid

from oslo_config import cfg
from oslo_serialization import jsonutils

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
import oslo_messaging as messaging
from oslo_messaging import transport as messaging_transport
from oslo_messaging._drivers import impl_fake

URL = 'fake://'


def wire_copy(value):
    """``value`` as a receiver behind RabbitMQ gets it: encoded to JSON and decoded."""
    return jsonutils.loads(jsonutils.dumps(value))


class CopyingFakeDriver(impl_fake.FakeDriver):
    """``fake://`` that copies messages and replies through JSON, on its own exchange."""

    def _send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
              transport_options=None):
        ctxt, message = wire_copy(ctxt), wire_copy(message)
        exchange = self._exchange_manager.get_exchange(target.exchange)
        reply_q = queue.Queue() if wait_for_reply else None
        exchange.deliver_message(target.topic, ctxt, message, server=target.server,
                                 fanout=target.fanout, reply_q=reply_q)
        if not wait_for_reply:
            return None
        try:
            reply, failure = reply_q.get(timeout=timeout)
        except queue.Empty:
            raise messaging.MessagingTimeout(f'No reply on topic {target.topic}') from None
        if failure:
            raise failure
        return wire_copy(reply)

    def cleanup(self):
        # The parent clears every fake exchange of the process; drop only ours.
        with impl_fake.FakeExchangeManager._exchanges_lock:
            impl_fake.FakeExchangeManager._exchanges.pop(self._default_exchange, None)


class MemoryBus:
    """One level's bus (the top level, or one cell): an RPC transport of its own."""

    def __init__(self, name: str, conf: cfg.ConfigOpts = cfg.CONF) -> None:
        self.name = name
        # A unique exchange: two embedded runs in one process (tests) stay apart.
        self.exchange = f'cellplane-{name}-{uuid.uuid4().hex[:8]}'
        url = messaging.TransportURL.parse(conf, URL)
        driver = CopyingFakeDriver(conf, url, default_exchange=self.exchange)
        # get_rpc_transport would load the stock fake driver by entry point;
        # the transport class is built the same way around ours.
        self.transport = messaging_transport.RPCTransport(driver)

    def cleanup(self) -> None:
        self.transport.cleanup()
