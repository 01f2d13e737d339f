"""Allocations: read, replace and delete them, safely under concurrency.

``replace_allocations`` is the claim path. It checks consumer generations,
provider existence, inventory constraints and capacity, writes the new
allocations and bumps every generation involved, all in ONE transaction:

1. lock the consumers (PostgreSQL ``FOR UPDATE``; SQLite runs every write
   transaction under ``BEGIN IMMEDIATE``, so writers are already serial) and
   check their generations;
2. bump the generation of every provider written to. The UPDATE takes the
   providers' row locks, so from here to commit no other claim, inventory
   change or reshape on these providers can interleave;
3. only then read inventory and usage. At READ COMMITTED each statement sees
   everything committed before it started, so the usage read in step 3
   includes every claim that held these locks before us: two writers racing
   for the last unit cannot both see it free (no overcommit);
4. replace the consumers' allocations and bump (or create, or delete) the
   consumers, then commit.

On PostgreSQL the four steps run as ONE server-side call, placement_claim()
(``claim_function``), in its own autocommit transaction: a claim is one
round trip to the database. The same steps in Python
(``replace_in_transaction``) serve SQLite, the reshaper (which needs them
inside its own transaction) and a PostgreSQL database not yet migrated.

If a provider's generation moved while we waited for its lock, another writer
committed on it during this request; a capacity failure then is reported as
``ConcurrentUpdate`` (the caller lost a race and may re-read and retry)
rather than as plain ``CapacityExceeded`` (it was already full).
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from placement.db import api as db_api
from placement.objects import claim_function
from placement.objects import consumer as consumer_obj
from placement.objects import resource_class as rc_obj


class _Unchecked:
    def __repr__(self):
        return 'UNCHECKED'


# Before microversion 1.28 a write does not say which consumer generation it
# expects; the generation is then not compared (but still bumped).
UNCHECKED = _Unchecked()

# Server-side retries of a whole write transaction after a collision the
# client cannot see (two requests creating the same consumer at once, or a
# PostgreSQL deadlock between multi-provider claims).
TRANSACTION_RETRIES = 5


class AllocationError(Exception):
    """Base of the errors an allocation write reports to its caller."""


class ProviderNotFound(AllocationError):
    def __init__(self, uuid: str):
        self.uuid = uuid
        super().__init__(
            f"Allocation for resource provider '{uuid}' that does not exist.")


class ResourceClassNotFound(AllocationError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f'No such resource class {name}.')


class InvalidInventory(AllocationError):
    """The provider has no inventory of the class asked for."""

    def __init__(self, resource_class: str, provider_uuid: str):
        super().__init__(f"Inventory for '{resource_class}' on resource "
                         f"provider '{provider_uuid}' invalid.")


class CapacityExceeded(InvalidInventory):
    def __init__(self, resource_class: str, provider_uuid: str):
        AllocationError.__init__(
            self, f"Unable to create allocation for '{resource_class}' on "
                  f"resource provider '{provider_uuid}'. The requested amount "
                  f"would exceed the capacity.")
        self.resource_class = resource_class
        self.provider_uuid = provider_uuid


class ConstraintsViolated(InvalidInventory):
    def __init__(self, resource_class: str, provider_uuid: str):
        AllocationError.__init__(
            self, f"Unable to create allocation for '{resource_class}' on "
                  f"resource provider '{provider_uuid}'. The requested amount "
                  f"would violate inventory constraints.")


class ConsumerGenerationConflict(AllocationError):
    def __init__(self, expected, got):
        expected = 'null' if expected is None else expected
        super().__init__(
            f'consumer generation conflict - expected {expected} but got {got}')


class ConcurrentUpdate(AllocationError):
    """Another writer changed the providers while this write ran."""


class NoAllocations(AllocationError):
    def __init__(self, consumer_uuid: str):
        super().__init__(f"No allocations for consumer '{consumer_uuid}'")


@dataclass
class ConsumerWrite:
    """The complete new set of allocations of one consumer.

    ``allocations`` maps provider uuid to {resource class: amount}; an empty
    mapping removes all of the consumer's allocations.
    ``consumer_type`` None leaves the consumer's type as it is.
    """
    consumer_uuid: str
    project_id: str
    user_id: str
    allocations: dict[str, dict[str, int]] = field(default_factory=dict)
    generation: int | None | _Unchecked = UNCHECKED
    consumer_type: str | None = None


@dataclass
class Resolved:
    """Internal ids of the projects, users and consumer types of a write."""
    project_ids: dict[str, int]
    user_ids: dict[str, int]
    type_ids: dict[str, int]


def replace_allocations(engine: Engine, writes: list[ConsumerWrite]) -> None:
    """Atomically replace the allocations of every consumer in ``writes``.

    Raises a subclass of AllocationError when the write is refused; nothing
    is changed then.
    """
    resolved = resolve_names(engine, writes)
    in_database = claim_function.available(engine)
    for attempt in range(TRANSACTION_RETRIES):
        try:
            if in_database:
                _replace_in_database(engine, writes, resolved)
            else:
                with engine.begin() as conn:
                    replace_in_transaction(conn, writes, resolved)
            return
        except (sa_exc.IntegrityError, sa_exc.OperationalError) as exc:
            if attempt + 1 == TRANSACTION_RETRIES or not _is_retryable(exc):
                raise
    raise AssertionError('unreachable')


# ------------------------------------------- PostgreSQL: one round trip

def _replace_in_database(engine: Engine, writes: list[ConsumerWrite],
                         resolved: Resolved) -> None:
    """The same checks and writes as ``replace_in_transaction``, as one
    server-side call in its own transaction: one round trip to the database."""
    with engine.connect() as conn:
        rc_names = {rc for w in writes for res in w.allocations.values() for rc in res}
        rc_ids = rc_obj.ids_by_name(conn, rc_names) if rc_names else {}
        allocs = [(w.consumer_uuid, rp, rc, amount)
                  for w in writes for rp, res in w.allocations.items()
                  for rc, amount in res.items()]
        params = (
            db_api.utcnow(),
            [w.consumer_uuid for w in writes],
            [w.generation is not UNCHECKED for w in writes],
            [None if w.generation is UNCHECKED else w.generation for w in writes],
            [resolved.project_ids[w.project_id] for w in writes],
            [resolved.user_ids[w.user_id] for w in writes],
            [resolved.type_ids.get(w.consumer_type) if w.consumer_type else None
             for w in writes],
            [a[0] for a in allocs],
            [a[1] for a in allocs],
            [rc_ids.get(a[2], -1) for a in allocs],
            [a[2] for a in allocs],
            [a[3] for a in allocs],
        )
        try:
            claim_function.claim(conn, params)
        except claim_function.Refused as refused:
            raise _refusal(refused.message) from None


def _refusal(message: str) -> AllocationError:
    kind, *args = message.split('|')
    if kind == 'generation':
        expected = None if args[0] == 'null' else int(args[0])
        return ConsumerGenerationConflict(expected, args[1])
    if kind == 'provider':
        return ProviderNotFound(args[0])
    if kind == 'resource_class':
        return ResourceClassNotFound(args[0])
    if kind == 'inventory':
        return InvalidInventory(args[0], args[1])
    if kind == 'constraints':
        return ConstraintsViolated(args[0], args[1])
    if kind == 'capacity':
        exc = CapacityExceeded(args[0], args[1])
        if args[2] == '1':
            return ConcurrentUpdate(
                f'{exc} Another writer changed the provider while this '
                f'claim waited; re-read and retry.')
        return exc
    raise AllocationError(message)


def _is_retryable(exc: sa_exc.DBAPIError) -> bool:
    if isinstance(exc, sa_exc.IntegrityError):
        # Two requests created the same consumer at once; the loser re-reads
        # it on retry and is then judged against its generation.
        return True
    code = getattr(exc.orig, 'pgcode', None)
    return code in ('40P01', '40001')   # deadlock, serialization failure


def resolve_names(engine: Engine, writes: list[ConsumerWrite]) -> Resolved:
    # Separate, committed transactions, as in the reference: these rows are
    # shared by many consumers and are never removed, so creating one that
    # the claim then does not use is harmless.
    resolved = Resolved({}, {}, {})
    for w in writes:
        resolved.project_ids[w.project_id] = consumer_obj.projects.id_of(
            engine, w.project_id, create=True)
        resolved.user_ids[w.user_id] = consumer_obj.users.id_of(
            engine, w.user_id, create=True)
        if w.consumer_type is not None:
            resolved.type_ids[w.consumer_type] = consumer_obj.consumer_types.id_of(
                engine, w.consumer_type, create=True)
    return resolved


_PROVIDERS = sa.text(
    'SELECT id, uuid, generation FROM resource_providers WHERE uuid IN :uuids'
).bindparams(sa.bindparam('uuids', expanding=True))
_BUMP_BY_ID = sa.text(
    'UPDATE resource_providers SET generation = generation + 1 WHERE id IN :ids'
).bindparams(sa.bindparam('ids', expanding=True))
# PostgreSQL: bump and lock in one statement. ``s`` is read from the
# statement's snapshot, the updated row is the latest committed version
# (re-read after waiting for a lock), so seen + 1 != generation means another
# writer committed on the provider while we waited.
_BUMP_AND_LOCK_PG = sa.text(
    'UPDATE resource_providers SET generation = resource_providers.generation + 1 '
    'FROM (SELECT id AS sid, generation AS seen FROM resource_providers '
    '      WHERE uuid IN :uuids) AS s '
    'WHERE resource_providers.id = s.sid '
    'RETURNING resource_providers.id, resource_providers.uuid, s.seen, '
    'resource_providers.generation'
).bindparams(sa.bindparam('uuids', expanding=True))
_PROVIDERS_OF_CONSUMERS = sa.text(
    'SELECT DISTINCT rp.uuid FROM allocations a '
    'JOIN resource_providers rp ON rp.id = a.resource_provider_id '
    'WHERE a.consumer_id IN :uuids'
).bindparams(sa.bindparam('uuids', expanding=True))
_CAPACITY = sa.text(
    'SELECT i.resource_provider_id, i.resource_class_id, i.total, i.reserved, '
    'i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, '
    '(SELECT COALESCE(SUM(a.used), 0) FROM allocations a '
    '  WHERE a.resource_provider_id = i.resource_provider_id '
    '  AND a.resource_class_id = i.resource_class_id) AS used, '
    '(SELECT COALESCE(SUM(a.used), 0) FROM allocations a '
    '  WHERE a.resource_provider_id = i.resource_provider_id '
    '  AND a.resource_class_id = i.resource_class_id '
    '  AND a.consumer_id IN :consumers) AS replaced '
    'FROM inventories i '
    'WHERE i.resource_provider_id IN :rps AND i.resource_class_id IN :rcs'
).bindparams(sa.bindparam('consumers', expanding=True),
             sa.bindparam('rps', expanding=True),
             sa.bindparam('rcs', expanding=True))


def replace_in_transaction(conn: Connection, writes: list[ConsumerWrite],
                           resolved: Resolved) -> None:
    """The claim's steps on ``conn``, inside the caller's transaction."""
    consumer_uuids = [w.consumer_uuid for w in writes]
    existing = consumer_obj.lock_consumers(conn, consumer_uuids)
    for w in writes:
        if w.generation is UNCHECKED:
            continue
        current = existing.get(w.consumer_uuid)
        current_gen = current.generation if current else None
        if current_gen != w.generation:
            raise ConsumerGenerationConflict(current_gen, w.generation)

    requested_rps = list(dict.fromkeys(
        rp for w in writes for rp in w.allocations))
    # Removing a consumer's allocations changes its old providers too.
    emptied = [w.consumer_uuid for w in writes if not w.allocations]
    touched_rps = list(requested_rps)
    if emptied:
        old = conn.execute(_PROVIDERS_OF_CONSUMERS, {'uuids': emptied}).scalars()
        touched_rps.extend(rp for rp in old if rp not in requested_rps)

    provider_ids, raced = _bump_providers(conn, touched_rps)
    for rp in requested_rps:
        if rp not in provider_ids:
            raise ProviderNotFound(rp)

    rc_names = {rc for w in writes for res in w.allocations.values() for rc in res}
    rc_ids = rc_obj.ids_by_name(conn, rc_names) if rc_names else {}
    for w in writes:
        for res in w.allocations.values():
            for rc in res:
                if rc not in rc_ids:
                    raise ResourceClassNotFound(rc)

    rows = []
    if requested_rps:
        try:
            _check_capacity(conn, writes, provider_ids, rc_ids, consumer_uuids)
        except CapacityExceeded as exc:
            if raced:
                raise ConcurrentUpdate(
                    f'{exc} Another writer changed the provider while this '
                    f'claim waited; re-read and retry.') from exc
            raise
        rows = [{'rp': provider_ids[rp], 'consumer': w.consumer_uuid,
                 'rc': rc_ids[rc], 'used': amount}
                for w in writes for rp, res in w.allocations.items()
                for rc, amount in res.items()]

    _write(conn, _write_steps(writes, existing, resolved, consumer_uuids, rows))


def _bump_providers(conn: Connection, uuids: list[str]) -> tuple[dict[str, int], bool]:
    """Bump and lock the providers; return {uuid: id} and whether we raced."""
    if not uuids:
        return {}, False
    if conn.dialect.name == 'postgresql':
        rows = conn.execute(_BUMP_AND_LOCK_PG, {'uuids': uuids}).all()
        raced = any(row.generation != row.seen + 1 for row in rows)
        return {row.uuid: row.id for row in rows}, raced
    rows = conn.execute(_PROVIDERS, {'uuids': uuids}).all()
    if rows:
        conn.execute(_BUMP_BY_ID, {'ids': [row.id for row in rows]})
    return {row.uuid: row.id for row in rows}, False


def _check_capacity(conn, writes, provider_ids, rc_ids, consumer_uuids) -> None:
    inventory = {
        (row.resource_provider_id, row.resource_class_id): row
        for row in conn.execute(_CAPACITY, {
            'consumers': consumer_uuids,
            'rps': list(provider_ids.values()),
            'rcs': list(rc_ids.values())})
    }
    wanted = collections.defaultdict(int)
    for w in writes:
        for rp_uuid, resources in w.allocations.items():
            rp_id = provider_ids[rp_uuid]
            for rc, amount in resources.items():
                key = (rp_id, rc_ids[rc])
                inv = inventory.get(key)
                if inv is None:
                    raise InvalidInventory(rc, rp_uuid)
                if (amount < inv.min_unit or amount > inv.max_unit
                        or amount % inv.step_size):
                    raise ConstraintsViolated(rc, rp_uuid)
                wanted[key] += amount
                capacity = (inv.total - inv.reserved) * inv.allocation_ratio
                others = inv.used - inv.replaced
                if others + wanted[key] > capacity:
                    # Allowed when it does not make an existing overcommit
                    # (say, after an inventory shrink) any worse.
                    if inv.used and others + wanted[key] <= inv.used:
                        continue
                    raise CapacityExceeded(rc, rp_uuid)


class _Steps:
    """Data-changing statements with uniquely named parameters."""

    def __init__(self):
        self.sql: list[str] = []
        self.params: dict = {'now': db_api.utcnow()}

    def bind(self, value) -> str:
        name = f'v{len(self.params)}'
        self.params[name] = value
        return f':{name}'

    def binds(self, values) -> str:
        return ', '.join(self.bind(v) for v in values)


def _write_steps(writes, existing, resolved: Resolved, consumer_uuids,
                 rows) -> _Steps:
    steps = _Steps()
    steps.sql.append('DELETE FROM allocations WHERE consumer_id IN '
                     f'({steps.binds(consumer_uuids)})')
    if rows:
        steps.sql.append(
            'INSERT INTO allocations (resource_provider_id, consumer_id, '
            'resource_class_id, used, created_at, updated_at) VALUES '
            + ', '.join(f"({steps.binds((r['rp'], r['consumer'], r['rc'], r['used']))}, "
                        ':now, :now)' for r in rows))
    new, gone = [], []
    for w in writes:
        current = existing.get(w.consumer_uuid)
        if not w.allocations:
            if current is not None:
                gone.append(current.id)
            continue
        ctype = resolved.type_ids.get(w.consumer_type) if w.consumer_type else None
        owner = (resolved.project_ids[w.project_id], resolved.user_ids[w.user_id])
        if current is None:
            new.append(f'({steps.binds((w.consumer_uuid, *owner))}, 1, '
                       f'{steps.bind(ctype)}, :now, :now)')
        else:
            steps.sql.append(
                'UPDATE consumers SET generation = generation + 1, '
                f'project_id = {steps.bind(owner[0])}, user_id = {steps.bind(owner[1])}, '
                f'consumer_type_id = COALESCE({steps.bind(ctype)}, consumer_type_id), '
                f'updated_at = :now WHERE id = {steps.bind(current.id)}')
    if new:
        steps.sql.append(
            'INSERT INTO consumers (uuid, project_id, user_id, generation, '
            'consumer_type_id, created_at, updated_at) VALUES ' + ', '.join(new))
    if gone:
        steps.sql.append(f'DELETE FROM consumers WHERE id IN ({steps.binds(gone)})')
    return steps


def _write(conn: Connection, steps: _Steps) -> None:
    if conn.dialect.name == 'postgresql':
        # One round trip: data-modifying CTEs all run, on the same snapshot
        # (the DELETE cannot see the rows the INSERT adds).
        ctes = ', '.join(f'w{i} AS ({sql})' for i, sql in enumerate(steps.sql))
        conn.execute(sa.text(f'WITH {ctes} SELECT 1'), steps.params)
        return
    for sql in steps.sql:
        conn.execute(sa.text(sql), steps.params)


# ---------------------------------------------------------------- reading

@dataclass(frozen=True)
class ConsumerAllocationsView:
    """What GET /allocations/{consumer_uuid} shows."""
    consumer: consumer_obj.ConsumerView | None
    # provider uuid -> (provider generation, {resource class: used})
    by_provider: dict[str, tuple[int, dict[str, int]]]
    last_modified: object | None


# The consumer's allocations and the consumer itself (project, user, type) in one
# statement. Flat outer joins, each on an index (a nested join made SQLite join
# every consumer to its project and user first); the consumer is shown only with
# its project and user rows, as ``consumer.get_consumer`` shows it.
_BY_CONSUMER = sa.text(
    'SELECT rp.uuid, rp.generation, a.resource_class_id, a.used, '
    'a.created_at, a.updated_at, c.generation AS consumer_generation, '
    'p.external_id AS project, u.external_id AS user_ext, c.consumer_type_id '
    'FROM allocations a '
    'JOIN resource_providers rp ON rp.id = a.resource_provider_id '
    'LEFT JOIN consumers c ON c.uuid = a.consumer_id '
    'LEFT JOIN projects p ON p.id = c.project_id '
    'LEFT JOIN users u ON u.id = c.user_id '
    'WHERE a.consumer_id = :uuid'
).columns(sa.column('uuid'), sa.column('generation'), sa.column('resource_class_id'),
          sa.column('used'), sa.column('created_at', sa.DateTime),
          sa.column('updated_at', sa.DateTime), sa.column('consumer_generation'),
          sa.column('project'), sa.column('user_ext'), sa.column('consumer_type_id'))


def get_for_consumer(engine: Engine, consumer_uuid: str) -> ConsumerAllocationsView:
    """One statement, no transaction (``db_api.autocommit``): what a scheduler asks per
    group member, so its round trips count."""
    with engine.connect() as conn, db_api.autocommit(conn):
        rows = conn.execute(_BY_CONSUMER, {'uuid': consumer_uuid}).all()
        if not rows:
            return ConsumerAllocationsView(None, {}, None)
        names = rc_obj.names_by_id(
            conn, {r.resource_class_id for r in rows})
        first = rows[0]
        consumer = consumer_obj.view_of(conn, consumer_uuid, first.consumer_generation,
                                        first.project, first.user_ext,
                                        first.consumer_type_id)
    by_provider: dict[str, tuple[int, dict[str, int]]] = {}
    for r in rows:
        entry = by_provider.setdefault(r.uuid, (r.generation, {}))
        entry[1][names[r.resource_class_id]] = r.used
    return ConsumerAllocationsView(consumer, by_provider, _latest(rows))


@dataclass(frozen=True)
class ProviderAllocations:
    """What GET /resource_providers/{uuid}/allocations shows."""
    provider_generation: int
    # consumer uuid -> (consumer generation, {resource class: used})
    by_consumer: dict[str, tuple[int | None, dict[str, int]]]
    last_modified: object | None


_PROVIDER = sa.text('SELECT id, generation FROM resource_providers WHERE uuid = :uuid')
_BY_PROVIDER = sa.text(
    'SELECT a.consumer_id, c.generation, a.resource_class_id, a.used, '
    'a.created_at, a.updated_at FROM allocations a '
    'LEFT JOIN consumers c ON c.uuid = a.consumer_id '
    'WHERE a.resource_provider_id = :rp'
).columns(sa.column('consumer_id'), sa.column('generation'),
          sa.column('resource_class_id'), sa.column('used'),
          sa.column('created_at', sa.DateTime), sa.column('updated_at', sa.DateTime))


def get_for_provider(engine: Engine, provider_uuid: str) -> ProviderAllocations | None:
    """None when the provider does not exist."""
    with engine.connect() as conn:
        provider = conn.execute(_PROVIDER, {'uuid': provider_uuid}).first()
        if provider is None:
            return None
        rows = conn.execute(_BY_PROVIDER, {'rp': provider.id}).all()
        names = rc_obj.names_by_id(
            conn, {r.resource_class_id for r in rows}) if rows else {}
    by_consumer: dict[str, tuple[int | None, dict[str, int]]] = {}
    for r in rows:
        entry = by_consumer.setdefault(r.consumer_id, (r.generation, {}))
        entry[1][names[r.resource_class_id]] = r.used
    return ProviderAllocations(provider.generation, by_consumer, _latest(rows))


def _latest(rows):
    stamps = [r.updated_at or r.created_at for r in rows]
    stamps = [s for s in stamps if s is not None]
    return max(stamps) if stamps else None


# --------------------------------------------------------------- deleting

_DELETE_RETURNING = sa.text(
    'DELETE FROM allocations WHERE consumer_id = :uuid RETURNING id')
_DELETE_CONSUMER = sa.text('DELETE FROM consumers WHERE uuid = :uuid')
# PostgreSQL: both deletes in one statement and one round trip; the consumer
# goes only if it had allocations (otherwise the request is a 404 and
# changes nothing).
_DELETE_BOTH_PG = (
    'WITH gone AS (DELETE FROM allocations WHERE consumer_id = %(uuid)s RETURNING 1), '
    'consumer AS (DELETE FROM consumers WHERE uuid = %(uuid)s '
    '             AND EXISTS (SELECT 1 FROM gone)) '
    'SELECT count(*) FROM gone')


def delete_for_consumer(engine: Engine, consumer_uuid: str) -> None:
    """Remove all of a consumer's allocations (and the consumer).

    Not generation-checked, as in the reference: callers that need safety
    against a concurrent writer PUT an empty allocation set at 1.28+.
    """
    if engine.dialect.name == 'postgresql':
        with engine.connect() as conn:
            [(deleted,)] = db_api.execute_in_autocommit(conn, _DELETE_BOTH_PG,
                                                        {'uuid': consumer_uuid})
        if not deleted:
            raise NoAllocations(consumer_uuid)
        return
    with engine.begin() as conn:
        deleted = conn.execute(_DELETE_RETURNING, {'uuid': consumer_uuid}).all()
        if not deleted:
            raise NoAllocations(consumer_uuid)
        conn.execute(_DELETE_CONSUMER, {'uuid': consumer_uuid})
