"""The reshaper: move inventory and the allocations against it between
providers (say, VCPU from a compute node to its NUMA children) in ONE
transaction, so that no claim can see the half-moved state.

Steps, as the reference does them (and with the same generation bumps):
1. interim inventory: each provider keeps its current inventory plus the
   new classes and amounts (nothing is removed yet, so no allocation loses
   its inventory);
2. replace the consumers' allocations (the claim writer's Python path, on
   the same connection: same checks, same locks);
3. final inventory: exactly the new inventory; a class still allocated that
   is removed here is refused (placement.inventory.inuse).
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from placement.db import api as db_api
from placement.db.models import inventories as inv_t
from placement.objects import allocation as alloc_obj
from placement.objects import inventory as inv_obj
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj


class ReshapeError(Exception):
    """The reshape is refused; nothing changed."""


class ProviderNotFound(ReshapeError):
    def __init__(self, uuid: str):
        super().__init__(f'Resource provider {uuid} in inventories not found: '
                         f'No resource provider with uuid {uuid} found')


class ProviderGenerationConflict(ReshapeError):
    def __init__(self, uuid: str, actual: int, given: int):
        super().__init__(f'resource provider generation conflict for provider '
                         f'{uuid}: actual: {actual}, given: {given}')


class UnknownResourceClass(ReshapeError):
    def __init__(self, name: str):
        super().__init__(f'No such resource class {name}.')


class InvalidInventory(ReshapeError):
    pass


@dataclass
class ProviderInventory:
    uuid: str
    generation: int
    inventories: dict[str, dict]     # class -> fields (defaults filled in)


def reshape(engine: Engine, inventories: list[ProviderInventory],
            writes: list[alloc_obj.ConsumerWrite], mv) -> None:
    """Raises ReshapeError, alloc_obj.AllocationError or inventory in-use
    (a placement.errors.Conflict) when refused."""
    resolved = alloc_obj.resolve_names(engine, writes)
    with engine.begin() as conn:
        targets = []
        for want in inventories:
            rp = rp_obj.find(conn, want.uuid)
            if rp is None:
                raise ProviderNotFound(want.uuid)
            if rp.generation != want.generation:
                raise ProviderGenerationConflict(want.uuid, rp.generation, want.generation)
            for rc_name, fields in want.inventories.items():
                try:
                    inv_obj.check_capacity(mv, rc_name, want.uuid, fields)
                except ValueError as exc:
                    raise InvalidInventory(str(exc)) from None
            targets.append((rp, want))
        # Checked against the generations read above: a concurrent writer
        # makes this a 409 concurrent_update.
        for rp, _ in targets:
            rp_obj.bump_generation(conn, rp.id, rp.generation)

        if not writes and _first_inventories(conn, targets):
            return

        for rp, want in targets:
            if not want.inventories:
                continue
            ids = _class_ids(conn, want.inventories)
            interim = {rc: _fields(row) for rc, row in inv_obj.get_all(conn, rp.id).items()}
            interim.update({ids[name]: fields for name, fields in want.inventories.items()})
            inv_obj.replace_all(conn, rp.id, rp.uuid, interim,
                                rc_obj.names_by_id(conn, interim))

        if writes:
            alloc_obj.replace_in_transaction(conn, writes, resolved)

        for rp, want in targets:
            ids = _class_ids(conn, want.inventories)
            final = {ids[name]: fields for name, fields in want.inventories.items()}
            current = inv_obj.get_all(conn, rp.id)
            inv_obj.replace_all(conn, rp.id, rp.uuid, final,
                                rc_obj.names_by_id(conn, set(final) | set(current)))
            if want.inventories:
                # (A provider whose inventory is emptied had no interim
                # step: its checked bump above stands for this one.)
                conn.execute(rp_obj.rp_t.update().where(rp_obj.rp_t.c.id == rp.id)
                             .values(generation=rp_obj.rp_t.c.generation + 1))


def _first_inventories(conn, targets: list) -> bool:
    """The reshape of providers that hold no inventory yet, with no allocations; False if not that.

    A new compute node's first inventory, a hundred providers per request
    (a hollow agent's first report): the interim inventory would be the
    final one, so it is written once, for all the providers at once (one
    read, one insert, one generation update), with the same outcome as the
    steps below, the same errors (an unknown class, in the providers'
    order) and the same two generation bumps per provider given inventory.
    """
    ids = [rp.id for rp, _ in targets]
    held = conn.execute(sa.select(inv_t.c.resource_provider_id)
                        .where(inv_t.c.resource_provider_id.in_(ids)).limit(1)).first()
    if held is not None:
        return False
    now = db_api.utcnow()
    rows = []
    for rp, want in targets:
        class_ids = _class_ids(conn, want.inventories)
        rows += [dict(resource_provider_id=rp.id, resource_class_id=class_ids[name],
                      created_at=now, updated_at=now, **fields)
                 for name, fields in want.inventories.items()]
    if rows:
        conn.execute(inv_t.insert(), rows)
    given = [rp.id for rp, want in targets if want.inventories]
    if given:
        conn.execute(rp_obj.rp_t.update().where(rp_obj.rp_t.c.id.in_(given))
                     .values(generation=rp_obj.rp_t.c.generation + 1))
    return True


def _class_ids(conn, inventories: dict) -> dict[str, int]:
    ids = rc_obj.ids_by_name(conn, inventories)
    for name in sorted(inventories):
        if name not in ids:
            raise UnknownResourceClass(name)
    return ids


def _fields(row) -> dict:
    return {f: getattr(row, f) for f in inv_obj.FIELDS}
