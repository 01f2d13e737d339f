"""Microversion negotiation for an HTTP daemon: which version a request asks for, within a range.

    negotiator = Negotiator('compute', '2.1', '2.1',
                            legacy_header='X-OpenStack-Nova-API-Version')
    version = negotiator.from_environ(environ)   # a microversion_parse.Version

A request without the header gets the minimum; ``latest`` the maximum. A
value that is not ``X.Y`` raises ``MalformedVersion``, one outside the range
``UnacceptableVersion``: each service words them in its own error bodies
(400 and 406). Versions are named tuples, so handlers compare them to
plain tuples (``req.mv >= (1, 14)``). Clients send the same few header values
over and over: each is parsed once (a bounded cache of successes).
"""
from __future__ import annotations

import microversion_parse

Version = microversion_parse.Version
HEADER = 'OpenStack-API-Version'
_SEEN_MAX = 256


class VersionError(Exception):
    """The version asked for cannot be served; ``value`` is what was asked."""

    def __init__(self, value: str):
        super().__init__(value)
        self.value = value


class MalformedVersion(VersionError):
    """Not ``X.Y`` nor ``latest`` (a 400)."""


class UnacceptableVersion(VersionError):
    """A version outside the range served (a 406)."""


def parse_version(text: str) -> Version:
    return microversion_parse.parse_version_string(text)


def environ_key(header: str) -> str:
    return 'HTTP_' + header.upper().replace('-', '_')


class Negotiator:
    """The versions ``min_version`` to ``max_version`` of ``service_type``."""

    def __init__(self, service_type: str, min_version: str, max_version: str, *,
                 legacy_header: str | None = None):
        self.service_type = service_type
        self.min_version = parse_version(min_version)
        self.max_version = parse_version(max_version)
        self._headers = [(HEADER, environ_key(HEADER))]
        self._legacy = [legacy_header] if legacy_header else []
        if legacy_header:
            self._headers.append((legacy_header, environ_key(legacy_header)))
        self._seen: dict[tuple, Version] = {}

    def parse(self, value: str) -> Version:
        """A version from a header's value (``X.Y`` or ``latest``) within the range."""
        if value == 'latest':
            return self.max_version
        try:
            version = parse_version(value)
        except TypeError:
            raise MalformedVersion(value) from None
        if not self.min_version <= version <= self.max_version:
            raise UnacceptableVersion(value)
        return version

    def from_environ(self, environ: dict) -> Version:
        """The version the request asks for (the minimum when it does not say)."""
        sent = tuple((name, environ[key]) for name, key in self._headers if key in environ)
        if not sent:
            return self.min_version
        found = self._seen.get(sent)
        if found is not None:
            return found
        value = microversion_parse.get_version(list(sent), service_type=self.service_type,
                                               legacy_headers=self._legacy)
        version = self.min_version if value is None else self.parse(value)
        if len(self._seen) < _SEEN_MAX:
            self._seen[sent] = version
        return version
