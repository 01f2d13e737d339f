"""rpc_schemas: stored schemas match the classes; envelopes round-trip; bad ones are refused."""
from __future__ import annotations

import dataclasses
import datetime
import importlib
import json
from typing import Any

import fastjsonschema
import pytest

from rpc_schemas import REGISTRY
from rpc_schemas.base import (
    Payload,
    compilable,
    compiled_check,
    compiled_module_name,
    field,
    parse_version,
    schema_digest,
    stored_schema,
)
from rpc_schemas.errors import (
    MalformedPayload,
    PayloadDowngradeError,
    UnknownPayload,
    UnsupportedPayloadVersion,
)
from rpc_schemas.ping import Ping, Pong
from rpc_schemas.registry import PayloadRegistry
from rpc_schemas.service_status import ServiceStatus
from rpc_schemas.write_schemas import SCHEMA_DIR, render

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc)


def _status(**overrides) -> ServiceStatus:
    values = dict(host='cmp1', binary='cellplane-compute', topic='compute',
                  report_time=NOW, version='0.1.0', cell_name='cell1')
    values.update(overrides)
    return ServiceStatus(**values)


@pytest.mark.parametrize('cls', REGISTRY.classes(), ids=lambda c: c.NAME)
def test_stored_schema_file_equals_the_schema_generated_from_the_class(cls):
    path = SCHEMA_DIR / cls.schema_filename()
    assert path.exists(), f'run python -m rpc_schemas.write_schemas to create {path}'
    assert path.read_text(encoding='utf-8') == render(cls.json_schema()), (
        f'{path.name} drifted from {cls.__name__}: run python -m rpc_schemas.write_schemas')
    assert stored_schema(cls) == cls.json_schema()


@pytest.mark.parametrize('cls', REGISTRY.classes(), ids=lambda c: c.NAME)
def test_each_stored_schema_is_checked_by_its_compiled_module(cls):
    name = compiled_module_name(cls)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        pytest.fail(f'no {name}: run python -m rpc_schemas.write_schemas')
    assert module.SCHEMA_SHA256 == schema_digest(stored_schema(cls)), (
        f'{name} was made from another schema: run python -m rpc_schemas.write_schemas')
    assert compiled_check(cls) is module.validate


def test_a_compiled_module_made_from_another_schema_is_not_used(monkeypatch):
    # Ping's schema as if Ping had gained a required field since its module was written.
    changed = json.loads(json.dumps(stored_schema(Ping)))
    changed['properties']['extra'] = {'type': 'string'}
    changed['required'] = [*changed['required'], 'extra']
    monkeypatch.setattr('rpc_schemas.base.stored_schema', lambda cls: changed)
    compiled_check.cache_clear()
    try:
        check = compiled_check(Ping)
        assert check is not importlib.import_module(compiled_module_name(Ping)).validate
        with pytest.raises(fastjsonschema.JsonSchemaException):
            check(Ping(message='hi').to_primitive()['cellplane.data'])
    finally:
        compiled_check.cache_clear()


def test_service_status_round_trips_through_json():
    status = _status(disabled=True, disabled_reason='maintenance', building=['i-1'])
    wire = json.loads(json.dumps(status.to_primitive()))
    assert wire['cellplane.name'] == 'ServiceStatus'
    assert wire['cellplane.version'] == '1.1'
    assert wire['cellplane.data']['report_time'] == '2026-01-02T03:04:05.678000+00:00'
    assert REGISTRY.from_primitive(wire) == status


def test_naive_report_time_is_sent_as_utc():
    naive = NOW.replace(tzinfo=None)
    wire = _status(report_time=naive).to_primitive()
    assert REGISTRY.from_primitive(wire).report_time == NOW


def test_ping_defaults_and_pong_round_trip():
    assert REGISTRY.from_primitive(Ping().to_primitive()) == Ping(message='', hold_seconds=None)
    pong = Pong(message='hi', host='h', binary='b', held_seconds=1.5)
    assert REGISTRY.from_primitive(pong.to_primitive()) == pong


