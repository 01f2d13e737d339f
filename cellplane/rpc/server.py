"""Building an RPC server: threading executor, pools sized to it, payload serializer.

Every cellplane daemon serves its topic through ``build_server``. Handlers
run in ``[DEFAULT] rpc_handler_threads`` threads (oslo.messaging's threading
executor; eventlet is never used); ``cellplane.rpc.options.size_pools``
sizes the rabbit connection pool to match, because each handler thread that
replies or casts takes a connection: with the library's default of 30, a
busier executor logs "Connection pool limit exceeded" and waits.
"""
from __future__ import annotations

from typing import Iterable

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc.serializer import PayloadSerializer
import oslo_messaging as messaging  # noqa: E402,I100


def build_server(transport: messaging.Transport, *, topic: str, server: str,
                 endpoints: Iterable[object],
                 serializer: messaging.Serializer | None = None) -> messaging.MessageHandlingServer:
    """An RPC server on ``topic`` (and ``topic.server`` for messages to this host)."""
    target = messaging.Target(topic=topic, server=server)
    # Passing executor= is deprecated: the library picks threading unless
    # eventlet has monkey-patched the process, which cellplane never does.
    rpc_server = messaging.get_rpc_server(
        transport, target, list(endpoints),
        serializer=serializer or PayloadSerializer(),
        access_policy=messaging.DefaultRPCAccessPolicy)
    if rpc_server.executor_type != 'threading':
        raise RuntimeError(
            f'the RPC server would use the {rpc_server.executor_type} executor: '
            f'something monkey-patched this process with eventlet; cellplane '
            f'daemons run on threads only')
    return rpc_server
