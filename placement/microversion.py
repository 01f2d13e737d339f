"""Microversions 1.0 to 1.39: negotiation and per-version feature gates.

A request's version comes from ``OpenStack-API-Version: placement X.Y``
(``latest`` means the highest); without the header it is the lowest, 1.0.
It is a ``microversion_parse.Version``, a (major, minor) named tuple, so
handlers compare it to plain tuples::

    if req.mv >= (1, 14):
        body['parent_provider_uuid'] = ...

A handler that exists only from some version on is decorated with
``@min_version('1.6')``: below that the route answers 404, as in the
reference.
"""
from __future__ import annotations

import microversion_parse

from cellplane.wsgi import microversion as negotiation
from placement import errors

SERVICE_TYPE = 'placement'
HEADER = 'OpenStack-API-Version'
Version = microversion_parse.Version

# What each version added (mirrors the reference's history, abridged).
VERSIONS = [
    '1.0',
    '1.1',   # provider aggregates
    '1.2',   # /resource_classes
    '1.3',   # member_of on GET /resource_providers
    '1.4',   # resources on GET /resource_providers
    '1.5',   # DELETE /resource_providers/{uuid}/inventories
    '1.6',   # /traits, provider traits
    '1.7',   # PUT /resource_classes/{name} is a bodiless create
    '1.8',   # project_id/user_id required in PUT /allocations
    '1.9',   # GET /usages
    '1.10',  # GET /allocation_candidates
    '1.11',  # 'allocations' link on providers
    '1.12',  # dict allocations format
    '1.13',  # POST /allocations
    '1.14',  # parent/root provider uuids, in_tree
    '1.15',  # last-modified and cache-control headers
    '1.16',  # limit on allocation candidates
    '1.17',  # required traits on allocation candidates
    '1.18',  # required traits on GET /resource_providers
    '1.19',  # generations in provider aggregates
    '1.20',  # POST /resource_providers returns the provider
    '1.21',  # member_of on allocation candidates
    '1.22',  # forbidden traits
    '1.23',  # error codes
    '1.24',  # repeated member_of
    '1.25',  # granular request groups
    '1.26',  # reserved may equal total
    '1.27',  # all inventories in provider summaries
    '1.28',  # consumer generations
    '1.29',  # nested providers in allocation candidates
    '1.30',  # POST /reshaper
    '1.31',  # in_tree on allocation candidates
    '1.32',  # negative member_of
    '1.33',  # any-string group suffixes
    '1.34',  # mappings in allocation requests
    '1.35',  # root_required
    '1.36',  # same_subtree
    '1.37',  # re-parenting providers
    '1.38',  # consumer types
    '1.39',  # in: syntax for required
]
_PARSED = [microversion_parse.parse_version_string(v) for v in VERSIONS]
MIN_VERSION = _PARSED[0]
MAX_VERSION = _PARSED[-1]

RESPONSE_HEADER_VALUES = {p: f'placement {v}' for v, p in zip(VERSIONS, _PARSED, strict=True)}
# The negotiation itself is the ground's (cellplane/wsgi/microversion.py).
_NEGOTIATOR = negotiation.Negotiator(SERVICE_TYPE, VERSIONS[0], VERSIONS[-1])


def max_version_string() -> str:
    return VERSIONS[-1]


def min_version_string() -> str:
    return VERSIONS[0]


def _refused(exc: negotiation.VersionError) -> errors.PlacementError:
    if isinstance(exc, negotiation.MalformedVersion):
        return errors.BadRequest(f'invalid version string: {exc.value}')
    return errors.UnacceptableVersion(f'Unacceptable version header: {exc.value}',
                                      min_version=min_version_string(),
                                      max_version=max_version_string())


def parse(value: str) -> Version:
    """A version from a parsed header value; raise 400 or 406 as the reference."""
    try:
        return _NEGOTIATOR.parse(value)
    except negotiation.VersionError as exc:
        raise _refused(exc) from None


def from_environ(environ: dict) -> Version:
    """The version the request asks for (1.0 when it does not say)."""
    try:
        return _NEGOTIATOR.from_environ(environ)
    except negotiation.VersionError as exc:
        raise _refused(exc) from None


def header_value(version: Version) -> str:
    try:
        return RESPONSE_HEADER_VALUES[version]
    except KeyError:
        return f'placement {version.major}.{version.minor}'


def min_version(version: str, status_code: int = 404):
    """Decorator: the handler exists from ``version`` on; below it the route
    answers ``status_code`` (404, or 405 where the reference says so),
    checked by the app before policy, as in the reference."""
    required = microversion_parse.parse_version_string(version)

    def decorator(handler):
        handler.min_version = required
        handler.min_version_status = status_code
        return handler
    return decorator
