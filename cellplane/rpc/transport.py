"""RPC transports: one per message bus URL, shared by every client and server of a process.

A transport owns connection pools; creating one per call would leak
connections, so ``TransportCache`` keeps one per URL (a super conductor
talks to one bus per cell). Transports are built on the global ``cfg.CONF``:
oslo.messaging registers some of its options only there, and with a private
``ConfigOpts`` every cast and call fails with ``NoSuchOptError``.
"""
from __future__ import annotations

import threading

from oslo_config import cfg

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc import (
    broker_outage,
    close_warning,
    idle_wait,
    kombu_autoretry,
    options,
    poll_ramp,
)

# isort: split
import oslo_messaging as messaging

close_warning.install()
broker_outage.install()
idle_wait.install()
poll_ramp.install()
kombu_autoretry.install()


class TransportURLError(Exception):
    """A transport URL cannot be used; the message names it (without password)."""


def redact(url: str | None) -> str:
    """The URL with its passwords hidden, for logs and error messages."""
    if not url:
        return '<none>'
    try:
        parsed = messaging.TransportURL.parse(cfg.CONF, url)
    except Exception:  # noqa: BLE001 - redaction must never raise
        return '<unparseable transport URL>'
    hosts = ','.join(
        f'{h.username or ""}{":***" if h.password else ""}'
        f'{"@" if h.username else ""}{h.hostname}{":" + str(h.port) if h.port else ""}'
        for h in parsed.hosts)
    return f'{parsed.transport}://{hosts}/{parsed.virtual_host or ""}'


def get_transport(url: str | None, conf: cfg.ConfigOpts = cfg.CONF) -> messaging.Transport:
    """A new RPC transport for ``url`` (``None``: ``[DEFAULT] transport_url``)."""
    # cellplane's defaults of the library (quorum queues) on every transport.
    options.register_opts(conf)
    rabbit = conf[options.RABBIT_GROUP]
    if rabbit.use_queue_manager and not options.queue_manager_allowed(conf):
        # Not a daemon (options.name_queues): random reply and fanout names.
        conf.set_override('use_queue_manager', False, group=options.RABBIT_GROUP)
    if rabbit.rabbit_stream_fanout and not (rabbit.rabbit_transient_quorum_queue
                                            and rabbit.rabbit_qos_prefetch_count > 0):
        # oslo.messaging would only say so at the first connection, as a RuntimeError.
        raise TransportURLError(
            f'cannot use transport URL {redact(url)}: [oslo_messaging_rabbit] '
            'rabbit_stream_fanout needs rabbit_transient_quorum_queue = true and '
            'rabbit_qos_prefetch_count > 0')
    try:
        return messaging.get_rpc_transport(conf, url=url)
    except (messaging.InvalidTransportURL, messaging.DriverLoadFailure) as exc:
        raise TransportURLError(
            f'cannot use transport URL {redact(url)}: {exc}') from exc


class TransportCache:
    """Transports by URL, created on first use; safe to share between threads."""

    def __init__(self, conf: cfg.ConfigOpts = cfg.CONF) -> None:
        self._conf = conf
        self._lock = threading.Lock()
        self._transports: dict[str | None, messaging.Transport] = {}

    def get(self, url: str | None) -> messaging.Transport:
        with self._lock:
            transport = self._transports.get(url)
            if transport is None:
                transport = get_transport(url, self._conf)
                self._transports[url] = transport
            return transport

    def __len__(self) -> int:
        with self._lock:
            return len(self._transports)

    def cleanup(self) -> None:
        """Close every transport (on shutdown)."""
        with self._lock:
            transports = list(self._transports.values())
            self._transports.clear()
        for transport in transports:
            transport.cleanup()
