"""Resource providers: create, read, rename, (re)parent, delete, list, and
the generation check every write to a provider goes through.

A provider row carries ``root_provider_id`` (itself for a root) and
``parent_provider_id``; a tree is every provider sharing a root.
"""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement import errors
from placement.db import api as db_api
from placement.db.models import allocations as alloc_t
from placement.db.models import inventories as inv_t
from placement.db.models import placement_aggregates as agg_t
from placement.db.models import resource_provider_aggregates as rpa_t
from placement.db.models import resource_provider_traits as rpt_t
from placement.db.models import resource_providers as rp_t
from placement.objects import resource_class, trait

_parent = rp_t.alias('parent')
_root = rp_t.alias('root')

_SELECT = (
    sa.select(rp_t.c.id, rp_t.c.uuid, rp_t.c.name, rp_t.c.generation,
              rp_t.c.root_provider_id, rp_t.c.parent_provider_id,
              _parent.c.uuid.label('parent_provider_uuid'),
              _root.c.uuid.label('root_provider_uuid'),
              rp_t.c.created_at, rp_t.c.updated_at)
    .select_from(rp_t.outerjoin(_parent, rp_t.c.parent_provider_id == _parent.c.id)
                 .outerjoin(_root, rp_t.c.root_provider_id == _root.c.id))
)

GENERATION_CONFLICT = ("Resource provider's generation already changed. "
                       "Please update the generation and try again.")


def not_found(uuid: str, suffix: str = '') -> errors.NotFound:
    return errors.NotFound(f'No resource provider with uuid {uuid} found{suffix}')


def find(conn: Connection, uuid: str):
    """The provider row for ``uuid``, or None."""
    return conn.execute(_SELECT.where(rp_t.c.uuid == uuid)).first()


def get_by_uuid(conn: Connection, uuid: str, suffix: str = ''):
    """The provider row for ``uuid``; 404 when there is none.

    Columns: id, uuid, name, generation, root_provider_id,
    parent_provider_id, parent_provider_uuid, root_provider_uuid,
    created_at, updated_at.
    """
    row = find(conn, uuid)
    if row is None:
        raise not_found(uuid, suffix)
    return row


def id_and_generation(conn: Connection, uuid: str) -> tuple[int, int]:
    """(id, generation) of provider ``uuid``; 404 when there is none."""
    row = conn.execute(sa.select(rp_t.c.id, rp_t.c.generation)
                       .where(rp_t.c.uuid == uuid)).first()
    if row is None:
        raise not_found(uuid)
    return row.id, row.generation


def bump_generation_of(conn: Connection, uuid: str, expected: int) -> tuple[int, int]:
    """``bump_generation`` of provider ``uuid``, found and bumped in one statement: (id, generation).

    404 when there is no such provider, else 409 placement.concurrent_update
    when its generation is not ``expected``, as a read then a bump would say.
    """
    row = conn.execute(
        rp_t.update()
        .where(rp_t.c.uuid == uuid, rp_t.c.generation == expected)
        .values(generation=expected + 1, updated_at=db_api.utcnow())
        .returning(rp_t.c.id)).first()
    if row is None:
        id_and_generation(conn, uuid)    # 404 if it is not there
        raise errors.Conflict(GENERATION_CONFLICT, code=errors.CONCURRENT_UPDATE)
    return row.id, expected + 1


def bump_generation(conn: Connection, rp_id: int, expected: int) -> int:
    """Increment the provider's generation if it is still ``expected``;
    409 placement.concurrent_update otherwise. Returns the new generation.

    Every change to a provider's inventory, traits, aggregates (and
    allocations) calls this inside the same transaction, so a writer that
    read a stale generation loses and its changes roll back.
    """
    result = conn.execute(
        rp_t.update()
        .where(rp_t.c.id == rp_id, rp_t.c.generation == expected)
        .values(generation=expected + 1, updated_at=db_api.utcnow()))
    if result.rowcount != 1:
        raise errors.Conflict(GENERATION_CONFLICT, code=errors.CONCURRENT_UPDATE)
    return expected + 1


