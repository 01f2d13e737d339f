"""Parsers of the query parameters shared by GET /resource_providers and
GET /allocation_candidates: ``resources``, ``required``, ``member_of``,
``in_tree``. Each raises 400 with the reference's message on bad input.
"""
from __future__ import annotations

from placement import errors
from placement.request import is_uuid_like

# Inventory totals are 32-bit integers: no provider can hold more.
MAX_AMOUNT = 0x7FFFFFFF


def resources(value: str) -> dict[str, int]:
    """``VCPU:2,MEMORY_MB:1024`` -> {'VCPU': 2, 'MEMORY_MB': 1024}."""
    if value.strip() == '':
        raise errors.BadRequest(
            'Badly formed resources parameter. Expected resources query string '
            'parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.')
    result = {}
    for item in value.split(','):
        try:
            rc_name, amount = item.split(':')
        except ValueError:
            raise errors.BadRequest(
                'Badly formed resources parameter. Expected resources query '
                'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
                f'Got: {item}.') from None
        try:
            number = int(amount)
        except ValueError:
            raise errors.BadRequest(
                f'Requested resource {rc_name} expected positive integer '
                f'amount. Got: {amount}.') from None
        if number < 1:
            raise errors.BadRequest(
                f'Requested resource {rc_name} requires amount >= 1. '
                f'Got: {number}.')
        if number > MAX_AMOUNT:
            raise errors.BadRequest(
                f'Requested resource {rc_name} requires amount <= {MAX_AMOUNT}. '
                f'Got: {number}.')
        result[rc_name] = number
    return result


def traits(value: str, *, allow_forbidden: bool,
           allow_any: bool) -> tuple[list[set[str]], set[str]]:
    """One ``required`` value -> ([{any-of}, ...] all required, {forbidden})."""
    if value.startswith('in:'):
        if not allow_any:
            raise errors.BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                f"microversion 1.39. Got: {value}")
        any_of = {part.strip() for part in value[3:].split(',')}
        if not all(any_of):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'required' parameter "
                "value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an "
                f"empty trait in: {value}")
        if any(t.startswith('!') for t in any_of):
            raise errors.BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden "
                f"traits. Got: {value}")
        return [any_of], set()
    names = [part.strip() for part in value.split(',')]
    forbidden = {n[1:] for n in names if n.startswith('!')}
    if not all(names) or not all(forbidden):
        form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
                else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            f"value of the form: {form}. Got an empty trait in: {value}")
    if forbidden and not allow_forbidden:
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'required' parameter "
            f"value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}")
    return [{n} for n in names if not n.startswith('!')], forbidden


def required_params(req, suffix: str = '') -> tuple[list[set[str]], set[str]]:
    """All ``required<suffix>`` params of ``req`` (repeatable from 1.39)."""
    allow_forbidden = req.mv >= (1, 22)
    allow_any = req.mv >= (1, 39)
    values = req.GET.getall('required' + suffix)
    if not allow_any:
        values = values[-1:]
    required: list[set[str]] = []
    forbidden: set[str] = set()
    for value in values:
        req_part, forb_part = traits(value, allow_forbidden=allow_forbidden,
                                     allow_any=allow_any)
        required += req_part
        forbidden |= forb_part
    return required, forbidden


def member_of(value: str) -> tuple[set[str], set[str]]:
    """One ``member_of`` value -> ({any of these aggregates}, {none of these})."""
    if ',' in value and not (value.startswith('in:') or value.startswith('!in:')):
        raise errors.BadRequest(
            "Multiple values for 'member_of' must be prefixed with the 'in:' "
            f"or '!in:' keyword using the valid microversion. Got: {value}")
    required: set[str] = set()
    forbidden: set[str] = set()
    if value.startswith('!in:'):
        forbidden = set(value[4:].split(','))
    elif value.startswith('!'):
        forbidden = {value[1:]}
    elif value.startswith('in:'):
        required = set(value[3:].split(','))
    else:
        required = {value}
    for agg in required | forbidden:
        if not is_uuid_like(agg):
            raise errors.BadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                f"parameter to contain valid UUID(s). Got: {agg}")
    return required, forbidden


def member_of_params(req, suffix: str = '') -> tuple[list[set[str]], set[str]]:
    """All ``member_of<suffix>`` params: ([{any-of}, ...], {forbidden})."""
    values = req.GET.getall('member_of' + suffix)
    if req.mv < (1, 24) and len(values) > 1:
        raise errors.BadRequest(
            f'Multiple member_of{suffix} parameters are not supported')
    allow_forbidden = req.mv >= (1, 32)
    required: list[set[str]] = []
    forbidden: set[str] = set()
    for value in values:
        req_part, forb_part = member_of(value)
        if req_part:
            required.append(req_part)
        if forb_part:
            if not allow_forbidden:
                raise errors.BadRequest(
                    f'Forbidden member_of{suffix} parameters are not supported '
                    'in the specified microversion')
            forbidden |= forb_part
    return required, forbidden


def in_tree(value: str) -> str:
    stripped = value.strip()
    if not is_uuid_like(stripped):
        raise errors.BadRequest(
            "Invalid query string parameters: Expected 'in_tree' parameter to "
            f"be a format of uuid. Got: {value}")
    return stripped


def normalize_uuid(value: str) -> str:
    """The canonical (dashed, lower-case) form of a UUID-like string."""
    import uuid
    return str(uuid.UUID(value))
