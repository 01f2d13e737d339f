"""The base of every typed, versioned RPC payload.

A payload is a frozen dataclass with a ``NAME`` and a ``VERSION``
(``major.minor``). Its JSON Schema is generated from the field types and kept
in the repository (``rpc_schemas/schemas/<NAME>-<VERSION>.json``); a unit test
keeps the stored file and the class identical, and received data is validated
against the stored file, so the contract other services see is a file anyone
can read.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``datetime``
(UTC, ISO 8601 on the wire), ``X | None``, ``list[X]``, ``dict[str, X]``,
``typing.Any`` (any JSON value) and other payload classes (nested as
envelopes, so that each carries its own name and version).

Versioning rule: a minor version only adds fields that have defaults, and
marks them with ``since``; a major version is anything else. That rule is
what lets a receiver accept older minors and a sender downgrade to them.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import importlib
import importlib.resources
import json
import re
import threading
import types
import typing
from typing import Any, Callable, ClassVar

import fastjsonschema
import jsonschema

from rpc_schemas.errors import MalformedPayload, PayloadDowngradeError, UnsupportedPayloadVersion

ENVELOPE_NAME = 'cellplane.name'
ENVELOPE_VERSION = 'cellplane.version'
ENVELOPE_DATA = 'cellplane.data'
VERSION_PATTERN = r'^[0-9]+\.[0-9]+$'
_VERSION_RE = re.compile(VERSION_PATTERN)
SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'


def parse_version(version: str) -> tuple[int, int]:
    """``'1.2'`` -> ``(1, 2)``; ``ValueError`` on anything else."""
    if not isinstance(version, str) or not _VERSION_RE.match(version):
        raise ValueError(f'{version!r} is not a version of the form major.minor')
    major, minor = version.split('.')
    return int(major), int(minor)


def field(*, default: Any = dataclasses.MISSING,
          default_factory: Any = dataclasses.MISSING,
          since: str | None = None, **schema: Any) -> Any:
    """A payload field with extra JSON Schema keywords and the version it appeared in.

    ``field(default=None, since='1.1', maximum=60)`` adds ``maximum`` to the
    field's schema and lets a sender drop the field when it downgrades to 1.0.
    """
    metadata = {'schema': schema, 'since': since}
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Payload:
    """Base class: subclasses are ``@dataclasses.dataclass(frozen=True)``."""

    NAME: ClassVar[str]
    VERSION: ClassVar[str]
    DESCRIPTION: ClassVar[str] = ''

    # -- wire form ---------------------------------------------------------

    def to_primitive(self, target_version: str | None = None) -> dict:
        """The envelope ``{"cellplane.name", "cellplane.version", "cellplane.data"}``.

        With ``target_version`` (same major, lower minor) the fields added
        after it are left out; if one of them holds a value other than its
        default the receiver would lose it, and ``PayloadDowngradeError`` says so.
        """
        if target_version is None or target_version == self.VERSION:
            version = self.VERSION
            data = {name: encode(getattr(self, name))
                    for name, encode in _field_encoders(type(self))}
        else:
            version = target_version
            self.check_downgrade(version)
            data = {}
            for f in dataclasses.fields(self):
                since = f.metadata.get('since')
                if since and parse_version(since) > parse_version(version):
                    continue
                data[f.name] = _to_json(getattr(self, f.name))
        return {ENVELOPE_NAME: self.NAME, ENVELOPE_VERSION: version,
                ENVELOPE_DATA: data}

    def check_downgrade(self, version: str) -> None:
        """Raise ``PayloadDowngradeError`` unless this payload can be sent as ``version``."""
        try:
            wanted = parse_version(version)
        except ValueError as exc:
            raise PayloadDowngradeError(f'{self.NAME}: {exc}') from None
        own = parse_version(self.VERSION)
        if wanted[0] != own[0] or wanted > own:
            raise PayloadDowngradeError(
                f'{self.NAME} {self.VERSION} cannot be sent as version {version}: '
                f'only a lower minor of the same major is possible')
        for f in dataclasses.fields(self):
            since = f.metadata.get('since')
            if not since or parse_version(since) <= wanted:
                continue
            if getattr(self, f.name) != _default_of(f):
                raise PayloadDowngradeError(
                    f'{self.NAME} field {f.name!r} was added in {since} and has a '
                    f'value, so it cannot be sent as version {version}: the '
                    f'receiver would lose it. Upgrade the receiver first.')

    @classmethod
    def from_primitive(cls, primitive: Any) -> 'Payload':
        """Check an envelope of this payload (name, version, data) and build it."""
        if not isinstance(primitive, dict):
            raise MalformedPayload(
                f'expected a {cls.NAME} envelope (a JSON object), got '
                f'{type(primitive).__name__}')
        missing = [k for k in (ENVELOPE_NAME, ENVELOPE_VERSION, ENVELOPE_DATA)
                   if k not in primitive]
        if missing:
            raise MalformedPayload(
                f'payload envelope lacks {", ".join(missing)}')
        if primitive[ENVELOPE_NAME] != cls.NAME:
            raise MalformedPayload(
                f'expected a {cls.NAME} payload, got {primitive[ENVELOPE_NAME]!r}')
        cls.check_version(primitive[ENVELOPE_VERSION])
        return cls.from_data(primitive[ENVELOPE_DATA], primitive[ENVELOPE_VERSION])

    @classmethod
    def check_version(cls, version: Any) -> None:
        """Accept the same major and a minor no newer than this class knows."""
        # Every message: no regular expression (a malformed one may not even hash).
        if isinstance(version, str) and version in _minors_known(cls):
            return
        try:
            received = parse_version(version)
        except ValueError as exc:
            raise UnsupportedPayloadVersion(f'{cls.NAME}: {exc}') from None
        known = parse_version(cls.VERSION)
        if received[0] != known[0] or received[1] > known[1]:
            raise UnsupportedPayloadVersion(
                f'{cls.NAME} version {version} is not supported here: this '
                f'service knows {cls.NAME} {cls.VERSION} (same major, minor up '
                f'to {known[1]}). Upgrade this service before its senders.')

    @classmethod
    def from_data(cls, data: Any, version: str | None = None) -> 'Payload':
        """Validate ``data`` against the stored schema and build the payload.

        ``version``: the version the sender wrote (an older minor is read as
        this class's), named in the error if the data is invalid.
        """
        try:
            compiled_check(cls)(data)
        except fastjsonschema.JsonSchemaException:
            # The reference validator words every problem; it alone decides.
            # (The compiled check is stricter on formats jsonschema does not
            # check, such as date-time; the field parsers below check those.)
            errors = sorted(stored_validator(cls).iter_errors(data),
                            key=lambda e: list(e.absolute_path))
            if errors:
                read_as = ('' if version in (None, cls.VERSION)
                           else f' (read as {cls.NAME} {cls.VERSION})')
                raise MalformedPayload(
                    f'{cls.NAME} {version or cls.VERSION} data is invalid: '
                    + '; '.join(_describe(e) for e in errors) + read_as) from None
        return cls(**{name: decode(data[name])
                      for name, decode in _field_decoders(cls) if name in data})

    # -- schema ------------------------------------------------------------

    @classmethod
    def json_schema(cls) -> dict:
        """The JSON Schema of this payload's data, generated from the fields."""
        hints = _type_hints(cls)
        properties = {}
        required = []
        for f in dataclasses.fields(cls):
            prop = _schema_for(hints[f.name])
            prop.update(f.metadata.get('schema') or {})
            properties[f.name] = prop
            if (f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING):
                required.append(f.name)
        schema = {
            '$schema': SCHEMA_DIALECT,
            'title': f'{cls.NAME} {cls.VERSION}',
            'type': 'object',
            'properties': properties,
            'required': required,
            'additionalProperties': False,
        }
        if cls.DESCRIPTION:
            schema['description'] = cls.DESCRIPTION
        return schema

    @classmethod
    def schema_filename(cls) -> str:
        return f'{cls.NAME}-{cls.VERSION}.json'


@functools.cache
def _minors_known(cls: type[Payload]) -> frozenset[str]:
    """The versions ``check_version`` accepts, as senders write them: ``{'1.0', '1.1', '1.2'}`` for 1.2."""
    major, minor = parse_version(cls.VERSION)
    return frozenset(f'{major}.{m}' for m in range(minor + 1))


def _default_of(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def stored_schema(cls: type[Payload]) -> dict:
    """The schema file of ``cls`` at its current version, as kept in the repository."""
    resource = importlib.resources.files('rpc_schemas') / 'schemas' / cls.schema_filename()
    try:
        return json.loads(resource.read_text(encoding='utf-8'))
    except FileNotFoundError:
        raise MalformedPayload(
            f'no stored schema rpc_schemas/schemas/{cls.schema_filename()}: '
            f'run `python -m rpc_schemas.write_schemas` after changing a payload'
        ) from None


def _built_once(build: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``functools.cache`` for one argument, built by one thread while the others wait.

    A daemon's handler threads meet a payload class for the first time
    together (a drain's hundred moves reaching a cell conductor at once):
    under ``functools.cache`` each of them built the same thing, and a
    compiled schema costs 2-14 ms of CPU (tens of ms on a loaded machine),
    so a third of a cell conductor's samples in a host drain were
    fastjsonschema compiling what another thread was compiling already.
    """
    built: dict = {}
    lock = threading.RLock()

    @functools.wraps(build)
    def get(key):
        try:
            return built[key]
        except KeyError:
            pass
        with lock:
            if key not in built:
                built[key] = build(key)
            return built[key]

    get.cache_clear = built.clear
    return get


def schema_digest(schema: dict) -> str:
    """The SHA-256 of ``schema`` written canonically (sorted keys, no spaces): what a compiled module was made from."""
    text = json.dumps(schema, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def compiled_module_name(cls: type[Payload]) -> str:
    """``rpc_schemas.compiled.<name>_<major>_<minor>``: the check of ``cls``'s stored schema, as code."""
    return f'rpc_schemas.compiled.{cls.NAME.lower()}_{cls.VERSION.replace(".", "_")}'


# What a schema may say beside "type" that only constrains values of that
# type: such a schema or null is the same as that type or null.
_TYPE_ONLY_KEYWORDS = frozenset({
    'type', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum',
    'items', 'properties', 'required', 'additionalProperties', 'description'})
_NULL = {'type': 'null'}


def compilable(schema: Any) -> Any:
    """``schema`` as fastjsonschema checks it fastest, accepting exactly the same data.

    An optional field's ``{"anyOf": [X, {"type": "null"}]}`` becomes X with
    ``"null"`` added to its type, when X's other keywords constrain only
    values of X's type (a length, a pattern, an object's properties): the
    compiled ``anyOf`` tries X first and raises and catches an exception
    for every null, which was a third of checking an Instance. Anything
    else is left as it is. The stored schema, the contract, keeps its
    ``anyOf``; only the compiled check is made from this form.
    """
    if isinstance(schema, list):
        return [compilable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compilable(v) for k, v in schema.items()}
    branches = out.get('anyOf')
    if isinstance(branches, list) and len(branches) == 2 and _NULL in branches:
        other = branches[1] if branches[0] == _NULL else branches[0]
        if (isinstance(other, dict) and isinstance(other.get('type'), str)
                and other['type'] != 'null' and set(other) <= _TYPE_ONLY_KEYWORDS
                and not set(other) & (set(out) - {'anyOf'})):
            del out['anyOf']
            out.update(other)
            out['type'] = [other['type'], 'null']
    return out


@_built_once
def compiled_check(cls: type[Payload]) -> Callable[[Any], Any]:
    """The stored schema compiled to Python: the fast path for valid data.

    jsonschema takes 90-150 µs per ServiceStatus on this kind of machine, the
    compiled check under 20; a boot carries several payloads. The keywords the
    generator emits mean the same in draft 7 (which fastjsonschema implements)
    as in 2020-12, and the unit tests hold both validators to the same answers.

    The code is written ahead (``python -m rpc_schemas.write_schemas`` puts
    it in ``rpc_schemas/compiled/``) and imported: compiling 1-6 ms a
    schema in every process, on the first message of each kind, cost each of
    a ten-cell deployment's twenty agents and conductors tens of ms within
    its first boots, and a drain's first moves. A module made from another
    schema than the stored one is not used; the schema is compiled here.
    """
    schema = stored_schema(cls)
    try:
        module = importlib.import_module(compiled_module_name(cls))
    except ModuleNotFoundError:
        module = None
    if module is not None and getattr(module, 'SCHEMA_SHA256', None) == schema_digest(schema):
        return module.validate
    return fastjsonschema.compile(compilable(schema))


@_built_once
def stored_validator(cls: type[Payload]) -> jsonschema.protocols.Validator:
    """The reference validator, used to word the errors of invalid data."""
    schema = stored_schema(cls)
    validator_cls = jsonschema.validators.validator_for(schema)
    return validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)


def _describe(error: jsonschema.ValidationError) -> str:
    path = '.'.join(str(p) for p in error.absolute_path)
    return f'{path}: {error.message}' if path else error.message


@functools.cache
def _type_hints(cls: type) -> dict:
    return typing.get_type_hints(cls)


@functools.cache
def _field_decoders(cls: type) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    hints = _type_hints(cls)
    return tuple((f.name, _decoder(hints[f.name])) for f in dataclasses.fields(cls))


def _is_optional(tp: Any) -> tuple[bool, Any]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return True, args[0]
    return False, tp


def _schema_for(tp: Any) -> dict:
    optional, inner = _is_optional(tp)
    if optional:
        schema = _schema_for(inner)
        return {'anyOf': [schema, {'type': 'null'}]}
    if tp is Any:
        return {}
    if tp is bool:
        return {'type': 'boolean'}
    if tp is int:
        return {'type': 'integer'}
    if tp is float:
        return {'type': 'number'}
    if tp is str:
        return {'type': 'string'}
    if tp is datetime.datetime:
        return {'type': 'string', 'format': 'date-time'}
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        return {'type': 'array', 'items': _schema_for(item)}
    if origin is dict:
        key, value = typing.get_args(tp)
        if key is not str:
            raise TypeError(f'payload dict keys must be str, not {key!r}')
        return {'type': 'object', 'additionalProperties': _schema_for(value)}
    if isinstance(tp, type) and issubclass(tp, Payload):
        return {
            'type': 'object',
            'properties': {
                ENVELOPE_NAME: {'const': tp.NAME},
                ENVELOPE_VERSION: {'type': 'string', 'pattern': VERSION_PATTERN},
                ENVELOPE_DATA: {'type': 'object'},
            },
            'required': [ENVELOPE_NAME, ENVELOPE_VERSION, ENVELOPE_DATA],
            'additionalProperties': False,
        }
    raise TypeError(f'unsupported payload field type {tp!r}')


@functools.cache
def _field_encoders(cls: type) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    hints = _type_hints(cls)
    return tuple((f.name, _encoder(hints[f.name])) for f in dataclasses.fields(cls))


def _encode_time(value: datetime.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc).isoformat()


def _to_primitive(value: Payload) -> dict:
    return value.to_primitive()


def _composed(tp: Any, convert: Callable[[Any], Callable[[Any], Any]]
              ) -> Callable[[Any], Any] | None:
    """For ``X | None``, ``list[X]`` and ``dict[str, X]``: ``convert(X)`` applied through them; else None.

    What ``_encoder`` and ``_decoder`` share: each gives its own function for
    the other types. A converter that leaves X as it is (``_identity``)
    makes a list or dict a one-level copy, and an optional one as it is.
    """
    optional, inner = _is_optional(tp)
    if optional:
        convert_inner = convert(inner)
        if convert_inner is _identity:
            return _identity
        return lambda value: None if value is None else convert_inner(value)
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        convert_item = convert(item)
        if convert_item is _identity:
            return list
        return lambda value: [convert_item(v) for v in value]
    if origin is dict:
        _, item = typing.get_args(tp)
        convert_item = convert(item)
        if convert_item is _identity:
            return dict
        return lambda value: {k: convert_item(v) for k, v in value.items()}
    return None


@functools.cache
def _encoder(tp: Any) -> Callable[[Any], Any]:
    """A function turning a field's value of type ``tp`` into JSON: ``_to_json`` without the type tests.

    Built once per type, as ``_decoder`` is. Values of JSON's own scalar
    types are passed as they are; lists and dicts of them are copied one
    level (their items cannot change); ``Any`` is walked by ``_to_json``.
    """
    composed = _composed(tp, _encoder)
    if composed is not None:
        return composed
    if tp in (str, int, float, bool):
        return _identity
    if tp is datetime.datetime:
        return _encode_time
    if isinstance(tp, type) and issubclass(tp, Payload):
        return _to_primitive
    return _to_json


def _to_json(value: Any) -> Any:
    if isinstance(value, Payload):
        return value.to_primitive()
    if isinstance(value, datetime.datetime):
        return _encode_time(value)
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


def _identity(value: Any) -> Any:
    return value


def _decode_time(value: Any) -> datetime.datetime:
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except (TypeError, ValueError) as exc:
        raise MalformedPayload(f'{value!r} is not an ISO 8601 time: {exc}') from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed


def _decode_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) else value


@functools.cache
def _decoder(tp: Any) -> Callable[[Any], Any]:
    """A function turning the (already validated) JSON value of type ``tp`` into Python.

    Built once per type: received messages are decoded without walking
    type hints each time.
    """
    composed = _composed(tp, _decoder)
    if composed is not None:
        return composed
    if tp is datetime.datetime:
        return _decode_time
    if tp is float:
        return _decode_float
    if isinstance(tp, type) and issubclass(tp, Payload):
        return tp.from_primitive
    return _identity
