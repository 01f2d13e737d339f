"""PostgreSQL: placement_replace_allocations(), the claim in one round trip.

The allocation writer (placement/objects/allocation.py) does on PostgreSQL
in one server-side call what it does statement by statement elsewhere:
lock the consumers and check their generations, bump (and so lock) the
providers, THEN check inventory and capacity, then write. Inside a volatile
PL/pgSQL function at READ COMMITTED every statement takes a new snapshot,
so the capacity check sees every claim committed by writers that held the
provider locks before us, exactly as the multi-statement transaction does.

Refusals are raised as SQLSTATE P0001 with a message ``kind|arg|arg...``
that the writer turns into its exceptions:

    generation|<expected or null>|<got>     consumer generation mismatch
    provider|<uuid>                         no such provider
    resource_class|<name>                   no such resource class
    inventory|<class name>|<provider uuid>  no inventory of that class
    constraints|<class name>|<provider>     min_unit / max_unit / step_size
    capacity|<class name>|<provider>|<raced 0/1>

SQLite has no such function; the writer's Python path runs there.

Revision ID: 7c2d9e41a0b3
Revises: 5a1f0c3e7b21
Create Date: 2026-11-22
"""
from alembic import op

revision = '7c2d9e41a0b3'
down_revision = '5a1f0c3e7b21'
branch_labels = None
depends_on = None

