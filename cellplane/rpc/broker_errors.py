"""A daemon that cannot reach its message bus says which bus and why, in one line.

oslo.messaging lets the AMQP library's exceptions through (a refused login,
a virtual host that does not exist); unhandled, oslo.log prints them as a
CRITICAL line and an 80-line traceback that names neither the URL nor the
file it came from. ``run_reporting_broker_errors`` runs a daemon's serving
part and turns those into ``<binary>: cannot use the message bus at
rabbit://guest:***@host:5672/vhost ([DEFAULT] transport_url, in FILE): the
broker refused the login (user or password)`` on stderr, exit code 1.
A broker whose TLS certificate ``[oslo_messaging_rabbit] ssl_ca_file`` does
not verify is found before serving (``broker_tls``) and said the same way.
"""
from __future__ import annotations

import sys
from typing import Callable

import amqp.exceptions
import kombu.exceptions
from oslo_config import cfg

from cellplane import config
from cellplane.rpc import broker_tls
from cellplane.rpc.transport import redact

EXIT_BROKER_UNUSABLE = 1
BROKER_ERRORS = (amqp.exceptions.AccessRefused, amqp.exceptions.NotAllowed,
                 kombu.exceptions.OperationalError)


def describe(exc: BaseException) -> str:
    """What the broker said, in words an operator acts on."""
    text = (str(exc).splitlines() or [''])[0]
    if isinstance(exc, amqp.exceptions.AccessRefused):
        return f'the broker refused the login (user or password): {text}'
    if isinstance(exc, amqp.exceptions.NotAllowed):
        return f'the broker refused the virtual host (does it exist?): {text}'
    if isinstance(exc, broker_tls.BrokerCertificateRefused):
        return f'TLS: {text}'
    return f'{type(exc).__name__}: {text}'


def run_reporting_broker_errors(binary: str, conf: cfg.ConfigOpts,
                                serve: Callable[[], int]) -> int:
    """``serve()``'s exit code; a broker that refuses us is one line on stderr and exit 1."""
    try:
        broker_tls.check_certificates(conf, conf.transport_url)
        return serve()
    except (*BROKER_ERRORS, broker_tls.BrokerCertificateRefused) as exc:
        option = config.name_option(conf, 'transport_url', None)
        print(f'{binary}: cannot use the message bus at {redact(conf.transport_url)} '
              f'({option}): {describe(exc)}', file=sys.stderr)
        return EXIT_BROKER_UNUSABLE