def test_integer_hold_seconds_becomes_float():
    ping = REGISTRY.from_primitive(
        {'cellplane.name': 'Ping', 'cellplane.version': '1.0',
         'cellplane.data': {'hold_seconds': 2}})
    assert ping.hold_seconds == 2.0 and isinstance(ping.hold_seconds, float)


def test_unknown_payload_name_is_refused_naming_it_and_the_known_ones():
    with pytest.raises(UnknownPayload, match=r"unknown payload 'Nope'.*knows: .*Ping"):
        REGISTRY.from_primitive({'cellplane.name': 'Nope', 'cellplane.version': '1.0',
                                 'cellplane.data': {}})


@pytest.mark.parametrize('version', ['2.0', '1.1', '0.9', 'one', '1', None])
def test_versions_other_than_same_major_and_older_minor_are_refused(version):
    primitive = Ping().to_primitive()
    primitive['cellplane.version'] = version
    with pytest.raises(UnsupportedPayloadVersion, match='Ping'):
        REGISTRY.from_primitive(primitive)


def test_missing_required_field_is_refused_naming_it():
    primitive = _status().to_primitive()
    del primitive['cellplane.data']['host']
    with pytest.raises(MalformedPayload, match="'host' is a required property"):
        REGISTRY.from_primitive(primitive)


def test_unknown_field_and_wrong_type_are_refused():
    primitive = _status().to_primitive()
    primitive['cellplane.data']['surprise'] = 1
    primitive['cellplane.data']['disabled'] = 'yes'
    with pytest.raises(MalformedPayload) as err:
        REGISTRY.from_primitive(primitive)
    assert 'surprise' in str(err.value)
    assert "disabled: 'yes' is not of type 'boolean'" in str(err.value)


def test_hold_seconds_is_bounded():
    primitive = Ping(hold_seconds=1).to_primitive()
    primitive['cellplane.data']['hold_seconds'] = 3600
    with pytest.raises(MalformedPayload, match='hold_seconds: 3600 is greater than the maximum'):
        REGISTRY.from_primitive(primitive)


def test_bad_report_time_is_refused():
    primitive = _status().to_primitive()
    primitive['cellplane.data']['report_time'] = 'yesterday'
    with pytest.raises(MalformedPayload, match='yesterday'):
        REGISTRY.from_primitive(primitive)


@pytest.mark.parametrize('envelope', [
    {'cellplane.name': 'Ping', 'cellplane.data': {}},
    {'cellplane.name': 'Ping', 'cellplane.version': '1.0'},
])
def test_incomplete_envelope_is_refused(envelope):
    with pytest.raises(MalformedPayload, match='lacks'):
        REGISTRY.from_primitive(envelope)


# A payload at 1.2 that gained fields in 1.1 and 1.2, to pin the version rules.
@dataclasses.dataclass(frozen=True)
class Widget(Payload):
    NAME = 'Widget'
    VERSION = '1.2'

    size: int
    colour: str | None = field(default=None, since='1.1')
    tags: list[str] = field(default_factory=list, since='1.2')


@pytest.fixture
def widget_registry(monkeypatch):
    schema = Widget.json_schema()
    monkeypatch.setattr('rpc_schemas.base.stored_schema', lambda cls: schema)
    registry = PayloadRegistry()
    registry.register(Widget)
    return registry


def test_older_minor_is_accepted_and_missing_newer_fields_take_defaults(widget_registry):
    widget = widget_registry.from_primitive(
        {'cellplane.name': 'Widget', 'cellplane.version': '1.0',
         'cellplane.data': {'size': 3}})
    assert widget == Widget(size=3, colour=None, tags=[])


def test_downgrade_drops_fields_newer_than_the_target(widget_registry):
    primitive = Widget(size=3, colour='red').to_primitive(target_version='1.1')
    assert primitive == {'cellplane.name': 'Widget', 'cellplane.version': '1.1',
                         'cellplane.data': {'size': 3, 'colour': 'red'}}


def test_downgrade_that_would_lose_a_value_is_refused():
    with pytest.raises(PayloadDowngradeError, match=r"'tags' was added in 1.2"):
        Widget(size=3, tags=['x']).to_primitive(target_version='1.1')


