"""Placement's HTTP errors: exception classes and the JSON body they become.

Every failure a handler can report is one of the exceptions below, raised
with a message an operator can act on and, where the API defines one, a
``code`` from the constants here. ``render`` turns any of them into the
body the API guidelines ask for::

    {"errors": [{"status": 409, "title": "Conflict",
                 "detail": "...", "code": "placement.concurrent_update",
                 "request_id": "req-..."}]}

``code`` appears from microversion 1.23 on, as in the reference.
"""
from __future__ import annotations

import html
import json

# Error codes (the reference's placement/errors.py). One symbol per string.
DEFAULT = 'placement.undefined_code'
INVENTORY_INUSE = 'placement.inventory.inuse'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
PROVIDER_IN_USE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = 'placement.resource_provider.cannot_delete_parent'
RESOURCE_PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
ILLEGAL_DUPLICATE_QUERYPARAM = 'placement.query.duplicate_key'
QUERYPARAM_BAD_VALUE = 'placement.query.bad_value'
QUERYPARAM_MISSING_VALUE = 'placement.query.missing_value'

# The microversion from which error bodies carry ``code``.
ERROR_CODE_MICROVERSION = (1, 23)


class PlacementError(Exception):
    """An HTTP error response. Subclasses fix the status; ``code`` is optional.

    ``detail`` is what went wrong, for the operator. ``explanation`` is
    WebOb's generic sentence for the status, which the reference puts in
    front of the detail; clients and the reference's tests match on both.
    """
    status = 500
    title = 'Internal Server Error'
    explanation = ('The server has either erred or is incapable of '
                   'performing the requested operation.')

    def __init__(self, detail: str = '', *, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.detail = detail
        self.code = code or DEFAULT
        self.headers = headers or {}

    def full_detail(self, environ: dict) -> str:
        # Same shape as WebOb's body once the reference strips its HTML.
        if self.detail:
            return f'{self.explanation}\n\n {fold(self.detail)}  '
        return f'{self.explanation}\n\n   '


def fold(detail: str) -> str:
    """``detail`` on one line: each line break becomes a space, as in the reference.

    Clients show the last line of ``detail`` (osc-placement does), so a
    jsonschema message with its "Failed validating ..." lines under it
    would show only the offending value. The reference's WebOb turns the
    breaks into spaces while stripping its HTML; it strips anything
    between angle brackets too, which we do not: that can be part of a
    name the operator needs to read.
    """
    return detail.replace('\r', '').replace('\n', ' ')


class BadRequest(PlacementError):
    status, title = 400, 'Bad Request'
    explanation = ('The server could not comply with the request since it is '
                   'either malformed or otherwise incorrect.')


class Unauthorized(PlacementError):
    status, title = 401, 'Unauthorized'
    explanation = ('This server could not verify that you are authorized to '
                   'access the document you requested. Either you supplied the '
                   'wrong credentials (e.g., bad password), or your browser '
                   'does not understand how to supply the credentials required.')


class Forbidden(PlacementError):
    status, title = 403, 'Forbidden'
    explanation = 'Access was denied to this resource.'


class NotFound(PlacementError):
    status, title = 404, 'Not Found'
    explanation = 'The resource could not be found.'


class MethodNotAllowed(PlacementError):
    status, title = 405, 'Method Not Allowed'

    def full_detail(self, environ: dict) -> str:
        method = environ.get('REQUEST_METHOD', '')
        return (f'The method {method} is not allowed for this resource.'
                f'\n\n {fold(self.detail)}  ')


class NotAcceptable(PlacementError):
    status, title = 406, 'Not Acceptable'
    explanation = ('The resource could not be generated that was acceptable '
                   'to your browser.')


class UnacceptableVersion(NotAcceptable):
    """406 for a microversion outside what this server serves; the body names the range."""

    def __init__(self, detail: str, *, min_version: str, max_version: str):
        super().__init__(detail)
        self.min_version = min_version
        self.max_version = max_version


class Conflict(PlacementError):
    status, title = 409, 'Conflict'
    explanation = ('There was a conflict when trying to complete your '
                   'request.')


class UnsupportedMediaType(PlacementError):
    status, title = 415, 'Unsupported Media Type'
    explanation = 'The request media type is not supported by this server.'


class InternalServerError(PlacementError):
    pass


class ServiceUnavailable(PlacementError):
    status, title = 503, 'Service Unavailable'
    explanation = ('The server is currently unavailable. Please try again at a '
                   'later time.')


# Seconds a client is asked to wait when the database is busy.
BUSY_RETRY_AFTER = 1
# Seconds a client is asked to wait when the database cannot be reached
# (restarting, or cut away): longer than a busy pool, short beside a restart.
AWAY_RETRY_AFTER = 2


def database_busy(exc: Exception) -> ServiceUnavailable | None:
    """The 503 for a database too busy to serve now (pool exhausted, SQLite locked), or None.

    These pass: the request can be sent again as it is. Anything else the
    database raised is a fault (500).
    """
    import sqlalchemy as sa
    if isinstance(exc, sa.exc.TimeoutError):
        reason = 'no database connection was free in time'
    elif isinstance(exc, sa.exc.OperationalError) and 'database is locked' in str(exc):
        reason = 'the database stayed locked by other writers'
    else:
        return None
    return ServiceUnavailable(f'Placement is busy: {reason}. Retry the request.',
                              headers={'Retry-After': str(BUSY_RETRY_AFTER)})


def database_away(exc: Exception) -> ServiceUnavailable | None:
    """The 503 for a database that cannot be reached (restarting, refusing, dropped), or None.

    Nothing was written: the transaction the request ran in was rolled
    back with its connection, so the request can be sent again as it is.
    """
    from cellplane.db import away
    if not away.is_away(exc):
        return None
    return ServiceUnavailable(
        f'Placement cannot reach its database ({away.first_line(exc)}). Retry the request.',
        headers={'Retry-After': str(AWAY_RETRY_AFTER)})


_STATUS_LINES = {
    cls.status: f'{cls.status} {cls.title}'
    for cls in (BadRequest, Unauthorized, Forbidden, NotFound,
                MethodNotAllowed, NotAcceptable, Conflict,
                UnsupportedMediaType, InternalServerError, ServiceUnavailable)
}


def status_line(status: int) -> str:
    return _STATUS_LINES.get(status, f'{status} Error')


def _wants_json(accept: str | None) -> bool:
    if not accept:
        return True
    accept = accept.lower()
    return ('application/json' in accept or '*/*' in accept
            or 'application/*' in accept)


def render(exc: PlacementError, environ: dict, request_id: str | None,
           microversion) -> tuple[str, list[tuple[str, str]], bytes]:
    """Return (status line, headers, body) for ``exc``.

    JSON unless the client's Accept header rules it out, in which case an
    HTML or plain-text page as WebOb would give (the reference does too).
    """
    detail = exc.full_detail(environ)
    accept = environ.get('HTTP_ACCEPT')
    if _wants_json(accept):
        error = {'status': exc.status, 'title': exc.title, 'detail': detail}
        if microversion is not None and microversion >= ERROR_CODE_MICROVERSION:
            error['code'] = exc.code
        if request_id:
            error['request_id'] = request_id
        if isinstance(exc, UnacceptableVersion) and microversion is None:
            error['max_version'] = exc.max_version
            error['min_version'] = exc.min_version
        body = json.dumps({'errors': [error]}).encode()
        ctype = 'application/json'
    elif 'text/html' in accept:
        body = (f'<html>\n <head>\n  <title>{exc.status} {exc.title}</title>\n'
                f' </head>\n <body>\n  <h1>{exc.status} {exc.title}</h1>\n'
                f'  {html.escape(detail)}\n </body>\n</html>').encode()
        ctype = 'text/html; charset=UTF-8'
    else:
        body = f'{exc.status} {exc.title}\n\n{detail}'.encode()
        ctype = 'text/plain; charset=UTF-8'
    headers = [('Content-Type', ctype), ('Content-Length', str(len(body)))]
    headers.extend(exc.headers.items())
    return status_line(exc.status), headers, body
