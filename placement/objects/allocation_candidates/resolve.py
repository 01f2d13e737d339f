"""A request resolved against the database: resource class, trait and aggregate ids, trees asked for.

Every search path reads the request through a ``ResolvedRequest``; names that do not exist
are refused here (``UnknownResourceClass``, ``UnknownTraits``).
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement.objects import resource_class as rc_obj
from placement.objects.allocation_candidates.request import (
    SHARING_TRAIT,
    RequestGroup,
    RequestWide,
    UnknownResourceClass,
    UnknownTraits,
)
from placement.objects.allocation_candidates.sql import in_list

# ------------------------------------------------------------------ queries

# By the sharing trait's id, not its name: a join on the name let the
# planner scan every provider's traits. "Any child?" as min() over the
# parent index: an EXISTS there, with stale statistics guessing many
# children, scanned every provider to find none (3 ms at 5,000 providers,
# on every request); min() always reads the index's first entry.
LAYOUT = sa.text(
    'SELECT '
    '(SELECT min(parent_provider_id) FROM resource_providers) IS NOT NULL '
    'AS nested, '
    'EXISTS (SELECT 1 FROM resource_provider_traits WHERE trait_id = :sharing) '
    'AS sharing')
TRAIT_IDS = sa.text('SELECT id, name FROM traits WHERE name IN :names'
                     ).bindparams(sa.bindparam('names', expanding=True))
AGG_IDS = sa.text('SELECT id, uuid FROM placement_aggregates WHERE uuid IN :uuids'
                   ).bindparams(sa.bindparam('uuids', expanding=True))
PROVIDER_BY_UUID = sa.text(
    'SELECT id, root_provider_id FROM resource_providers WHERE uuid = :uuid')



class ResolvedRequest:
    """One request's names resolved to ids, on the connection every path reads with."""

    has_trees: bool = False
    has_sharing: bool = False

    def __init__(self, conn: Connection, groups: dict[str, RequestGroup],
                 wide: RequestWide):
        self.conn = conn
        self.groups = groups
        self.wide = wide
        self.rc_ids: dict[str, int] = {}
        self.rc_names: dict[int, str] = {}
        self.trait_ids: dict[str, int] = {}
        self.agg_ids: dict[str, int] = {}

    # -------------------------------------------------------------- set up
    def resolve_names(self) -> None:
        rc_names = {rc for g in self.groups.values() for rc in g.resources}
        if rc_names:
            self.rc_ids = rc_obj.ids_by_name(self.conn, rc_names)
            for name in sorted(rc_names):
                if name not in self.rc_ids:
                    raise UnknownResourceClass(name)
            self.rc_names = {v: k for k, v in self.rc_ids.items()}
        trait_names = set(self.wide.root_required) | set(self.wide.root_forbidden)
        for g in self.groups.values():
            trait_names |= g.forbidden_traits
            for any_of in g.required_traits:
                trait_names |= any_of
        trait_names.add(SHARING_TRAIT)
        rows = self.conn.execute(TRAIT_IDS, {'names': list(trait_names)}).all()
        self.trait_ids = {name: id_ for id_, name in rows}
        missing = trait_names - set(self.trait_ids) - {SHARING_TRAIT}
        if missing:
            raise UnknownTraits(missing)
        agg_uuids = set()
        for g in self.groups.values():
            agg_uuids |= g.forbidden_aggs
            for any_of in g.member_of:
                agg_uuids |= any_of
        if agg_uuids:
            rows = self.conn.execute(AGG_IDS, {'uuids': list(agg_uuids)}).all()
            self.agg_ids = {uuid: id_ for id_, uuid in rows}

    def tree_root_of(self, uuid: str | None):
        """Root id of the provider ``uuid``; False when it does not exist."""
        if uuid is None:
            return None
        row = self.conn.execute(PROVIDER_BY_UUID, {'uuid': uuid}).first()
        return row.root_provider_id if row else False

    def anchor_roots(self) -> set[int] | None:
        """Roots allowed by root_required; None when it is not given."""
        required = self.wide.root_required
        forbidden = self.wide.root_forbidden
        if not (required or forbidden):
            return None
        sql = 'SELECT rp.id FROM resource_providers rp WHERE rp.parent_provider_id IS NULL'
        for name in required:
            sql += (' AND EXISTS (SELECT 1 FROM resource_provider_traits t WHERE '
                    f't.resource_provider_id = rp.id AND t.trait_id = {self.trait_ids[name]})')
        if forbidden:
            ids = in_list(self.trait_ids[n] for n in forbidden)
            sql += (' AND NOT EXISTS (SELECT 1 FROM resource_provider_traits t WHERE '
                    f't.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
        return set(self.conn.execute(sa.text(sql)).scalars())