def create(conn: Connection, *, name: str, uuid: str | None = None,
           parent_uuid: str | None = None):
    """Create a provider; the new row. 409 on a duplicate name or uuid."""
    uuid = str(uuidlib.UUID(uuid)) if uuid else str(uuidlib.uuid4())
    duplicates = []
    rows = conn.execute(sa.select(rp_t.c.uuid, rp_t.c.name).where(
        sa.or_(rp_t.c.uuid == uuid, rp_t.c.name == name))).all()
    if any(r.uuid == uuid for r in rows):
        duplicates.append(f'uuid: {uuid}')
    if any(r.name == name for r in rows):
        duplicates.append(f'name: {name}')
    if duplicates:
        raise errors.Conflict(
            f'Conflicting resource provider {", ".join(duplicates)} already exists.',
            code=errors.DUPLICATE_NAME)
    parent_id = root_id = None
    if parent_uuid is not None:
        if parent_uuid == uuid:
            raise errors.BadRequest(
                f'Unable to create resource provider "{name}", {uuid}: parent '
                'provider UUID cannot be same as UUID. Please set parent '
                'provider UUID to None if there is no parent.')
        parent = conn.execute(sa.select(rp_t.c.id, rp_t.c.root_provider_id)
                              .where(rp_t.c.uuid == parent_uuid)).first()
        if parent is None:
            raise errors.BadRequest(
                f'Unable to create resource provider "{name}", {uuid}: parent '
                f'provider UUID does not exist.')
        parent_id, root_id = parent.id, parent.root_provider_id
    now = db_api.utcnow()
    # No savepoint: a refused insert ends the request, its transaction rolled back.
    try:
        rp_id = conn.execute(rp_t.insert().values(
            uuid=uuid, name=name, generation=0, parent_provider_id=parent_id,
            root_provider_id=root_id, created_at=now, updated_at=now)
        ).inserted_primary_key[0]
    except sa.exc.IntegrityError:
        raise errors.Conflict(
            f'Conflicting resource provider name: {name} already exists.',
            code=errors.DUPLICATE_NAME) from None
    if root_id is None:
        conn.execute(rp_t.update().where(rp_t.c.id == rp_id)
                     .values(root_provider_id=rp_id))
    return get_by_uuid(conn, uuid)


def _descendant_ids(conn: Connection, rp_id: int, root_id: int) -> set[int]:
    """Ids of every provider below ``rp_id`` (walks its tree in memory)."""
    rows = conn.execute(sa.select(rp_t.c.id, rp_t.c.parent_provider_id)
                        .where(rp_t.c.root_provider_id == root_id)).all()
    children: dict[int, list[int]] = {}
    for child, parent in rows:
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [rp_id]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def update(conn: Connection, row, data: dict, *, allow_reparenting: bool):
    """Apply ``name`` and/or ``parent_provider_uuid`` from ``data``; the new row."""
    values = {}
    prefix = f'Unable to save resource provider {row.uuid}: '
    if 'name' in data and data['name'] != row.name:
        taken = conn.execute(sa.select(rp_t.c.id).where(
            rp_t.c.name == data['name'], rp_t.c.id != row.id)).first()
        if taken is not None:
            raise errors.Conflict(
                f'Conflicting resource provider {data["name"]} already exists.',
                code=errors.DUPLICATE_NAME)
        values['name'] = data['name']
    subtree_root = None
    if 'parent_provider_uuid' in data:
        new_parent = data['parent_provider_uuid']
        if new_parent is not None:
            new_parent = str(uuidlib.UUID(new_parent))
        if new_parent != row.parent_provider_uuid:
            if row.parent_provider_uuid is not None and not allow_reparenting:
                what = 'un-parenting' if new_parent is None else 're-parenting'
                raise errors.BadRequest(
                    f'{prefix}Object action update failed because: '
                    f'{what} a provider is not currently allowed.')
            if new_parent is None:
                values['parent_provider_id'] = None
                subtree_root = row.id
            else:
                parent = conn.execute(
                    sa.select(rp_t.c.id, rp_t.c.root_provider_id)
                    .where(rp_t.c.uuid == new_parent)).first()
                if parent is None:
                    raise errors.BadRequest(
                        f'{prefix}parent provider UUID does not exist.')
                if parent.id == row.id or parent.id in _descendant_ids(
                        conn, row.id, row.root_provider_id):
                    raise errors.BadRequest(
                        f'{prefix}creating loop in the provider tree is not allowed.')
                values['parent_provider_id'] = parent.id
                subtree_root = parent.root_provider_id
    if not values:
        return row
    values['updated_at'] = db_api.utcnow()
    try:
        with conn.begin_nested():
            conn.execute(rp_t.update().where(rp_t.c.id == row.id).values(**values))
    except sa.exc.IntegrityError:
        raise errors.Conflict(
            f'Conflicting resource provider {data.get("name")} already exists.',
            code=errors.DUPLICATE_NAME) from None
    if subtree_root is not None and subtree_root != row.root_provider_id:
        moved = _descendant_ids(conn, row.id, row.root_provider_id) | {row.id}
        conn.execute(rp_t.update().where(rp_t.c.id.in_(moved))
                     .values(root_provider_id=subtree_root))
    return get_by_uuid(conn, row.uuid)


