"""oslo.messaging's options on cellplane's config: registered up front, pools sized.

Registering the library's options before the config files are parsed lets
``config.load`` validate them with the rest (a bad ``rpc_conn_pool_size`` is
reported at start-up naming the file) and lets a daemon check that it was
given a ``transport_url`` before it connects anywhere.
"""
from __future__ import annotations

from oslo_config import cfg

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
from oslo_messaging import opts as messaging_opts

RABBIT_GROUP = 'oslo_messaging_rabbit'
# Beyond the handler threads: the heartbeat thread's casts and one spare.
EXTRA_CONNECTIONS = 2


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every oslo.messaging option group on ``conf`` (a ``config.load`` registrar).

    cellplane's own default: durable queues and exchanges
    (``[oslo_messaging_rabbit] amqp_durable_queues = true``). The casts that
    carry work (boots, builds, reschedules, results) then wait out a broker
    restart in their queues (oslo.messaging publishes them persistent)
    instead of vanishing with non-durable queues. Every process of a
    deployment must agree on it, since a queue is declared by whoever comes
    first: every cellplane transport is made through ``get_transport``,
    which registers these options first.
    """
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf.set_default('amqp_durable_queues', True, group=RABBIT_GROUP)


def set_library_defaults() -> None:
    """The same default on the library's options themselves, for ``oslo-config-generator``.

    Its ``oslo.config.opts.defaults`` hook for the ``oslo.messaging``
    namespace (``setup.cfg``): the sample files then show cellplane's
    default, not the library's. The library hands the generator copies of
    its option objects, so the default is set on the originals, in a module
    of its own that has no public setter; if it moved, the samples show the
    library's default again and nothing else changes.
    """
    try:
        from oslo_messaging._drivers import amqp
    except ImportError:
        return
    cfg.set_defaults(amqp.amqp_opts, amqp_durable_queues=True)


def size_pools(conf: cfg.ConfigOpts) -> int:
    """Size the executor to ``rpc_handler_threads`` and the rabbit pool to match.

    Call after the config is parsed and before any transport exists (the pool
    is built with the transport). An explicit ``[oslo_messaging_rabbit]
    rpc_conn_pool_size`` in a config file still wins. Returns the pool size.
    """
    register_opts(conf)
    threads = conf.rpc_handler_threads
    conf.set_default('executor_thread_pool_size', threads)
    conf.set_default('rpc_conn_pool_size', threads + EXTRA_CONNECTIONS,
                     group=RABBIT_GROUP)
    return conf[RABBIT_GROUP].rpc_conn_pool_size


class TransportNotConfigured(Exception):
    """A daemon was started without the message bus URL it must use."""


def require_transport_url(conf: cfg.ConfigOpts, service_name: str) -> str:
    """``[DEFAULT] transport_url``, or an error: never fall back to a local default bus."""
    register_opts(conf)
    # oslo.messaging defaults transport_url to 'rabbit://' (guest on
    # localhost): a daemon must never end up on a bus nobody chose.
    location = conf.get_location('transport_url')
    if not conf.transport_url or not location.location.is_user_controlled:
        raise TransportNotConfigured(
            f'{service_name} needs [DEFAULT] transport_url (the message bus of '
            f'its cell or of the top level, e.g. rabbit://user:pass@host:5672/vhost)')
    return conf.transport_url
