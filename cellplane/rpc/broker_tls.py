"""A daemon whose broker presents a certificate it does not trust says so at start, in one line.

With ``[oslo_messaging_rabbit] ssl = true`` and ``ssl_ca_file`` (or
``?ssl=1`` in the transport URL), oslo.messaging checks the broker's
certificate at every connection, but takes a failed check for a broker
that is away: it retries for ever, an ERROR line per attempt, and the
daemon never serves. A wrong certificate is a configuration to fix, like
a refused login, so ``check_certificates`` shakes hands with each broker
of the URL once, as oslo.messaging would (the CA file, the client
certificate, the host name when the URL names one host), before a daemon
serves: a certificate the CA does not verify is ``BrokerCertificateRefused``,
which ``broker_errors.run_reporting_broker_errors`` turns into one line
and exit 1. A broker that does not answer is left to oslo.messaging's
retries (an outage, not a configuration); so is a certificate that
changes while the daemon runs (its reconnects log the failed check).
"""
from __future__ import annotations

import socket
import ssl

from oslo_config import cfg, types

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc import options

# isort: split
import oslo_messaging as messaging

# A bound on one handshake at start-up: an unanswering broker is not our business here.
HANDSHAKE_SECONDS = 5.0
DEFAULT_PORT = 5672   # oslo.messaging's, with or without TLS


class BrokerCertificateRefused(Exception):
    """The broker's certificate is not verified by ``[oslo_messaging_rabbit] ssl_ca_file``."""


def _setting(parsed, rabbit, name: str):
    """An ``[oslo_messaging_rabbit]`` option, as the URL's query overrides it (oslo.messaging's rule)."""
    if name in parsed.query:
        raw = parsed.query[name]
        return types.Boolean()(raw) if name == 'ssl' else raw
    return rabbit[name]


def check_certificates(conf: cfg.ConfigOpts, url: str | None) -> None:
    """Raise ``BrokerCertificateRefused`` if a broker of ``url`` presents a certificate the CA does not verify."""
    if not url:
        return
    options.register_opts(conf)
    rabbit = conf[options.RABBIT_GROUP]
    try:
        parsed = messaging.TransportURL.parse(conf, url)
    except messaging.InvalidTransportURL:
        return   # said where the transport is made, with the URL
    if not parsed.transport.endswith('rabbit') or not _setting(parsed, rabbit, 'ssl'):
        return
    ca_file = _setting(parsed, rabbit, 'ssl_ca_file')
    if not ca_file:
        return   # oslo.messaging checks no certificate without a CA file: nor do we
    context = ssl.create_default_context(cafile=ca_file)
    # oslo.messaging checks the host name only when the URL names one host.
    context.check_hostname = len(parsed.hosts) == 1
    cert_file = _setting(parsed, rabbit, 'ssl_cert_file')
    if cert_file:
        context.load_cert_chain(cert_file, _setting(parsed, rabbit, 'ssl_key_file') or None)
    for host in parsed.hosts:
        port = host.port or DEFAULT_PORT
        try:
            with socket.create_connection((host.hostname, port), timeout=HANDSHAKE_SECONDS) as sock:
                server_hostname = host.hostname if context.check_hostname else None
                with context.wrap_socket(sock, server_hostname=server_hostname):
                    pass
        except ssl.SSLCertVerificationError as exc:
            raise BrokerCertificateRefused(
                f'the broker at {host.hostname}:{port} presented a certificate that '
                f'[oslo_messaging_rabbit] ssl_ca_file ({ca_file}) does not verify: '
                f'{exc.verify_message}') from None
        except OSError:
            continue   # not answering, or another TLS failure: oslo.messaging's to retry and log