# The request (built by placement.objects.allocation):
# {"now": "2026-11-22T08:00:00",
#  "consumers": [{"uuid", "check": bool, "generation": int|null,
#                 "project": id, "user": id, "type": id|null}],
#  "allocs": [{"consumer", "rp", "rc": id or -1 if unknown, "rc_name", "amount"}]}
FUNCTION = r"""
CREATE OR REPLACE FUNCTION placement_replace_allocations(req jsonb)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
    c jsonb;
    a jsonb;
    k record;
    inv record;
    found_id integer;
    found_gen integer;
    rp integer;
    used_all bigint;
    used_mine bigint;
    raced boolean;
    now_ts timestamp := (req->>'now')::timestamp;
    consumer_uuids text[] := '{}';
    locked text[] := '{}';
    emptied text[] := '{}';
    -- one entry per requested allocation, in request order
    a_rp integer[] := '{}';
    a_rp_uuid text[] := '{}';
    a_rc integer[] := '{}';
    a_rc_name text[] := '{}';
    a_amount integer[] := '{}';
    a_consumer text[] := '{}';
    old_rps integer[] := '{}';
BEGIN
    -- Everything below is index lookups on a handful of rows: loops, not
    -- joins, so that no plan ever scans a table.
    FOR c IN SELECT value FROM jsonb_array_elements(req->'consumers') LOOP
        consumer_uuids := consumer_uuids || (c->>'uuid');
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(req->'allocs') x
                        WHERE x->>'consumer' = c->>'uuid') THEN
            emptied := emptied || (c->>'uuid');
        END IF;
    END LOOP;

    -- 1. Consumers: lock, check generations.
    FOR c IN SELECT value FROM jsonb_array_elements(req->'consumers')
             ORDER BY value->>'uuid'
    LOOP
        SELECT id, generation INTO found_id, found_gen
          FROM consumers WHERE uuid = c->>'uuid' FOR UPDATE;
        IF NOT FOUND THEN
            found_id := NULL;
            found_gen := NULL;
        ELSE
            locked := locked || (c->>'uuid');
        END IF;
        IF (c->>'check')::boolean AND (
               (found_id IS NULL AND jsonb_typeof(c->'generation') <> 'null')
            OR (found_id IS NOT NULL AND (jsonb_typeof(c->'generation') = 'null'
                                          OR (c->>'generation')::integer <> found_gen)))
        THEN
            RAISE EXCEPTION 'generation|%|%', coalesce(found_gen::text, 'null'),
                coalesce(c->>'generation', 'null');
        END IF;
    END LOOP;

    -- 2. Providers must exist, classes must be known; bump (lock) providers.
    FOR a IN SELECT value FROM jsonb_array_elements(req->'allocs') LOOP
        SELECT id INTO rp FROM resource_providers WHERE uuid = a->>'rp';
        IF NOT FOUND THEN
            RAISE EXCEPTION 'provider|%', a->>'rp';
        END IF;
        a_rp := a_rp || rp;
        a_rp_uuid := a_rp_uuid || (a->>'rp');
        a_rc := a_rc || (a->>'rc')::integer;
        a_rc_name := a_rc_name || (a->>'rc_name');
        a_amount := a_amount || (a->>'amount')::integer;
        a_consumer := a_consumer || (a->>'consumer');
    END LOOP;
    FOR i IN 1..coalesce(array_length(a_rc, 1), 0) LOOP
        IF a_rc[i] < 0 THEN
            RAISE EXCEPTION 'resource_class|%', a_rc_name[i];
        END IF;
    END LOOP;
    IF array_length(emptied, 1) > 0 THEN
        SELECT coalesce(array_agg(DISTINCT resource_provider_id), '{}') INTO old_rps
          FROM allocations WHERE consumer_id = ANY(emptied);
    END IF;
    WITH seen AS (
        SELECT id, generation FROM resource_providers WHERE id = ANY(a_rp || old_rps)
    ), bumped AS (
        UPDATE resource_providers r SET generation = r.generation + 1
          FROM seen WHERE r.id = seen.id
        RETURNING r.generation AS now_gen, seen.generation AS seen_gen
    )
    SELECT coalesce(bool_or(now_gen <> seen_gen + 1), false) INTO raced FROM bumped;

    -- 3. Inventory, constraints, capacity: read only now, under the locks.
    FOR i IN 1..coalesce(array_length(a_rp, 1), 0) LOOP
        SELECT min_unit, max_unit, step_size INTO inv FROM inventories
         WHERE resource_provider_id = a_rp[i] AND resource_class_id = a_rc[i];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'inventory|%|%', a_rc_name[i], a_rp_uuid[i];
        END IF;
        IF a_amount[i] < inv.min_unit OR a_amount[i] > inv.max_unit
           OR a_amount[i] % inv.step_size <> 0 THEN
            RAISE EXCEPTION 'constraints|%|%', a_rc_name[i], a_rp_uuid[i];
        END IF;
    END LOOP;
    FOR k IN SELECT t.rp, t.rc, sum(t.amount) AS amount, min(t.n) AS first
               FROM unnest(a_rp, a_rc, a_amount) WITH ORDINALITY AS t(rp, rc, amount, n)
              GROUP BY t.rp, t.rc ORDER BY min(t.n)
    LOOP
        SELECT total, reserved, allocation_ratio INTO inv FROM inventories
         WHERE resource_provider_id = k.rp AND resource_class_id = k.rc;
        SELECT coalesce(sum(used), 0),
               coalesce(sum(used) FILTER (WHERE consumer_id = ANY(consumer_uuids)), 0)
          INTO used_all, used_mine
          FROM allocations WHERE resource_provider_id = k.rp AND resource_class_id = k.rc;
        IF used_all - used_mine + k.amount > (inv.total - inv.reserved) * inv.allocation_ratio
           -- allowed when it does not make an existing overcommit any worse
           AND NOT (used_all > 0 AND used_all - used_mine + k.amount <= used_all)
        THEN
            RAISE EXCEPTION 'capacity|%|%|%', a_rc_name[k.first], a_rp_uuid[k.first],
                CASE WHEN raced THEN 1 ELSE 0 END;
        END IF;
    END LOOP;

    -- 4. Write.
    DELETE FROM allocations WHERE consumer_id = ANY(consumer_uuids);
    INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id,
                             used, created_at, updated_at)
    SELECT t.rp, t.consumer, t.rc, t.amount, now_ts, now_ts
      FROM unnest(a_rp, a_consumer, a_rc, a_amount) AS t(rp, consumer, rc, amount);
    FOR c IN SELECT value FROM jsonb_array_elements(req->'consumers') LOOP
        IF c->>'uuid' = ANY(emptied) THEN
            DELETE FROM consumers WHERE uuid = c->>'uuid';
        ELSIF c->>'uuid' = ANY(locked) THEN
            UPDATE consumers SET generation = generation + 1,
                   project_id = (c->>'project')::integer,
                   user_id = (c->>'user')::integer,
                   consumer_type_id = coalesce((c->>'type')::integer, consumer_type_id),
                   updated_at = now_ts
             WHERE uuid = c->>'uuid';
        ELSE
            -- A consumer created meanwhile by another request makes this
            -- fail (unique uuid); the caller retries and is then judged by
            -- its generation.
            INSERT INTO consumers (uuid, project_id, user_id, generation,
                                   consumer_type_id, created_at, updated_at)
            VALUES (c->>'uuid', (c->>'project')::integer, (c->>'user')::integer, 1,
                    (c->>'type')::integer, now_ts, now_ts);
        END IF;
    END LOOP;
END
$fn$;
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP FUNCTION IF EXISTS placement_replace_allocations(jsonb)')
