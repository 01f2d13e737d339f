"""The compute API's errors, in Nova's bodies: ``{"badRequest": {"code": 400, "message": "..."}}``.

A handler raises one of these; the app (``cellplane_api/wsgi.py``)
renders it. Messages are one line and name the field at fault.
"""
from __future__ import annotations

import json


class ComputeError(Exception):
    """An answer other than success; ``key`` is the body's one top-level name."""

    status = 500
    title = 'Internal Server Error'
    key = 'computeFault'

    def __init__(self, message: str, *, headers: dict | None = None):
        # Messages quote what the caller sent, which may hold line breaks: kept one line.
        message = message.replace('\r', '\\r').replace('\n', '\\n')
        super().__init__(message)
        self.message = message
        self.headers = dict(headers or {})


class BadRequest(ComputeError):
    status, title, key = 400, 'Bad Request', 'badRequest'


class Unauthorized(ComputeError):
    status, title, key = 401, 'Unauthorized', 'unauthorized'


class Forbidden(ComputeError):
    status, title, key = 403, 'Forbidden', 'forbidden'


class OverLimit(ComputeError):
    status, title, key = 403, 'Forbidden', 'overLimit'


class NotFound(ComputeError):
    status, title, key = 404, 'Not Found', 'itemNotFound'


class MethodNotAllowed(ComputeError):
    status, title, key = 405, 'Method Not Allowed', 'badMethod'


class NotAcceptable(ComputeError):
    status, title, key = 406, 'Not Acceptable', 'notAcceptable'


class Conflict(ComputeError):
    status, title, key = 409, 'Conflict', 'conflictingRequest'


class RequestTooLarge(ComputeError):
    status, title, key = 413, 'Request Entity Too Large', 'overLimit'


class Unimplemented(ComputeError):
    status, title, key = 501, 'Not Implemented', 'notImplemented'


def render(exc: ComputeError) -> tuple[str, list[tuple[str, str]], bytes]:
    """(status line, headers, body) of ``exc`` as Nova answers it."""
    body = json.dumps({exc.key: {'code': exc.status, 'message': exc.message}}).encode()
    headers = [('Content-Type', 'application/json'), ('Content-Length', str(len(body)))]
    headers.extend(exc.headers.items())
    return f'{exc.status} {exc.title}', headers, body
