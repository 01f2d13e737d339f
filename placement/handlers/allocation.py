"""Allocations over HTTP.

    GET    /allocations/{consumer_uuid}
    PUT    /allocations/{consumer_uuid}
    DELETE /allocations/{consumer_uuid}
    POST   /allocations                          (1.13+: several consumers at once)
    GET    /resource_providers/{uuid}/allocations

The bodies per microversion are in placement/schemas/allocation.py; the
checks and the single write transaction in placement/objects/allocation.py.
"""
from __future__ import annotations

import uuid as uuidlib

import jsonschema

from placement import errors
from placement.microversion import min_version
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.request import is_uuid_like, validator_for
from placement.response import json_response, no_content
from placement.schemas import allocation as schema


def list_for_consumer(req):
    """GET /allocations/{consumer_uuid}::

        {"allocations": {RP_UUID: {"generation": 3, "resources": {"VCPU": 2}}},
         "project_id": "...", "user_id": "...",       # 1.12+, when any
         "consumer_generation": 1,                      # 1.28+
         "consumer_type": "INSTANCE"}                   # 1.38+
    """
    found = alloc_obj.get_for_consumer(req.context.engine,
                                       req.urlvars['consumer_uuid'])
    body = {'allocations': {
        rp: {'generation': generation, 'resources': resources}
        for rp, (generation, resources) in found.by_provider.items()}}
    if found.consumer is not None and req.mv >= (1, 12):
        body['project_id'] = found.consumer.project_id
        body['user_id'] = found.consumer.user_id
        if req.mv >= (1, 28):
            body['consumer_generation'] = found.consumer.generation
        if req.mv >= (1, 38):
            body['consumer_type'] = found.consumer.consumer_type or 'unknown'
    return json_response(req, body, last_modified=found.last_modified)


def list_for_resource_provider(req):
    """GET /resource_providers/{uuid}/allocations::

        {"resource_provider_generation": 5,
         "allocations": {CONSUMER_UUID: {"resources": {"VCPU": 2},
                                         "consumer_generation": 1}}}   # 1.28+
    """
    uuid = req.urlvars['uuid']
    found = alloc_obj.get_for_provider(req.context.engine, uuid)
    if found is None:
        raise errors.NotFound(f"Resource provider '{uuid}' not found: "
                              f"No resource provider with uuid {uuid} found")
    with_generation = req.mv >= (1, 28)
    allocations = {}
    for consumer, (generation, resources) in found.by_consumer.items():
        entry = {'resources': resources}
        if with_generation:
            entry['consumer_generation'] = generation
        allocations[consumer] = entry
    return json_response(req, {'allocations': allocations,
                               'resource_provider_generation': found.provider_generation},
                         last_modified=found.last_modified)


def set_allocations_for_consumer(req):
    """PUT /allocations/{consumer_uuid}: replace the consumer's allocations."""
    req.require_json()
    consumer_uuid = req.urlvars['consumer_uuid']
    if not is_uuid_like(consumer_uuid):
        raise errors.BadRequest(f'Malformed consumer_uuid: {consumer_uuid}')
    consumer_uuid = str(uuidlib.UUID(consumer_uuid))
    data = req.json_body()
    if not schema.certainly_valid_put(data, req.mv):
        _validate(data, schema.put_schema(req.mv))
    write = consumer_write(req, consumer_uuid, data)
    _replace(req, [write], prefix=f'Unable to allocate inventory for consumer '
                                  f'{consumer_uuid}: ')
    return no_content(req)


@min_version('1.13')
def set_allocations(req):
    """POST /allocations: replace the allocations of several consumers atomically."""
    data = req.json_body(schema.post_schema(req.mv))
    writes = [consumer_write(req, consumer_uuid, body)
              for consumer_uuid, body in data.items()]
    _replace(req, writes, prefix='Unable to allocate inventory ')
    return no_content(req)


def delete_allocations(req):
    """DELETE /allocations/{consumer_uuid}: remove them all (not generation-safe)."""
    consumer_uuid = req.urlvars['consumer_uuid']
    try:
        alloc_obj.delete_for_consumer(req.context.engine, consumer_uuid)
    except alloc_obj.NoAllocations as exc:
        raise errors.NotFound(str(exc)) from None
    return no_content(req)


# The columns are 32-bit integers; the schemas set no maximum (neither do
# the reference's), so a larger number must be refused here, not by the
# database (a 500).
MAX_INT = 0x7FFFFFFF


def _check_storable(*numbers) -> None:
    for n in numbers:
        if type(n) is int and n > MAX_INT:
            raise errors.BadRequest(
                f'JSON does not validate: {n} is greater than the maximum of {MAX_INT}')


def _validate(data, body_schema: dict) -> None:
    try:
        validator_for(body_schema).validate(data)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest(f'JSON does not validate: {exc}') from None


def consumer_write(req, consumer_uuid: str, data: dict) -> alloc_obj.ConsumerWrite:
    """One consumer's body (of this request's microversion) as a ConsumerWrite;
    the reshaper reads its allocations with it too."""
    allocations = data['allocations']
    if req.mv < (1, 12):
        # The list format: [{"resource_provider": {"uuid"}, "resources"}].
        allocations = {item['resource_provider']['uuid']: item['resources']
                       for item in allocations}
    else:
        allocations = {rp: item['resources'] for rp, item in allocations.items()}
    generation = alloc_obj.UNCHECKED
    if req.mv >= (1, 28):
        generation = data['consumer_generation']
    _check_storable(generation, *(n for res in allocations.values() for n in res.values()))
    project_id = data.get('project_id', consumer_obj.INCOMPLETE_CONSUMER_ID)
    user_id = data.get('user_id', consumer_obj.INCOMPLETE_CONSUMER_ID)
    return alloc_obj.ConsumerWrite(
        consumer_uuid=consumer_uuid,
        project_id=project_id,
        user_id=user_id,
        allocations=allocations,
        generation=generation,
        consumer_type=data.get('consumer_type') if req.mv >= (1, 38) else None,
    )


def _replace(req, writes, *, prefix: str) -> None:
    """Write, turning each refusal into the reference's status and message."""
    try:
        alloc_obj.replace_allocations(req.context.engine, writes)
    except alloc_obj.ConsumerGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE) from None
    except alloc_obj.ProviderNotFound as exc:
        raise errors.BadRequest(str(exc)) from None
    except alloc_obj.ResourceClassNotFound as exc:
        raise errors.BadRequest(f'{prefix}{exc}') from None
    except alloc_obj.ConcurrentUpdate as exc:
        raise errors.Conflict(
            f'Inventory and/or allocations changed while attempting to '
            f'allocate: {exc}', code=errors.CONCURRENT_UPDATE) from None
    except alloc_obj.InvalidInventory as exc:
        raise errors.Conflict(f'Unable to allocate inventory: {exc}') from None
