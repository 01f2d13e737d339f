"""Building responses: JSON bodies, 204s, and the 1.15+ cache headers."""
from __future__ import annotations

import datetime

import msgspec
import webob

# msgspec's encoder is several times faster than json.dumps on the large
# bodies (provider lists, candidates) and writes the same JSON.
_encode = msgspec.json.Encoder().encode

_CACHE_HEADERS_FROM = (1, 15)


def http_date(moment: datetime.datetime | None) -> str:
    """RFC 7231 date of a naive-UTC or aware datetime (now when None)."""
    if moment is None:
        moment = datetime.datetime.now(datetime.timezone.utc)
    elif moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime('%a, %d %b %Y %H:%M:%S GMT')


def latest(*moments) -> datetime.datetime | None:
    """The newest of ``moments`` (each a datetime or None), None if all are."""
    found = None
    for moment in moments:
        if moment is not None and (found is None or moment > found):
            found = moment
    return found


def json_response(req, body, status: int = 200, *,
                  last_modified: datetime.datetime | None | bool = False,
                  location: str | None = None) -> webob.Response:
    """A JSON response. ``last_modified`` (a datetime, or None for "now")
    adds the 1.15+ ``last-modified`` and ``cache-control: no-cache``; leave
    it False on responses that do not carry them."""
    resp = webob.Response(
        body=_encode(body), status=status,
        content_type='application/json', charset=None)
    headers = resp.headers
    if last_modified is not False and req.mv >= _CACHE_HEADERS_FROM:
        headers['Last-Modified'] = http_date(last_modified)
        headers['Cache-Control'] = 'no-cache'
    if location:
        headers['Location'] = _absolute(req, location)
    return resp


def _absolute(req, location: str) -> str:
    # WebOb makes a relative Location absolute when it serves a response;
    # the reference's clients and tests see the absolute form.
    if location.startswith('/'):
        return req.host_url + location
    return location


def no_content(req, status: int = 204, *, location: str | None = None,
               last_modified: datetime.datetime | None | bool = False) -> webob.Response:
    """An empty response (204, or 201 with ``location``)."""
    resp = webob.Response(status=status, content_type=None)
    resp.headers.pop('Content-Type', None)
    if location:
        resp.headers['Location'] = _absolute(req, location)
    if last_modified is not False and req.mv >= _CACHE_HEADERS_FROM:
        resp.headers['Last-Modified'] = http_date(last_modified)
        resp.headers['Cache-Control'] = 'no-cache'
    return resp
