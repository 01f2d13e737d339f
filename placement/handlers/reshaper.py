"""POST /reshaper (1.30+): move inventory and allocations atomically.

Body: {"inventories": {RP_UUID: {"resource_provider_generation": N,
                                 "inventories": {...}}},
       "allocations": {CONSUMER_UUID: <as in POST /allocations>}}
"""
from __future__ import annotations

from placement import errors
from placement.handlers import allocation as alloc_handler
from placement.microversion import min_version
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import reshaper as reshaper_obj
from placement.response import no_content
from placement.schemas import reshaper as schema


@min_version('1.30')
def reshape(req):
    data = req.json_body(schema.post_schema(req.mv))
    inventories = [
        reshaper_obj.ProviderInventory(
            uuid, body['resource_provider_generation'],
            {rc: inv_obj.with_defaults(fields)
             for rc, fields in body['inventories'].items()})
        for uuid, body in data['inventories'].items()]
    writes = [alloc_handler.consumer_write(req, consumer, body)
              for consumer, body in data['allocations'].items()]
    try:
        reshaper_obj.reshape(req.context.engine, inventories, writes, req.mv)
    except reshaper_obj.ProviderNotFound as exc:
        raise errors.BadRequest(str(exc), code=errors.RESOURCE_PROVIDER_NOT_FOUND) from None
    except reshaper_obj.ProviderGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE) from None
    except (reshaper_obj.UnknownResourceClass, reshaper_obj.InvalidInventory) as exc:
        raise errors.BadRequest(f'malformed reshaper data: {exc}') from None
    except inv_obj.InventoryInUse as exc:
        raise errors.Conflict(f'update conflict: {exc.detail}',
                              code=errors.INVENTORY_INUSE) from None
    except alloc_obj.ConsumerGenerationConflict as exc:
        raise errors.Conflict(str(exc), code=errors.CONCURRENT_UPDATE) from None
    except alloc_obj.ProviderNotFound as exc:
        raise errors.BadRequest(str(exc)) from None
    except alloc_obj.ResourceClassNotFound as exc:
        raise errors.BadRequest(f'malformed reshaper data: {exc}') from None
    except alloc_obj.ConcurrentUpdate as exc:
        raise errors.Conflict(f'update conflict: {exc}', code=errors.CONCURRENT_UPDATE) from None
    except alloc_obj.InvalidInventory as exc:
        raise errors.Conflict(f'Unable to allocate inventory: {exc}') from None
    return no_content(req)
