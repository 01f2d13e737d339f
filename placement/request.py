"""The request object handlers receive, and its body and query helpers.

A handler gets a ``PlacementRequest``: WebOb's request plus

    req.mv        the negotiated microversion (compare to tuples: ``req.mv >= (1, 14)``)
    req.urlvars   the named parts of the route (``{'uuid': ...}``)
    req.context   RequestContext: engine, identity, request_id

and reads its body with ``req.json_body(schema)``, which answers 415, 400
(malformed JSON) or 400 (schema mismatch) exactly as the reference does.
"""
from __future__ import annotations

import io
import json
import uuid as uuidlib

import jsonschema
import webob

from placement import errors

_FORMAT_CHECKER = jsonschema.FormatChecker()


@_FORMAT_CHECKER.checks('uuid')
def _is_uuid(instance) -> bool:
    if not isinstance(instance, str):
        return True   # the type keyword reports it
    return is_uuid_like(instance)


def is_uuid_like(value: str) -> bool:
    """True for a UUID in any form uuid.UUID accepts (dashes optional), as oslo."""
    try:
        return str(uuidlib.UUID(value)).replace('-', '') == value.replace('-', '').lower()
    except (TypeError, ValueError, AttributeError):
        return False


_VALIDATORS: dict[int, jsonschema.protocols.Validator] = {}


def validator_for(schema: dict):
    """A compiled validator for ``schema`` (schemas are module constants)."""
    found = _VALIDATORS.get(id(schema))
    if found is None:
        cls = jsonschema.validators.validator_for(schema, jsonschema.Draft4Validator)
        found = cls(schema, format_checker=_FORMAT_CHECKER)
        _VALIDATORS[id(schema)] = found
    return found


def validate(data, schema: dict, message: str) -> None:
    try:
        validator_for(schema).validate(data)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest(f'{message}: {_describe(exc)}') from None


class PlacementRequest(webob.BaseRequest):
    """WebOb's request with Placement's per-request state as plain attributes."""

    mv = None
    context = None
    urlvars: dict = {}
    _raw_body: bytes | None = None

    def raw_body(self) -> bytes:
        """The request body, read straight from the server's input stream
        (WebOb's ``body`` first copies it into a seekable file)."""
        if self._raw_body is None:
            environ = self.environ
            clen = environ.get('CONTENT_LENGTH')
            if clen:
                length = int(clen)   # validated by the app
                body = environ['wsgi.input'].read(length) if length > 0 else b''
            elif environ.get('wsgi.input_terminated'):
                body = environ['wsgi.input'].read()   # chunked upload
            else:
                body = b''
            # Leave the body readable for anything that still uses req.body.
            environ['wsgi.input'] = io.BytesIO(body)
            self._raw_body = body
        return self._raw_body

    def require_json(self) -> None:
        """415 unless the body is declared application/json."""
        ctype = self.content_type
        if ctype != 'application/json':
            raise errors.UnsupportedMediaType(
                f'The media type {ctype or "None"} is not supported, '
                f'use application/json')

    def json_body(self, schema: dict | None = None):
        """The body as JSON, checked against ``schema`` (415, then 400s)."""
        self.require_json()
        body = self.raw_body()
        try:
            data = json.loads(body, parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise errors.BadRequest(f'Malformed JSON: {exc}') from None
        if b'\\ud' in body or b'\\uD' in body:
            _refuse_lone_surrogates(data)
        if b'\\u0000' in body:
            # PostgreSQL cannot store NUL in text; refuse it up front.
            raise errors.BadRequest('Malformed JSON: NUL characters are not allowed')
        if schema is not None:
            try:
                validator_for(schema).validate(data)
            except jsonschema.ValidationError as exc:
                raise errors.BadRequest(
                    f'JSON does not validate: {_describe(exc)}') from None
        return data

    def query_params(self, schema: dict | None = None) -> dict:
        """The query string as a dict (last value wins), checked against ``schema``."""
        try:
            params = dict(self.GET)
        except UnicodeDecodeError as exc:
            raise errors.BadRequest(f'Invalid query string parameters: {exc}') from None
        if schema is not None:
            try:
                validator_for(schema).validate(params)
            except jsonschema.ValidationError as exc:
                raise errors.BadRequest(
                    f'Invalid query string parameters: {_describe(exc)}') from None
        return params


def _refuse_constant(name: str):
    # Python's json accepts NaN and Infinity; JSON does not, nor do we.
    raise ValueError(f'{name} is not valid JSON')


def _refuse_lone_surrogates(data) -> None:
    """A \\udXXX escape may decode to half a surrogate pair, which no
    database can store: refuse it as malformed, not as a 500 later."""
    try:
        json.dumps(data, ensure_ascii=False).encode('utf-8')
    except UnicodeEncodeError as exc:
        raise errors.BadRequest(f'Malformed JSON: {exc}') from None


def _describe(exc: jsonschema.ValidationError) -> str:
    # As the reference: the whole ValidationError, its message first, then
    # "Failed validating 'maxLength' in schema..." (clients match on it).
    return str(exc)
