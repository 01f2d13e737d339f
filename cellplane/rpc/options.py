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
from oslo_concurrency import opts as concurrency_opts
from oslo_messaging import opts as messaging_opts

RABBIT_GROUP = 'oslo_messaging_rabbit'
# Beyond the handler threads: the heartbeat thread's casts and one spare.
EXTRA_CONNECTIONS = 2
# cellplane's defaults of the library's [oslo_messaging_rabbit] options: every
# queue durable, the RPC servers' and the transient ones (replies, fanouts)
# quorum queues, which a RabbitMQ cluster replicates and RabbitMQ 4.x accepts
# (it refuses transient non-exclusive queues).
RABBIT_DEFAULTS = {'amqp_durable_queues': True, 'rabbit_quorum_queue': True,
                   'rabbit_transient_quorum_queue': True}
# Queue settings by name (boot_bench.py --queues, the test deployments):
# [oslo_messaging_rabbit] options that every process of a deployment shares.
# 'quorum+' is the example deployment's: quorum queues, stable reply and
# fanout queue names (use_queue_manager) and one stream per fanout.
QUEUE_SETTINGS: dict[str, dict[str, object]] = {
    'transient': {'amqp_durable_queues': False, 'rabbit_quorum_queue': False,
                  'rabbit_transient_quorum_queue': False},
    'durable': {'amqp_durable_queues': True, 'rabbit_quorum_queue': False,
                'rabbit_transient_quorum_queue': False},
    'quorum': dict(RABBIT_DEFAULTS),
    'quorum+': {**RABBIT_DEFAULTS, 'use_queue_manager': True,
                'rabbit_stream_fanout': True, 'rabbit_qos_prefetch_count': 64},
}


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every oslo.messaging option group on ``conf`` (a ``config.load`` registrar).

    cellplane's own defaults (``RABBIT_DEFAULTS``): durable queues and
    exchanges, and quorum queues for the RPC servers' queues
    (``rabbit_quorum_queue``) and for the reply and fanout queues
    (``rabbit_transient_quorum_queue``). The casts that carry work (boots,
    builds, reschedules, results) then wait out a broker restart in their
    queues (oslo.messaging publishes them persistent), a cluster keeps them
    when a node dies, and no queue is transient and non-exclusive. Every
    process of a deployment must agree on them, since a queue is declared
    by whoever comes first with its type: every cellplane transport is made
    through ``get_transport``, which registers these options first.
    """
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    for name, value in RABBIT_DEFAULTS.items():
        conf.set_default(name, value, group=RABBIT_GROUP)


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
    try:
        from oslo_messaging._drivers import impl_rabbit
    except ImportError:
        return
    cfg.set_defaults(impl_rabbit.rabbit_opts, **{
        name: value for name, value in RABBIT_DEFAULTS.items() if name != 'amqp_durable_queues'})


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


def name_queues(conf: cfg.ConfigOpts, process: str) -> None:
    """Name this daemon in oslo.messaging's stable queue names (``use_queue_manager``).

    With ``[oslo_messaging_rabbit] use_queue_manager`` the library names a
    process's reply and fanout queues ``<hostname>:<processname>:<n>`` instead
    of at random, so a restarted daemon takes its queues back instead of
    leaving them to expire (``rabbit_transient_queues_ttl``, 30 min): with
    quorum queues, each one left behind costs the broker a Raft member. The
    counter ``n`` lives in ``/dev/shm/<hostname>_<processname>_qmanager`` and
    starts again at 1 in every new process group, so two processes of one
    name would take the same reply queue and each other's replies. The
    library's names (the machine's hostname, ``argv[0]``) are the same for a
    cell conductor and a super conductor, or two agents on one machine;
    cellplane names each daemon by its ``[DEFAULT] host`` and ``process``
    (its binary and role) unless the file names them. The counter file is
    guarded by an oslo.concurrency file lock: ``[oslo_concurrency]
    lock_path`` must be set (else ``TransportNotConfigured``).

    A process that never calls this (the CLI, a tool, a test) gets random
    names whatever the file says (``get_transport``): it does not restart as
    itself, and two of them running at once must not share a reply queue.
    """
    register_opts(conf)
    conf.set_default('hostname', conf.host, group=RABBIT_GROUP)
    conf.set_default('processname', process, group=RABBIT_GROUP)
    for group, opts in concurrency_opts.list_opts():
        conf.register_opts(opts, group=group)
    if conf[RABBIT_GROUP].use_queue_manager and not conf.oslo_concurrency.lock_path:
        raise TransportNotConfigured(
            '[oslo_messaging_rabbit] use_queue_manager needs [oslo_concurrency] '
            'lock_path (a directory for the lock on its queue name counter)')


def queue_manager_allowed(conf: cfg.ConfigOpts) -> bool:
    """Whether this process named itself for stable queue names (``name_queues``)."""
    location = conf.get_location('processname', RABBIT_GROUP)
    return location is not None and location.location != cfg.Locations.opt_default
