"""Compute API microversions: negotiation from either header, and what this API advertises.

A request's version comes from ``OpenStack-API-Version: compute X.Y`` or
the legacy ``X-OpenStack-Nova-API-Version: X.Y`` (the first wins when both
are sent, as in Nova); ``latest`` is the maximum; without either it is the
minimum, 2.1. A version outside the range is 406; a malformed one 400.

``MAX_VERSION`` is the highest version at which every route this API serves
answers as Nova does at that version (checked by tests against tempest's
response schemas): 2.69, servers listed while a cell is down.
"""
from __future__ import annotations

from cellplane.wsgi import microversion as negotiation
from cellplane_api import errors

SERVICE_TYPE = 'compute'
Version = negotiation.Version
MIN_VERSION = Version(2, 1)
MAX_VERSION = Version(2, 69)
VARY = 'OpenStack-API-Version, X-OpenStack-Nova-API-Version'
# The negotiation itself is the ground's (cellplane/wsgi/microversion.py).
_NEGOTIATOR = negotiation.Negotiator(SERVICE_TYPE, '2.1', '2.69',
                                     legacy_header='X-OpenStack-Nova-API-Version')


def as_string(version: Version) -> str:
    return f'{version.major}.{version.minor}'


def from_environ(environ: dict) -> Version:
    """The version the request asks for; 400 if malformed, 406 if outside the range."""
    try:
        return _NEGOTIATOR.from_environ(environ)
    except negotiation.MalformedVersion as exc:
        raise errors.BadRequest(f'Invalid API version request: {exc.value!r} is not '
                                f'of the form X.Y') from None
    except negotiation.UnacceptableVersion as exc:
        raise errors.NotAcceptable(
            f'Version {exc.value} is not supported by the API. Minimum is '
            f'{as_string(MIN_VERSION)} and maximum is {as_string(MAX_VERSION)}.') from None


def answer_headers(version: Version) -> list[tuple[str, str]]:
    """The headers that echo ``version``, as Nova sends them."""
    text = as_string(version)
    return [('OpenStack-API-Version', f'{SERVICE_TYPE} {text}'),
            ('X-OpenStack-Nova-API-Version', text), ('Vary', VARY)]
