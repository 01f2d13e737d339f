"""Building an RPC server: threading executor, pools sized to it, payload serializer.

Every cellplane daemon serves its topic through ``build_server``. Handlers
run in ``[DEFAULT] rpc_handler_threads`` threads (oslo.messaging's threading
executor; eventlet is never used); ``cellplane.rpc.options.size_pools``
sizes the rabbit connection pool to match, because each handler thread that
replies or casts takes a connection: with the library's default of 30, a
busier executor logs "Connection pool limit exceeded" and waits.

Before a message is dispatched its shape is checked (a method name, an
object of arguments), so that a foreign JSON object on the queue is refused
with one clear ERROR line instead of a TypeError traceback. A handler that
fails because its database is away (``cellplane.db.away``) is not logged
with a traceback either: the engine said the outage once
(``cellplane.outage``), and a caller still gets the error back.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Sequence

from cellplane import (
    metrics,
    rpc,  # noqa: F401 - filters the eventlet warning first
)
from cellplane.db import away
from cellplane.rpc import quiet_executor
from cellplane.rpc.multi_listen import MultiServerRPCServer
from cellplane.rpc.rejections import MalformedMessage, MessageRejected
from cellplane.rpc.serializer import PayloadSerializer

# isort: split
import oslo_messaging as messaging
from oslo_messaging.rpc.server import RPCServer

LOG = logging.getLogger(__name__)


def describe_malformed(message: Any) -> str | None:
    """What an incoming RPC message lacks, or None if its shape is right."""
    method = message.get('method')
    if not isinstance(method, str) or not method:
        return f'it names no method (method = {method!r})'
    if not isinstance(message.get('args', {}), dict):
        return f'the arguments of {method!r} are not a JSON object'
    namespace = message.get('namespace')
    if namespace is not None and not isinstance(namespace, str):
        return f'the namespace of {method!r} is not a string'
    if not isinstance(message.get('version', '1.0'), str):
        return f'the version of {method!r} is not a string'
    return None


class ShapeCheckingDispatcher(messaging.RPCDispatcher):
    """oslo.messaging's dispatcher, refusing messages without an RPC message's shape.

    It counts every message (``cellplane_rpc_messages_total``) by method
    (one of the endpoints', else ``unknown``) and outcome: an exception the
    endpoint declared expected (``messaging.expected_exceptions``:
    NoValidHost, a request it cannot do) is a refusal, not an error, unless
    the endpoint marked it ``rpc_outcome = 'error'`` (an outage it met).
    """

    def __init__(self, endpoints, serializer, access_policy) -> None:
        super().__init__(endpoints, serializer, access_policy)
        self._methods = {name for endpoint in endpoints for name in dir(endpoint)
                         if not name.startswith('_')
                         and callable(getattr(endpoint, name, None))}

    def dispatch(self, incoming):
        method = incoming.message.get('method') if isinstance(incoming.message, dict) else None
        label = method if method in self._methods else 'unknown'
        problem = describe_malformed(incoming.message)
        if problem:
            LOG.error('Rejected an RPC message (message id %s): %s',
                      getattr(incoming, 'msg_id', None), problem)
            metrics.RPC_MESSAGES.labels(label, 'rejected').inc()
            raise MalformedMessage(problem)
        try:
            result = super().dispatch(incoming)
        except MessageRejected:
            metrics.RPC_MESSAGES.labels(label, 'rejected').inc()
            raise
        except messaging.ExpectedException as expected:
            cause = expected.exc_info[1]
            metrics.RPC_MESSAGES.labels(
                label, getattr(cause, 'rpc_outcome', 'refused')).inc()
            raise
        except Exception as exc:
            metrics.RPC_MESSAGES.labels(label, 'error').inc()
            if away.is_away(exc):
                # oslo.messaging logs an expected exception at DEBUG, without
                # a traceback, and still returns it to a caller.
                LOG.debug('%s failed: its database is away (%s)', label, away.first_line(exc))
                raise messaging.ExpectedException() from exc
            raise
        metrics.RPC_MESSAGES.labels(label, 'handled').inc()
        return result


def build_server(transport: messaging.Transport, *, topic: str, server: str,
                 endpoints: Iterable[object],
                 serializer: messaging.Serializer | None = None,
                 also_as: Sequence[str] = ()) -> messaging.MessageHandlingServer:
    """An RPC server on ``topic`` (and ``topic.server`` for messages to this host).

    ``also_as``: more server names this one server answers to, on the same
    listener (``multi_listen``: a process hosting several hosts).
    """
    target = messaging.Target(topic=topic, server=server)
    dispatcher = ShapeCheckingDispatcher(
        list(endpoints), serializer or PayloadSerializer(),
        messaging.DefaultRPCAccessPolicy)
    # As get_rpc_server builds it, with our dispatcher. No executor is
    # named (naming one is deprecated): the library picks threading unless
    # eventlet has monkey-patched the process, which cellplane never does.
    servers = list(dict.fromkeys([server, *also_as]))
    if len(servers) > 1:
        rpc_server = MultiServerRPCServer(transport, target, dispatcher, servers=servers)
    else:
        rpc_server = RPCServer(transport, target, dispatcher)
    if rpc_server.executor_type != 'threading':
        raise RuntimeError(
            f'the RPC server would use the {rpc_server.executor_type} executor: '
            f'something monkey-patched this process with eventlet; cellplane '
            f'daemons run on threads only')
    # futurist's pool, whose idle threads sleep instead of waking four times
    # a second (``cellplane.rpc.quiet_executor``). Read when the server starts.
    rpc_server._executor_cls = quiet_executor.executor_class()
    return rpc_server