@pytest.mark.parametrize('target', ['2.0', '1.3', '0.1'])
def test_downgrade_to_another_major_or_a_newer_minor_is_refused(target):
    with pytest.raises(PayloadDowngradeError):
        Widget(size=3).to_primitive(target_version=target)


def test_explicit_accept_list_replaces_the_same_major_rule(monkeypatch):
    schema = Widget.json_schema()
    monkeypatch.setattr('rpc_schemas.base.stored_schema', lambda cls: schema)
    registry = PayloadRegistry()
    registry.register(Widget, accepts=['1.1', '1.2'])
    data = {'cellplane.name': 'Widget', 'cellplane.data': {'size': 1}}
    assert registry.from_primitive({**data, 'cellplane.version': '1.1'}) == Widget(size=1)
    with pytest.raises(UnsupportedPayloadVersion, match='accepted: 1.1, 1.2'):
        registry.from_primitive({**data, 'cellplane.version': '1.0'})


def test_nested_payloads_travel_as_envelopes(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Box(Payload):
        NAME = 'Box'
        VERSION = '1.0'
        items: list[Widget]

    schemas = {Box: Box.json_schema(), Widget: Widget.json_schema()}
    monkeypatch.setattr('rpc_schemas.base.stored_schema', lambda cls: schemas[cls])
    box = Box(items=[Widget(size=1), Widget(size=2, colour='blue')])
    primitive = json.loads(json.dumps(box.to_primitive()))
    assert primitive['cellplane.data']['items'][0]['cellplane.name'] == 'Widget'
    assert Box.from_primitive(primitive) == box


def test_two_classes_with_one_name_cannot_both_register():
    registry = PayloadRegistry()
    registry.register(Widget)

    @dataclasses.dataclass(frozen=True)
    class OtherWidget(Payload):
        NAME = 'Widget'
        VERSION = '1.0'

    with pytest.raises(ValueError, match="two payload classes are named 'Widget'"):
        registry.register(OtherWidget)


def _payload_classes_defined_in_the_package() -> list[type[Payload]]:
    import importlib
    import inspect
    import pkgutil

    import rpc_schemas
    found = []
    for info in pkgutil.iter_modules(rpc_schemas.__path__):
        module = importlib.import_module(f'rpc_schemas.{info.name}')
        found.extend(obj for _, obj in inspect.getmembers(module, inspect.isclass)
                     if issubclass(obj, Payload) and obj is not Payload
                     and obj.__module__ == module.__name__)
    return found


def test_every_payload_class_in_the_package_is_registered_on_import():
    # A receiver knows a payload only if importing rpc_schemas registered it.
    defined = {cls.NAME for cls in _payload_classes_defined_in_the_package()}
    assert defined <= set(REGISTRY.names()), (
        f'import these in rpc_schemas/__init__.py: {sorted(defined - set(REGISTRY.names()))}')


def test_every_stored_schema_file_belongs_to_a_registered_payload():
    classes = {cls.NAME: cls for cls in REGISTRY.classes()}
    for path in SCHEMA_DIR.glob('*.json'):
        name, _, version = path.stem.rpartition('-')
        assert name in classes, f'{path.name}: no payload named {name}'
        cls = classes[name]
        assert parse_version(version) <= parse_version(cls.VERSION), (
            f'{path.name} is newer than {name} {cls.VERSION}')


# The compiled check (fastjsonschema, draft 7) is the fast path; jsonschema
# (2020-12) is the reference. They must give the same answer on every kind
# of keyword the generator emits.
@dataclasses.dataclass(frozen=True)
class Gadget(Payload):
    NAME = 'Gadget'
    VERSION = '1.0'

    name: str = field(minLength=1, maxLength=8, pattern=r'^[a-z]+$')
    count: int = field(minimum=0, maximum=10)
    ratio: float = field(default=1.0)
    mode: str = field(default='a', enum=['a', 'b'])
    note: str | None = field(default=None)
    labels: list[str] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    part: Widget | None = None
    # Optional kinds whose anyOf the compiled check turns into a type list.
    label: str | None = field(default=None, minLength=2, maxLength=4)
    when: datetime.datetime | None = None
    level: int | None = field(default=None, minimum=1)
    tags: list[str] | None = None
    kind: str | None = field(default=None, enum=['x', 'y', None])


GOOD_GADGET = {'name': 'abc', 'count': 3}


@pytest.mark.parametrize('data', [
    GOOD_GADGET,
    {**GOOD_GADGET, 'ratio': 2, 'mode': 'b', 'note': None, 'labels': ['x'],
     'limits': {'VCPU': 4}, 'extra': {'any': [1, {'thing': None}]}},
    {**GOOD_GADGET, 'part': {'cellplane.name': 'Widget', 'cellplane.version': '1.0',
                             'cellplane.data': {'size': 1}}},
    {**GOOD_GADGET, 'part': None, 'label': None, 'when': None, 'level': None, 'tags': None,
     'kind': None},
    {**GOOD_GADGET, 'label': 'ab', 'when': '2026-11-28T03:00:00+00:00', 'level': 1,
     'tags': ['a'], 'kind': 'y'},
])
def test_compiled_check_and_reference_validator_accept_the_same_valid_data(data):
    compiled, reference = _gadget_validators()
    compiled(data)
    assert not list(reference.iter_errors(data))


@pytest.mark.parametrize('data', [
    {'count': 3},
    {**GOOD_GADGET, 'name': ''},
    {**GOOD_GADGET, 'name': 'toolongname'},
    {**GOOD_GADGET, 'name': 'ABC'},
    {**GOOD_GADGET, 'count': -1},
    {**GOOD_GADGET, 'count': 11},
    {**GOOD_GADGET, 'count': 1.5},
    {**GOOD_GADGET, 'count': True},
    {**GOOD_GADGET, 'ratio': 'x'},
    {**GOOD_GADGET, 'mode': 'c'},
    {**GOOD_GADGET, 'note': 5},
    {**GOOD_GADGET, 'labels': 'x'},
    {**GOOD_GADGET, 'labels': [1]},
    {**GOOD_GADGET, 'limits': {'VCPU': 'four'}},
    {**GOOD_GADGET, 'unknown': 1},
    {**GOOD_GADGET, 'part': {'cellplane.name': 'Gizmo', 'cellplane.version': '1.0',
                             'cellplane.data': {}}},
    {**GOOD_GADGET, 'part': {'cellplane.name': 'Widget', 'cellplane.version': 'x',
                             'cellplane.data': {}}},
    {**GOOD_GADGET, 'part': {'cellplane.name': 'Widget', 'cellplane.version': '1.0'}},
    {**GOOD_GADGET, 'part': 'Widget'},
    {**GOOD_GADGET, 'label': 'a'},
    {**GOOD_GADGET, 'label': 'abcde'},
    {**GOOD_GADGET, 'label': 7},
    {**GOOD_GADGET, 'when': 5},
    {**GOOD_GADGET, 'level': 0},
    {**GOOD_GADGET, 'level': '1'},
    {**GOOD_GADGET, 'tags': [None]},
    {**GOOD_GADGET, 'tags': 'a'},
    {**GOOD_GADGET, 'kind': 'z'},
    [],
    'text',
    None,
])
def test_compiled_check_and_reference_validator_reject_the_same_invalid_data(data):
    import fastjsonschema
    compiled, reference = _gadget_validators()
    with pytest.raises(fastjsonschema.JsonSchemaException):
        compiled(data)
    assert list(reference.iter_errors(data))


def _gadget_validators():
    # The compiled check is made from the schema's compilable form, as
    # write_schemas and compiled_check make it; the reference reads the schema.
    import fastjsonschema
    import jsonschema
    schema = Gadget.json_schema()
    reference_cls = jsonschema.validators.validator_for(schema)
    return fastjsonschema.compile(compilable(schema)), reference_cls(schema)


def test_the_compilable_form_turns_a_plain_optional_into_a_type_list_and_leaves_the_rest():
    schema = Gadget.json_schema()
    fast = compilable(schema)['properties']
    assert fast['label'] == {'type': ['string', 'null'], 'minLength': 2, 'maxLength': 4}
    assert fast['when'] == {'type': ['string', 'null'], 'format': 'date-time'}
    assert fast['part']['type'] == ['object', 'null']
    assert fast['tags'] == {'type': ['array', 'null'], 'items': {'type': 'string'}}
    assert fast['kind']['type'] == ['string', 'null']
    assert fast['kind']['enum'] == ['x', 'y', None]
    # Not a plain type or null: left as it is.
    mixed = {'anyOf': [{'const': 'a'}, {'type': 'null'}]}
    assert compilable(mixed) == mixed
    clash = {'anyOf': [{'type': 'string', 'maxLength': 3}, {'type': 'null'}], 'maxLength': 5}
    assert compilable(clash) == clash
    # The contract is untouched.
    assert schema == Gadget.json_schema()


def test_a_payload_written_by_its_field_encoders_equals_the_walk_of_every_value():
    from rpc_schemas.base import _to_json
    when = datetime.datetime(2026, 11, 28, 3, 0, tzinfo=datetime.timezone.utc)
    gadget = Gadget(name='abc', count=3, labels=('x', 'y'), limits={'VCPU': 4},
                    extra={'any': [1, {'at': when}]}, part=Widget(size=2, tags=['t']),
                    when=when.replace(tzinfo=None), tags=['a'], label='ab')
    data = gadget.to_primitive()['cellplane.data']
    walked = {f.name: _to_json(getattr(gadget, f.name)) for f in dataclasses.fields(gadget)}
    assert data == walked
    assert data['labels'] == ['x', 'y'] and data['when'] == '2026-11-28T03:00:00+00:00'
    assert data['extra'] == {'any': [1, {'at': '2026-11-28T03:00:00+00:00'}]}
    # Copies: the wire form shares no list or dict with the payload.
    assert data['limits'] is not gadget.limits and data['tags'] is not gadget.tags


@pytest.mark.parametrize('version, accepted', [
    ('1.0', True), ('1.1', True), ('1.01', True), ('1.2', False), ('2.0', False),
    ('0.1', False), ('1', False), (1.0, False), (None, False), (['1.0'], False),
    ({'1.0': 1}, False)])
def test_the_versions_a_class_accepts_with_and_without_its_known_minors(version, accepted):
    class Known(Payload):
        NAME = 'Known'
        VERSION = '1.1'
    if accepted:
        Known.check_version(version)
    else:
        with pytest.raises(UnsupportedPayloadVersion):
            Known.check_version(version)


def test_invalid_data_of_an_older_minor_names_the_version_sent_and_the_one_read_as():
    wire = _status().to_primitive()
    wire['cellplane.version'] = '1.0'
    del wire['cellplane.data']['host']
    with pytest.raises(MalformedPayload) as err:
        REGISTRY.from_primitive(wire)
    assert str(err.value) == ("ServiceStatus 1.0 data is invalid: 'host' is a required "
                              "property (read as ServiceStatus 1.1)")


def test_a_schema_first_met_by_many_threads_at_once_is_compiled_once(monkeypatch):
    # A drain's moves reach a cell conductor's handler threads together: each
    # thread compiling the same schema cost a third of that conductor's CPU.
    import threading

    import fastjsonschema

    from rpc_schemas import base

    compiled = []
    real = fastjsonschema.compile

    def slow_compile(schema):
        compiled.append(schema['title'])
        threading.Event().wait(0.2)     # long enough for every thread to ask meanwhile
        return real(schema)

    monkeypatch.setattr(fastjsonschema, 'compile', slow_compile)
    # A schema without a compiled module (one written since): compiled here.
    monkeypatch.setattr(base, 'compiled_module_name', lambda cls: 'rpc_schemas.compiled.none')
    base.compiled_check.cache_clear()
    start = threading.Barrier(8)
    answers = []

    def first_message():
        start.wait()
        answers.append(base.compiled_check(Ping))

    threads = [threading.Thread(target=first_message) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    base.compiled_check.cache_clear()
    assert compiled == [f'Ping {Ping.VERSION}']
    assert len(answers) == 8 and len({id(a) for a in answers}) == 1