def delete(conn: Connection, uuid: str) -> None:
    """Delete provider ``uuid`` with its inventory, traits and aggregate links.

    409 when it has child providers, else when it has allocations.
    """
    # Lock the row first: claims and other writers lock it too (through the
    # generation bump), so none can slip an allocation or a child in between
    # the checks below and the delete.
    row = conn.execute(sa.select(rp_t.c.id).where(rp_t.c.uuid == uuid)
                       .with_for_update()).first()
    if row is None:
        raise not_found(uuid, ' for delete')
    rp_id = row.id
    # Children first, as the reference: they must go before this one
    # whatever it holds, and may hold allocations of their own.
    if conn.execute(sa.select(sa.literal(1)).select_from(rp_t)
                    .where(rp_t.c.parent_provider_id == rp_id).limit(1)).first():
        raise errors.Conflict(
            f'Unable to delete parent resource provider {uuid}: It has child '
            'resource providers.', code=errors.PROVIDER_CANNOT_DELETE_PARENT)
    if conn.execute(sa.select(sa.literal(1)).select_from(alloc_t)
                    .where(alloc_t.c.resource_provider_id == rp_id).limit(1)).first():
        raise errors.Conflict(
            f'Unable to delete resource provider {uuid}: Resource provider '
            'has allocations.', code=errors.PROVIDER_IN_USE)
    conn.execute(inv_t.delete().where(inv_t.c.resource_provider_id == rp_id))
    conn.execute(rpt_t.delete().where(rpt_t.c.resource_provider_id == rp_id))
    conn.execute(rpa_t.delete().where(rpa_t.c.resource_provider_id == rp_id))
    try:
        with conn.begin_nested():
            conn.execute(rp_t.delete().where(rp_t.c.id == rp_id))
    except sa.exc.IntegrityError:
        # Something still points at it (a writer that did not lock the row).
        raise errors.Conflict(
            f'Unable to delete resource provider {uuid}: Resource provider '
            'is in use.', code=errors.PROVIDER_IN_USE) from None


def _capacity_filter(rc_id: int, amount: int):
    """Provider ids with room for ``amount`` of class ``rc_id`` (as the reference:
    capacity, min_unit, max_unit and step_size all respected)."""
    used = (sa.select(alloc_t.c.resource_provider_id,
                      sa.func.sum(alloc_t.c.used).label('used'))
            .where(alloc_t.c.resource_class_id == rc_id)
            .group_by(alloc_t.c.resource_provider_id).subquery())
    return (
        sa.select(inv_t.c.resource_provider_id)
        .select_from(inv_t.outerjoin(
            used, used.c.resource_provider_id == inv_t.c.resource_provider_id))
        .where(inv_t.c.resource_class_id == rc_id,
               (inv_t.c.total - inv_t.c.reserved) * inv_t.c.allocation_ratio
               >= sa.func.coalesce(used.c.used, 0) + amount,
               inv_t.c.min_unit <= amount,
               inv_t.c.max_unit >= amount,
               sa.literal(amount) % inv_t.c.step_size == 0)
    )


def _in_aggregates(agg_uuids):
    return (sa.select(rpa_t.c.resource_provider_id)
            .join(agg_t, agg_t.c.id == rpa_t.c.aggregate_id)
            .where(agg_t.c.uuid.in_(sorted(agg_uuids))))


def list_providers(conn: Connection, *, name: str | None = None,
                   uuid: str | None = None, in_tree: str | None = None,
                   member_of: list[set[str]] = (), forbidden_aggs: set[str] = frozenset(),
                   resources: dict[str, int] | None = None,
                   required_traits: list[set[str]] = (),
                   forbidden_traits: set[str] = frozenset()):
    """Provider rows (as get_by_uuid) matching every filter given, by id.

    ``member_of``: each set is "in any of these aggregates", all sets must
    hold. ``required_traits`` likewise for traits. Unknown resource classes
    or traits are 400s.
    """
    query = _SELECT
    if name is not None:
        query = query.where(rp_t.c.name == name)
    if uuid is not None:
        query = query.where(rp_t.c.uuid == uuid)
    if in_tree is not None:
        root_of = (sa.select(rp_t.c.root_provider_id)
                   .where(rp_t.c.uuid == in_tree).scalar_subquery())
        query = query.where(rp_t.c.root_provider_id == root_of)
    for any_of in member_of:
        query = query.where(rp_t.c.id.in_(_in_aggregates(any_of)))
    if forbidden_aggs:
        query = query.where(rp_t.c.id.not_in(_in_aggregates(forbidden_aggs)))
    if resources:
        ids = resource_class.ids_by_name(conn, resources)
        unknown = sorted(set(resources) - set(ids))
        if unknown:
            raise errors.BadRequest(
                'Invalid resource class in resources parameter: No such '
                f'resource class {unknown[0]}.')
        for rc_name, amount in resources.items():
            query = query.where(rp_t.c.id.in_(_capacity_filter(ids[rc_name], amount)))
    wanted_traits = set().union(*required_traits) | set(forbidden_traits)
    if wanted_traits:
        trait_ids = trait.ids_by_name(conn, wanted_traits)
        unknown = sorted(wanted_traits - set(trait_ids))
        if unknown:
            raise errors.BadRequest(
                'Invalid trait(s) in "required" parameter: No such trait(s): '
                f'{", ".join(unknown)}.')
        for any_of in required_traits:
            query = query.where(rp_t.c.id.in_(
                sa.select(rpt_t.c.resource_provider_id)
                .where(rpt_t.c.trait_id.in_(sorted(trait_ids[t] for t in any_of)))))
        if forbidden_traits:
            query = query.where(rp_t.c.id.not_in(
                sa.select(rpt_t.c.resource_provider_id).where(rpt_t.c.trait_id.in_(
                    sorted(trait_ids[t] for t in forbidden_traits)))))
    return conn.execute(query.order_by(rp_t.c.id)).all()
