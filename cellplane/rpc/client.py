"""The base of every service's ``rpcapi.py``: a versioned client with an upgrade cap.

A service's API has a version (``API_VERSION``); each method says which
version it needs. ``[upgrade_levels] <service>`` caps what this client sends
during a rolling upgrade: a method newer than the cap is refused with
``MethodNotAllowedByCap`` before anything is sent, unless the method has an
older form it can downgrade to (``pick_version``), in which case the older
form is sent. Every client also reaches the diagnostics namespace (``ping``),
which has its own version and is never capped.
"""
from __future__ import annotations

import logging
from typing import ClassVar

from oslo_config import cfg

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc import diagnostics
from cellplane.rpc.serializer import PayloadSerializer

# isort: split
import oslo_messaging as messaging

from rpc_schemas.base import parse_version
from rpc_schemas.ping import Pong

LOG = logging.getLogger(__name__)


# Prepared call contexts a client keeps (see ``RPCAPIClient.prepare``).
PREPARED_KEPT = 1024


class MethodNotAllowedByCap(Exception):
    """The version cap of a rolling upgrade forbids sending this method."""


class ServiceNotAnswering(Exception):
    """No server of a topic answered the diagnostics ping in the attempts allowed."""


class InvalidVersionCap(Exception):
    """``[upgrade_levels] <service>`` is not a usable version."""


class RPCAPIClient:
    """Subclasses set ``SERVICE`` (the ``[upgrade_levels]`` option), ``TOPIC``, ``API_VERSION``.

    ``NAMESPACE`` (optional) is the RPC namespace of the API: two APIs
    served on one topic (the cell and super conductors' ``conductor``) keep
    their methods and versions apart with it.
    """

    SERVICE: ClassVar[str]
    TOPIC: ClassVar[str]
    API_VERSION: ClassVar[str]
    NAMESPACE: ClassVar[str | None] = None

    def __init__(self, transport: messaging.Transport, *, conf: cfg.ConfigOpts = cfg.CONF,
                 server: str | None = None, timeout: float | None = None) -> None:
        self.version_cap = self._read_cap(conf)
        self._transport = transport
        self._target = messaging.Target(topic=self.TOPIC, server=server,
                                        namespace=self.NAMESPACE,
                                        version=self.API_VERSION)
        self._serializer = PayloadSerializer()
        self._timeout = timeout
        self._client = messaging.get_rpc_client(
            transport, self._target, version_cap=self.version_cap,
            serializer=self._serializer, timeout=timeout)
        # (method, versions, server, timeout, fanout) -> the prepared call context.
        self._prepared: dict[tuple, object] = {}

    @classmethod
    def _read_cap(cls, conf: cfg.ConfigOpts) -> str:
        cap = conf.upgrade_levels[cls.SERVICE]
        if not cap:
            return cls.API_VERSION
        try:
            capped = parse_version(cap)
        except ValueError as exc:
            raise InvalidVersionCap(f'[upgrade_levels] {cls.SERVICE}: {exc}') from None
        known = parse_version(cls.API_VERSION)
        if capped[0] != known[0]:
            raise InvalidVersionCap(
                f'[upgrade_levels] {cls.SERVICE} = {cap} has another major version '
                f'than this client ({cls.API_VERSION}); the cap must be {known[0]}.x')
        return cap if capped <= known else cls.API_VERSION

    def can_send_version(self, version: str) -> bool:
        cap = parse_version(self.version_cap)
        wanted = parse_version(version)
        return wanted[0] == cap[0] and wanted <= cap

    def pick_version(self, method: str, *versions: str) -> str:
        """The newest of ``versions`` the cap allows; refuse with a clear error if none."""
        for version in sorted(versions, key=parse_version, reverse=True):
            if self.can_send_version(version):
                return version
        oldest = min(versions, key=parse_version)
        raise MethodNotAllowedByCap(
            f'{self.SERVICE} RPC method {method!r} needs API version {oldest} or '
            f'newer, but [upgrade_levels] {self.SERVICE} caps sending at '
            f'{self.version_cap}. Raise the cap once every {self.SERVICE} '
            f'service runs a version that has {method!r}.')

    def prepare(self, method: str, *versions: str, server: str | None = None,
                timeout: float | None = None, fanout: bool = False):
        """A client context for ``method`` at the newest allowed of ``versions``.

        Made once per method, versions, server, timeout and fanout, and
        kept: oslo.messaging's call contexts are not changed by sending
        (every boot's cast used to build its target and context anew). At
        most ``PREPARED_KEPT`` are kept (a client of thousands of hosts):
        past that all are forgotten.
        """
        key = (method, versions, server, timeout, fanout)
        prepared = self._prepared.get(key)
        if prepared is not None:
            return prepared
        version = self.pick_version(method, *versions)
        kwargs = {'version': version}
        if server is not None:
            kwargs['server'] = server
        if timeout is not None:
            kwargs['timeout'] = timeout
        if fanout:
            kwargs['fanout'] = True
        prepared = self._client.prepare(**kwargs)
        if len(self._prepared) >= PREPARED_KEPT:
            self._prepared = {}
        self._prepared[key] = prepared
        return prepared

    def ping(self, ctxt, message: str = '', *, hold_seconds: float | None = None,
             server: str | None = None, timeout: float | None = None) -> Pong:
        """Diagnostic echo: the answering daemon's ``Pong``."""
        # The cap is for this service's API; diagnostics has its own version.
        return diagnostics.ping(
            self._transport, ctxt, topic=self.TOPIC, server=server, message=message,
            hold_seconds=hold_seconds, timeout=self._timeout if timeout is None else timeout)

    def wait_until_answering(self, ctxt, *, attempt_timeout: float = 10,
                             attempts: int | None = None) -> Pong:
        """Ping this topic until a server answers (``attempts=None``: forever).

        A daemon that depends on another (a compute agent on its cell
        conductor) calls this before it starts serving, and says in its log
        what it is waiting for.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return self.ping(ctxt, f'{self.SERVICE} wait_until_answering',
                                 timeout=attempt_timeout)
            except messaging.MessagingTimeout:
                pass
            if attempts is not None and attempt >= attempts:
                raise ServiceNotAnswering(
                    f'no {self.SERVICE} service answered a ping on topic '
                    f'{self.TOPIC} in {attempts} attempts of {attempt_timeout} s: '
                    f'is it running, on the same transport_url (vhost)?')
            LOG.warning('No %s service answered a ping on topic %s within %s s '
                        '(attempt %d); still waiting', self.SERVICE, self.TOPIC,
                        attempt_timeout, attempt)
