"""Allocation candidates: which providers could satisfy a request, and how.

``find_candidates`` answers GET /allocation_candidates. Two paths give the
same answers as the reference implementation:

* The flat path. No provider has a parent, no provider shares its inventory
  (MISC_SHARES_VIA_AGGREGATE) and there is one request group: each candidate
  is then one provider that satisfies everything, so ONE set-based query
  finds them, stops at ``limit``, and returns their inventories and usage
  with them. This is the common case and the fast one.

* The general path (trees, sharing providers, several request groups,
  same_subtree). The rows that matter (inventories of the requested classes
  with usage, the trees and their traits and aggregates, sharing anchors)
  are read in a few queries and the combinatorics are done in memory,
  following the reference's semantics step by step:
  - the unsuffixed group may spread its resources over the providers of one
    tree plus sharing providers anchored to that tree; its required traits
    must be covered by the union of the traits of the providers used, and no
    provider used may have a forbidden trait; member_of matches the provider
    or its root;
  - a suffixed group is satisfied by a single provider, which must itself
    have the traits and aggregates asked for;
  - results of all groups are combined per anchor tree, then filtered by
    group_policy=isolate, same_subtree, and capacity of the summed amounts.

All reads happen on one connection at READ COMMITTED: a claim committed
between two of its statements may show in one and not the other. That is
harmless, candidates are advice: the claim re-checks everything.
"""
from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from placement.db import api as db_api
from placement.objects import resource_class as rc_obj

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


class CandidateQueryError(Exception):
    """The request names something that does not exist (400)."""


class UnknownResourceClass(CandidateQueryError):
    def __init__(self, name: str):
        super().__init__(f'No such resource class {name}.')


class UnknownTraits(CandidateQueryError):
    def __init__(self, names):
        super().__init__(f"No such trait(s): {', '.join(sorted(names))}.")


@dataclass
class RequestGroup:
    """One request group: the unsuffixed one ('') or a granular one."""
    suffix: str = ''
    resources: dict[str, int] = field(default_factory=dict)
    required_traits: list[set[str]] = field(default_factory=list)  # AND of ORs
    forbidden_traits: set[str] = field(default_factory=set)
    member_of: list[set[str]] = field(default_factory=list)        # AND of ORs
    forbidden_aggs: set[str] = field(default_factory=set)
    in_tree: str | None = None

    @property
    def use_same_provider(self) -> bool:
        return bool(self.suffix)


@dataclass
class RequestWide:
    """The parameters that apply to the whole request."""
    limit: int | None = None
    group_policy: str | None = None
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    same_subtrees: list[set[str]] = field(default_factory=list)
    nested_aware: bool = True


@dataclass
class CandidateSummary:
    uuid: str
    parent_uuid: str | None
    root_uuid: str
    # resource class -> {"capacity": n, "used": n} (the API's shape: a
    # thousand summaries per answer are rendered without copying)
    resources: dict[str, dict[str, int]]
    traits: list[str]


@dataclass
class AllocationRequest:
    # provider uuid -> {resource class: amount}
    allocations: dict[str, dict[str, int]]
    # group suffix -> provider uuids satisfying it
    mappings: dict[str, list[str]]


@dataclass
class CandidateResult:
    allocation_requests: list[AllocationRequest]
    summaries: list[CandidateSummary]


_EMPTY = CandidateResult([], [])


def find_candidates(engine: Engine, groups: dict[str, RequestGroup],
                    wide: RequestWide) -> CandidateResult:
    with engine.connect() as conn, db_api.autocommit(conn):
        return _Search(conn, groups, wide).run()


# ------------------------------------------------------------------ queries

# By the sharing trait's id, not its name: a join on the name let the
# planner scan every provider's traits. "Any child?" as min() over the
# parent index: an EXISTS there, with stale statistics guessing many
# children, scanned every provider to find none (3 ms at 5,000 providers,
# on every request); min() always reads the index's first entry.
_LAYOUT = sa.text(
    'SELECT '
    '(SELECT min(parent_provider_id) FROM resource_providers) IS NOT NULL '
    'AS nested, '
    'EXISTS (SELECT 1 FROM resource_provider_traits WHERE trait_id = :sharing) '
    'AS sharing')
_TRAIT_IDS = sa.text('SELECT id, name FROM traits WHERE name IN :names'
                     ).bindparams(sa.bindparam('names', expanding=True))
_AGG_IDS = sa.text('SELECT id, uuid FROM placement_aggregates WHERE uuid IN :uuids'
                   ).bindparams(sa.bindparam('uuids', expanding=True))
_PROVIDER_BY_UUID = sa.text(
    'SELECT id, root_provider_id FROM resource_providers WHERE uuid = :uuid')


def _in_list(ids) -> str:
    # Internal integer ids only: safe to inline, and it spares the driver
    # thousands of bound parameters on the hot path.
    return ','.join(str(int(i)) for i in ids) or 'NULL'


class _Search:
    """One request: resolves names, looks at the deployment's layout (any
    trees? any sharing providers?) and picks the flat or the tree path."""

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
    def _resolve_names(self) -> None:
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
        rows = self.conn.execute(_TRAIT_IDS, {'names': list(trait_names)}).all()
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
            rows = self.conn.execute(_AGG_IDS, {'uuids': list(agg_uuids)}).all()
            self.agg_ids = {uuid: id_ for id_, uuid in rows}

    def _tree_root_of(self, uuid: str | None):
        """Root id of the provider ``uuid``; False when it does not exist."""
        if uuid is None:
            return None
        row = self.conn.execute(_PROVIDER_BY_UUID, {'uuid': uuid}).first()
        return row.root_provider_id if row else False

    def _anchor_roots(self) -> set[int] | None:
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
            ids = _in_list(self.trait_ids[n] for n in forbidden)
            sql += (' AND NOT EXISTS (SELECT 1 FROM resource_provider_traits t WHERE '
                    f't.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
        return set(self.conn.execute(sa.text(sql)).scalars())

    def run(self) -> CandidateResult:
        self._resolve_names()
        # Aggregates that do not exist match nothing.
        for g in self.groups.values():
            for any_of in g.member_of:
                if not any(a in self.agg_ids for a in any_of):
                    return _EMPTY
        layout = self.conn.execute(
            _LAYOUT, {'sharing': self.trait_ids.get(SHARING_TRAIT, -1)}).one()
        self.has_trees = bool(layout.nested)
        self.has_sharing = bool(layout.sharing)
        anchors = self._anchor_roots()
        if anchors is not None and not anchors:
            return _EMPTY
        tree_roots = {}
        for suffix, g in self.groups.items():
            root = self._tree_root_of(g.in_tree)
            if root is False:
                return _EMPTY
            tree_roots[suffix] = root
        if (not self.has_trees and not self.has_sharing
                and len(self.groups) == 1 and not self.wide.same_subtrees):
            (suffix, group), = self.groups.items()
            return _FlatSearch(self, group, tree_roots[suffix], anchors).run()
        return _TreeSearch(self, tree_roots, anchors).run()


# ---------------------------------------------------------------- flat path

class _FlatSearch:
    """One group, no trees, no sharing: one provider per candidate, in SQL.

    On PostgreSQL the search itself is _ProviderScan's; the query built
    here serves SQLite."""

    def __init__(self, search: _Search, group: RequestGroup, tree_root,
                 anchors: set[int] | None):
        self.s = search
        self.g = group
        self.tree_root = tree_root
        self.anchors = anchors

    def _members(self) -> list[int] | None:
        """Ids of the providers member_of allows (every any-of set met),
        sorted; None when the group has no member_of.

        Read first, by the aggregate index, so that the candidate query
        starts from them: its cost then follows the aggregates' size, not
        the deployment's."""
        s, g = self.s, self.g
        if not g.member_of:
            return None
        found: set[int] | None = None
        for any_of in g.member_of:
            ids = _in_list(s.agg_ids[a] for a in any_of if a in s.agg_ids)
            rps = set(s.conn.execute(sa.text(
                'SELECT resource_provider_id FROM resource_provider_aggregates '
                f'WHERE aggregate_id IN ({ids})')).scalars())
            found = rps if found is None else found & rps
            if not found:
                break
        return sorted(found)

    def _has_resources(self) -> list[str]:
        """One EXISTS per requested class: the planner may join them in any
        order, which suits a search over every provider."""
        s, g = self.s, self.g
        return [f'EXISTS (SELECT 1 FROM inventories i WHERE '
                f'i.resource_provider_id = rp.id AND {self._fits(s.rc_ids[name], amount)})'
                for name, amount in g.resources.items()]

    def _has_resources_per_row(self) -> list[str]:
        """All requested classes in ONE correlated count, run once per
        provider the query starts from (the members of member_of)."""
        s, g = self.s, self.g
        if not g.resources:
            return []
        fits = ' OR '.join(f'({self._fits(s.rc_ids[name], amount)})'
                           for name, amount in g.resources.items())
        return [f'(SELECT count(*) FROM inventories i WHERE '
                f'i.resource_provider_id = rp.id AND ({fits})) = {len(g.resources)}']

    @staticmethod
    def _fits(rc: int, amount: int) -> str:
        return (f'i.resource_class_id = {rc} '
                f'AND i.min_unit <= {amount} AND i.max_unit >= {amount} '
                f'AND {amount} % i.step_size = 0 '
                'AND (SELECT COALESCE(SUM(a.used), 0) FROM allocations a '
                f'WHERE a.resource_provider_id = rp.id AND a.resource_class_id = {rc})'
                f' + {amount} <= (i.total - i.reserved) * i.allocation_ratio')

    def _where(self, from_members: bool) -> list[str]:
        s, g = self.s, self.g
        conds = self._has_resources_per_row() if from_members else self._has_resources()
        for any_of in g.required_traits:
            ids = _in_list(s.trait_ids[t] for t in any_of)
            if from_members:
                conds.append('EXISTS (SELECT 1 FROM resource_provider_traits t WHERE '
                             f't.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
                continue
            # IN (subquery), not EXISTS: the planner can start from the
            # (often few) providers that have the trait.
            conds.append('rp.id IN (SELECT t.resource_provider_id FROM '
                         f'resource_provider_traits t WHERE t.trait_id IN ({ids}))')
        if g.forbidden_traits:
            ids = _in_list(s.trait_ids[t] for t in g.forbidden_traits)
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_traits t '
                         f'WHERE t.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
        bad_aggs = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad_aggs:
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_aggregates m '
                         'WHERE m.resource_provider_id = rp.id AND '
                         f'm.aggregate_id IN ({_in_list(bad_aggs)}))')
        if self.tree_root is not None:
            conds.append(f'rp.id = {int(self.tree_root)}')
        if self.anchors is not None:
            conds.append(f'rp.id IN ({_in_list(self.anchors)})')
        return conds or ['1 = 1']

    def run(self) -> CandidateResult:
        s, g = self.s, self.g
        if s.conn.dialect.name == 'postgresql':
            return _ProviderScan(self).run()
        limit = f' LIMIT {int(s.wide.limit)}' if s.wide.limit else ''
        members = self._members()
        if members is not None and not members:
            return _EMPTY
        conds = self._where(from_members=members is not None)
        if members:
            conds.append(f'rp.id IN ({_in_list(members)})')
        sql = (
            f'WITH cand AS (SELECT rp.id, rp.uuid FROM resource_providers rp '
            f'WHERE {" AND ".join(conds)}{limit}) '
            'SELECT cand.id, cand.uuid, i.resource_class_id, i.total, i.reserved, '
            'i.allocation_ratio, '
            '(SELECT COALESCE(SUM(a.used), 0) FROM allocations a WHERE '
            'a.resource_provider_id = cand.id AND a.resource_class_id = '
            'i.resource_class_id) AS used '
            'FROM cand LEFT JOIN inventories i ON i.resource_provider_id = cand.id')
        rows = _fetch(s.conn, sql)
        if not rows:
            return _EMPTY
        names = rc_obj.names_by_id(
            s.conn, {r[2] for r in rows if r[2] is not None})
        by_id: dict[int, CandidateSummary] = {}
        order = []
        for rp_id, uuid, rc, total, reserved, ratio, used in rows:
            summary = by_id.get(rp_id)
            if summary is None:
                summary = by_id[rp_id] = CandidateSummary(uuid, None, uuid, {}, [])
                order.append(rp_id)
            if rc is not None:
                summary.resources[names[rc]] = {
                    'capacity': int((total - reserved) * ratio), 'used': int(used)}
        for rp_id, trait in _traits_of(s.conn, order):
            by_id[rp_id].traits.append(trait)
        requests = []
        summaries = []
        resources = g.resources
        suffix = g.suffix
        for rp_id in order:
            summary = by_id[rp_id]
            summaries.append(summary)
            requests.append(AllocationRequest(
                {summary.uuid: resources}, {suffix: [summary.uuid]}))
        return CandidateResult(requests, summaries)


class _ProviderScan:
    """The flat path on PostgreSQL: walk candidate providers one by one.

    For each provider of a driving set (the members of member_of, read by
    the aggregate index in the same statement, else the providers with the
    first required trait, else every provider) LATERAL
    subqueries read its inventories with their usage, and its traits, by
    index; the request's tests are applied to those and the walk stops at
    ``limit``. A provider costs a few index lookups whatever the statistics
    say, its usage is summed once (the test and the answer share it), and
    the answer comes back one row per candidate with arrays: no second
    query, little regrouping in Python. ("OFFSET 0" keeps each LATERAL
    subquery a per-provider lookup: flattened into a join, PostgreSQL may
    hash a whole table it believes small.)
    """

    def __init__(self, flat: _FlatSearch):
        self.flat = flat
        self.s = flat.s
        self.g = flat.g

    def _members(self) -> str:
        """SELECT id of the providers in every member_of any-of set, by
        the aggregate index, within the walk's own statement."""
        s = self.s
        return ' INTERSECT '.join(
            _providers_with('resource_provider_aggregates', 'aggregate_id',
                            [s.agg_ids[a] for a in any_of if a in s.agg_ids])
            for any_of in self.g.member_of)

    def _driver(self) -> str:
        """SELECT id, uuid of the providers to walk."""
        s, g, flat = self.s, self.g, self.flat
        lookup = ('CROSS JOIN LATERAL (SELECT id, uuid FROM resource_providers '
                  'WHERE id = m.id OFFSET 0) AS r')
        if g.member_of:
            source = f'SELECT r.id, r.uuid FROM ({self._members()}) AS m(id) {lookup}'
        elif g.required_traits:
            trait_set = _providers_with('resource_provider_traits', 'trait_id',
                                        [s.trait_ids[t] for t in g.required_traits[0]])
            source = f'SELECT r.id, r.uuid FROM ({trait_set}) AS m(id) {lookup}'
        else:
            source = 'SELECT r.id, r.uuid FROM resource_providers AS r'
        conds = []
        if flat.tree_root is not None:
            conds.append(f'r.id = {int(flat.tree_root)}')
        if flat.anchors is not None:
            conds.append(f'r.id IN ({_in_list(flat.anchors)})')
        return source + (f' WHERE {" AND ".join(conds)}' if conds else '')

    def _sql(self) -> str:
        s, g = self.s, self.g
        fits = ' OR '.join(
            f'(i.resource_class_id = {s.rc_ids[name]} AND i.min_unit <= {amount} '
            f'AND i.max_unit >= {amount} AND {amount} % i.step_size = 0 '
            f'AND COALESCE(u.used, 0) + {amount} <= (i.total - i.reserved) * i.allocation_ratio)'
            for name, amount in g.resources.items()) or 'false'
        conds = [f'inv.fitting = {len(g.resources)}']
        for any_of in g.required_traits:
            conds.append(f"tr.traits && '{{{_in_list(s.trait_ids[t] for t in any_of)}}}'"
                         '::integer[]')
        if g.forbidden_traits:
            ids = _in_list(s.trait_ids[t] for t in g.forbidden_traits)
            conds.append(f"NOT tr.traits && '{{{ids}}}'::integer[]")
        bad_aggs = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad_aggs:
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_aggregates x '
                         'WHERE x.resource_provider_id = d.id AND '
                         f'x.aggregate_id IN ({_in_list(bad_aggs)}))')
        limit = f' LIMIT {int(s.wide.limit)}' if s.wide.limit else ''
        return (
            'SELECT d.uuid, inv.rcs, inv.caps, inv.used, tr.traits '
            f'FROM ({self._driver()}) AS d(id, uuid) '
            'CROSS JOIN LATERAL ('
            '  SELECT array_agg(i.resource_class_id) AS rcs, '
            # trunc, as Python's int() on the other paths: towards zero
            '         array_agg(trunc((i.total - i.reserved) * i.allocation_ratio)::bigint) '
            '             AS caps, '
            '         array_agg(COALESCE(u.used, 0)) AS used, '
            f'        count(*) FILTER (WHERE {fits}) AS fitting '
            '  FROM inventories i LEFT JOIN ('
            '    SELECT a.resource_class_id, SUM(a.used) AS used FROM allocations a '
            '    WHERE a.resource_provider_id = d.id GROUP BY a.resource_class_id) AS u '
            '  ON u.resource_class_id = i.resource_class_id '
            '  WHERE i.resource_provider_id = d.id OFFSET 0) AS inv '
            'CROSS JOIN LATERAL ('
            '  SELECT ARRAY(SELECT t.trait_id FROM resource_provider_traits t '
            '               WHERE t.resource_provider_id = d.id ORDER BY t.trait_id) AS traits '
            '  OFFSET 0) AS tr '
            f'WHERE {" AND ".join(conds)}{limit}')

    def run(self) -> CandidateResult:
        s, g = self.s, self.g
        rows = _fetch(s.conn, _walk_settings(s.conn) + self._sql())
        if not rows:
            return _EMPTY
        names = rc_obj.names_by_id(s.conn, {rc for r in rows if r[1] for rc in r[1]})
        # Names by a second, tiny query: joined inside the per-provider
        # subquery, the planner hashed the whole traits table every time.
        trait_names = _trait_names(s.conn, {t for r in rows for t in r[4]})
        resources, suffix = g.resources, g.suffix
        requests, summaries = [], []
        for uuid, rcs, caps, used, traits in rows:
            summaries.append(CandidateSummary(
                uuid, None, uuid,
                {names[rc]: {'capacity': cap, 'used': int(u)}
                 for rc, cap, u in zip(rcs or (), caps or (), used or ())},
                [trait_names[t] for t in traits]))   # in trait id order, as the reference
            requests.append(AllocationRequest({uuid: resources}, {suffix: [uuid]}))
        return CandidateResult(requests, summaries)


def _providers_with(table: str, column: str, any_of: list[int]) -> str:
    """SELECT the providers that ``table`` links to any of ``any_of``
    (trait or aggregate ids), each once.

    Both link tables have (provider, other) as primary key, so the rows of
    one id are unique per provider already: DISTINCT, only added for
    several ids, would otherwise be a hash over them for nothing (10% of
    the required-trait walk at 5,000 providers).
    """
    distinct = 'DISTINCT ' if len(any_of) > 1 else ''
    return (f'SELECT {distinct}resource_provider_id FROM {table} '
            f'WHERE {column} IN ({_in_list(sorted(any_of))})')


def _walk_settings(conn: Connection) -> str:
    """Planner settings for one provider walk, as SET LOCAL statements sent
    in the same round trip (a multi-statement query is one transaction, so
    they end with it).

    Each provider's lookups return one to a few rows, and each provider is
    looked up once. With statistics that do not know it (never analyzed:
    they guess 150 inventories and 82 traits per provider) the planner
    wraps those lookups in bitmap scans and result caches (Memoize) whose
    set-up costs more than the lookup and whose caches never hit. Measured
    at 5,000 providers, execution in the server (EXPLAIN ANALYZE, timing
    off), medians of 11: required+forbidden 13.7 ms as planned, 12.2 without
    Memoize, 8.2 without bitmap scans either; plain 28.8 -> 20.3 ms;
    member_of 2.6 -> 1.5 ms.
    """
    version = conn.dialect.server_version_info or (0,)
    settings = 'SET LOCAL enable_bitmapscan = off; '
    if version >= (14,):   # Memoize came with PostgreSQL 14
        settings += 'SET LOCAL enable_memoize = off; '
    return settings


def _trait_names(conn: Connection, ids) -> dict[int, str]:
    """{id: name} of the traits ``ids``, by one small query."""
    if not ids:
        return {}
    return dict(_fetch(conn, f'SELECT id, name FROM traits WHERE id IN ({_in_list(ids)})'))


def _fetch(conn: Connection, sql: str) -> list[tuple]:
    """Rows of a parameterless statement as plain tuples, straight from the
    driver: thousands of rows per request, SQLAlchemy Row objects cost
    more than the query."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


def _traits_of(conn: Connection, provider_ids) -> list[tuple[int, str]]:
    if not provider_ids:
        return []
    return _fetch(conn,
                  'SELECT rpt.resource_provider_id, t.name FROM resource_provider_traits rpt '
                  'JOIN traits t ON t.id = rpt.trait_id '
                  f'WHERE rpt.resource_provider_id IN ({_in_list(provider_ids)}) '
                  # The reference lists a provider's traits in trait id order.
                  'ORDER BY rpt.resource_provider_id, t.id')


# ---------------------------------------------------------------- tree path

@dataclass(frozen=True)
class _Inv:
    rp: int
    root: int
    rc: int
    capacity: float
    used: int
    min_unit: int
    max_unit: int
    step_size: int

    def fits(self, amount: int) -> bool:
        return (self.min_unit <= amount <= self.max_unit
                and amount % self.step_size == 0
                and self.used + amount <= self.capacity)


@dataclass
class _AReq:
    """A partial allocation request: one group's answer, anchored to a tree."""
    anchor: int
    resources: tuple          # ((rp, rc, amount), ...)
    providers: frozenset      # providers used
    suffix: str
    same_provider: bool


class _TreeSearch:
    """The general path: each group's partial answers per anchor tree, then
    their combinations (see the module docstring)."""

    def __init__(self, search: _Search, tree_roots: dict, anchors: set[int] | None):
        self.s = search
        self.conn = search.conn
        self.tree_roots = tree_roots
        self.anchors = anchors
        self.inv: dict[int, list[_Inv]] = {}           # rc -> inventories
        self.inv_by_key: dict[tuple[int, int], _Inv] = {}
        self.sharing: set[int] = set()
        self.anchors_of_sharing: dict[int, set[int]] = {}
        self._traits: dict[int, set[int]] = {}
        self.root_of: dict[int, int] = {}

    # --------------------------------------------------------- loading
    def _load_inventories(self) -> None:
        rc_ids = {self.s.rc_ids[n] for g in self.s.groups.values() for n in g.resources}
        if not rc_ids:
            return
        rows = self.conn.execute(sa.text(
            'SELECT i.resource_provider_id, rp.root_provider_id, i.resource_class_id, '
            'i.total, i.reserved, i.allocation_ratio, i.min_unit, i.max_unit, '
            'i.step_size, COALESCE(u.used, 0) AS used '
            'FROM inventories i JOIN resource_providers rp '
            'ON rp.id = i.resource_provider_id '
            'LEFT JOIN (SELECT resource_provider_id, resource_class_id, '
            'SUM(used) AS used FROM allocations '
            f'WHERE resource_class_id IN ({_in_list(rc_ids)}) '
            'GROUP BY resource_provider_id, resource_class_id) u '
            'ON u.resource_provider_id = i.resource_provider_id '
            'AND u.resource_class_id = i.resource_class_id '
            f'WHERE i.resource_class_id IN ({_in_list(rc_ids)})')).all()
        for r in rows:
            inv = _Inv(r[0], r[1], r[2], (r.total - r.reserved) * r.allocation_ratio,
                       int(r.used), r.min_unit, r.max_unit, r.step_size)
            self.inv.setdefault(inv.rc, []).append(inv)
            self.inv_by_key[(inv.rp, inv.rc)] = inv
            self.root_of[inv.rp] = inv.root

    def _load_sharing(self) -> None:
        if not self.s.has_sharing:
            return
        sharing_trait = self.s.trait_ids[SHARING_TRAIT]
        self.sharing = set(self.conn.execute(sa.text(
            'SELECT resource_provider_id FROM resource_provider_traits '
            f'WHERE trait_id = {sharing_trait}')).scalars())
        rows = self.conn.execute(sa.text(
            'SELECT s.resource_provider_id, rp.root_provider_id '
            'FROM resource_provider_aggregates s '
            'JOIN resource_provider_aggregates o ON o.aggregate_id = s.aggregate_id '
            'JOIN resource_providers rp ON rp.id = o.resource_provider_id '
            f'WHERE s.resource_provider_id IN ({_in_list(self.sharing)})')).all()
        for sp, root in rows:
            self.anchors_of_sharing.setdefault(sp, set()).add(root)

    def _providers_having(self, trait_ids) -> set[int]:
        return set(self.conn.execute(sa.text(
            'SELECT DISTINCT resource_provider_id FROM resource_provider_traits '
            f'WHERE trait_id IN ({_in_list(trait_ids)})')).scalars())

    def _providers_in(self, agg_ids) -> set[int]:
        return set(self.conn.execute(sa.text(
            'SELECT DISTINCT resource_provider_id FROM resource_provider_aggregates '
            f'WHERE aggregate_id IN ({_in_list(agg_ids)})')).scalars())

    def _members_of_all(self, member_of: list[set[str]]) -> set[int]:
        result = None
        for any_of in member_of:
            ids = [self.s.agg_ids[a] for a in any_of if a in self.s.agg_ids]
            found = self._providers_in(ids) if ids else set()
            result = found if result is None else result & found
        return result or set()

    def _traits_of(self, rp: int) -> set[int]:
        return self._traits.get(rp, set())

    # ------------------------------------------------------- per group
    def _group_multi(self, g: RequestGroup, tree_root) -> list[_AReq]:
        """The unsuffixed group across a tree and its sharing providers."""
        s = self.s
        in_aggs = self._members_of_all(g.member_of) if g.member_of else None
        if in_aggs is not None and not in_aggs:
            return []
        bad_aggs_rps = set()
        bad = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad:
            bad_aggs_rps = self._providers_in(bad)
        by_rc: dict[int, set[tuple[int, int]]] = {}
        for name, amount in g.resources.items():
            rc = s.rc_ids[name]
            fitting = [i for i in self.inv.get(rc, ()) if i.fits(amount)
                       and (tree_root is None or i.root == tree_root)]
            if not fitting:
                return []
            pairs = {(i.rp, i.root) for i in fitting}
            if tree_root is None and self.sharing:
                shared = {i.rp for i in fitting} & self.sharing
                if in_aggs is not None:
                    shared &= in_aggs
                for sp in shared:
                    for anchor in self.anchors_of_sharing.get(sp, ()):
                        pairs.add((sp, anchor))
            if self.anchors is not None:
                pairs = {p for p in pairs if p[1] in self.anchors}
            if in_aggs is not None:
                pairs = {p for p in pairs if p[0] in in_aggs or p[1] in in_aggs}
            if bad_aggs_rps:
                pairs = {p for p in pairs
                         if p[0] not in bad_aggs_rps and p[1] not in bad_aggs_rps}
            if not pairs:
                return []
            by_rc[rc] = pairs
        common = set.intersection(*({root for _, root in pairs} for pairs in by_rc.values()))
        required = [{s.trait_ids[t] for t in any_of} for any_of in g.required_traits]
        forbidden = {s.trait_ids[t] for t in g.forbidden_traits}
        amounts = {s.rc_ids[n]: a for n, a in g.resources.items()}
        rcs = sorted(by_rc)
        per_root = collections.defaultdict(lambda: collections.defaultdict(list))
        for rc in rcs:
            for rp, root in by_rc[rc]:
                if root in common:
                    per_root[root][rc].append(rp)
        self._need_traits({rp for pairs in by_rc.values() for rp, _ in pairs})
        out = []
        for root, lists in per_root.items():
            for combo in itertools.product(*(sorted(lists[rc]) for rc in rcs)):
                used = set(combo)
                traits = set()
                ok = True
                for rp in used:
                    t = self._traits_of(rp)
                    if t & forbidden:
                        ok = False
                        break
                    traits |= t
                if not ok or not all(any_of & traits for any_of in required):
                    continue
                out.append(_AReq(
                    root, tuple((rp, rc, amounts[rc]) for rp, rc in zip(combo, rcs)),
                    frozenset(used), g.suffix, False))
        return out

    def _group_single(self, g: RequestGroup, tree_root) -> list[_AReq]:
        """A group satisfied by one provider (granular, or no trees/sharing)."""
        s = self.s
        allowed = None
        if g.required_traits:
            for any_of in g.required_traits:
                found = self._providers_having([s.trait_ids[t] for t in any_of])
                allowed = found if allowed is None else allowed & found
            if not allowed:
                return []
        if g.member_of:
            found = self._members_of_all(g.member_of)
            allowed = found if allowed is None else allowed & found
            if not allowed:
                return []
        forbidden_rps = set()
        bad = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad:
            forbidden_rps |= self._providers_in(bad)
        if g.forbidden_traits:
            forbidden_rps |= self._providers_having(
                [s.trait_ids[t] for t in g.forbidden_traits])
        pairs: dict[int, int] | None = None
        for name, amount in g.resources.items():
            rc = s.rc_ids[name]
            fitting = {i.rp: i.root for i in self.inv.get(rc, ()) if i.fits(amount)
                       and (tree_root is None or i.root == tree_root)}
            pairs = fitting if pairs is None else {
                rp: root for rp, root in pairs.items() if rp in fitting}
            if not pairs:
                return []
        if pairs is None:   # a resourceless group (same_subtree)
            pairs = self._all_providers(allowed, tree_root)
        if allowed is not None:
            pairs = {rp: root for rp, root in pairs.items() if rp in allowed}
        pairs = {rp: root for rp, root in pairs.items() if rp not in forbidden_rps}
        resources_of = [(s.rc_ids[n], a) for n, a in g.resources.items()]
        out = []
        for rp, root in pairs.items():
            res = tuple((rp, rc, a) for rc, a in resources_of)
            if self.anchors is None or root in self.anchors:
                out.append(_AReq(root, res, frozenset([rp]), g.suffix,
                                  g.use_same_provider))
            if rp in self.sharing:
                for anchor in self.anchors_of_sharing.get(rp, ()):
                    if anchor == root:
                        continue
                    if self.anchors is not None and anchor not in self.anchors:
                        continue
                    out.append(_AReq(anchor, res, frozenset([rp]), g.suffix,
                                      g.use_same_provider))
        return out

    def _all_providers(self, only, tree_root) -> dict[int, int]:
        sql = 'SELECT id, root_provider_id FROM resource_providers'
        conds = []
        if only is not None:
            conds.append(f'id IN ({_in_list(only)})')
        if tree_root is not None:
            conds.append(f'root_provider_id = {int(tree_root)}')
        if conds:
            sql += ' WHERE ' + ' AND '.join(conds)
        found = dict(self.conn.execute(sa.text(sql)).all())
        self.root_of.update(found)
        return found

    def _need_traits(self, rps) -> None:
        missing = [rp for rp in rps if rp not in self._traits]
        if not missing:
            return
        for rp in missing:
            self._traits[rp] = set()
        for chunk in _chunks(missing, 5000):
            for rp, trait in self.conn.execute(sa.text(
                    'SELECT resource_provider_id, trait_id FROM '
                    'resource_provider_traits WHERE resource_provider_id IN '
                    f'({_in_list(chunk)})')):
                self._traits[rp].add(trait)

    # ----------------------------------------------------------- merge
    def run(self) -> CandidateResult:
        self._load_inventories()
        self._load_sharing()
        per_group: dict[str, list[_AReq]] = {}
        for suffix, g in self.s.groups.items():
            multi = not g.use_same_provider and (self.s.has_trees or self.s.has_sharing)
            tree_root = self.tree_roots[suffix]
            found = (self._group_multi(g, tree_root) if multi
                     else self._group_single(g, tree_root))
            if not found:
                return _EMPTY
            per_group[suffix] = found
        parents = self._load_parents(per_group)
        results = self._merge(per_group, parents)
        if not results:
            return _EMPTY
        if not self.s.wide.nested_aware and self.s.has_trees:
            results = [r for r in results if self._one_per_tree(r, parents)]
        if self.s.wide.limit:
            results = results[:self.s.wide.limit]
        return self._render(results, parents)

    def _load_parents(self, per_group) -> dict[int, tuple[int | None, int]]:
        """id -> (parent id, root id) for every tree any result may touch."""
        roots = set()
        for areqs in per_group.values():
            for a in areqs:
                roots.add(a.anchor)
                roots.update(self.root_of[rp] for rp in a.providers)
        roots.discard(None)
        out = {}
        for chunk in _chunks(sorted(roots), 5000):
            for id_, parent, root in self.conn.execute(sa.text(
                    'SELECT id, parent_provider_id, root_provider_id FROM '
                    f'resource_providers WHERE root_provider_id IN ({_in_list(chunk)})')):
                out[id_] = (parent, root)
        return out

    def _merge(self, per_group, parents) -> list[tuple]:
        wide = self.s.wide
        suffixes = list(per_group)
        granular = [sfx for sfx in suffixes if sfx]
        by_anchor = collections.defaultdict(lambda: collections.defaultdict(list))
        for sfx, areqs in per_group.items():
            for a in areqs:
                by_anchor[a.anchor][sfx].append(a)
        seen = set()
        results = []
        limit = wide.limit
        for anchor in sorted(by_anchor):
            lists = by_anchor[anchor]
            if len(lists) != len(suffixes):
                continue
            for combo in itertools.product(*(lists[sfx] for sfx in suffixes)):
                if wide.group_policy == 'isolate' and granular:
                    used = set()
                    for a in combo:
                        if a.same_provider:
                            used |= a.providers
                    if len(used) != len(granular):
                        continue
                if wide.same_subtrees and not self._same_subtree_ok(combo, parents):
                    continue
                amounts = collections.defaultdict(int)
                for a in combo:
                    for rp, rc, amount in a.resources:
                        amounts[(rp, rc)] += amount
                if any(self._exceeds(key, amount) for key, amount in amounts.items()):
                    continue
                mappings = collections.defaultdict(set)
                for a in combo:
                    mappings[a.suffix] |= a.providers
                key = (frozenset(amounts.items()),
                       frozenset((k, frozenset(v)) for k, v in mappings.items()))
                if key in seen:
                    continue
                seen.add(key)
                results.append((dict(amounts), dict(mappings)))
                if limit and len(results) >= limit and wide.nested_aware:
                    return results
        return results

    def _exceeds(self, key, amount) -> bool:
        inv = self.inv_by_key[key]
        return inv.used + amount > int(inv.capacity) or amount > inv.max_unit

    def _same_subtree_ok(self, combo, parents) -> bool:
        for same in self.s.wide.same_subtrees:
            rps = set()
            for a in combo:
                if a.suffix in same:
                    rps |= a.providers
            if len(rps) <= 1:
                continue
            common = None
            for rp in rps:
                ancestors = _ancestors(rp, parents)
                common = ancestors if common is None else common & ancestors
            if not common & rps:
                return False
        return True

    @staticmethod
    def _one_per_tree(result, parents) -> bool:
        amounts, _ = result
        rps = {rp for rp, _ in amounts}
        roots = {parents[rp][1] for rp in rps}
        return len(roots) == len(rps)

    def _render(self, results, parents) -> CandidateResult:
        rp_ids = {rp for amounts, _ in results for rp, _ in amounts}
        roots = {parents[rp][1] for rp in rp_ids}
        tree_rps = sorted(rp for rp, (_, root) in parents.items() if root in roots)
        if not self.s.wide.nested_aware and self.s.has_trees:
            tree_rps = sorted(rp_ids)
        uuids = {}
        wanted = set(tree_rps)
        for rp in tree_rps:
            wanted.update(p for p in parents[rp] if p is not None)
        for chunk in _chunks(sorted(wanted), 5000):
            uuids.update(self.conn.execute(sa.text(
                'SELECT id, uuid FROM resource_providers '
                f'WHERE id IN ({_in_list(chunk)})')).all())
        summaries = {rp: CandidateSummary(
            uuids[rp],
            uuids.get(parents[rp][0]) if parents[rp][0] else None,
            uuids[parents[rp][1]], {}, []) for rp in tree_rps}
        for chunk in _chunks(tree_rps, 5000):
            rows = self.conn.execute(sa.text(
                'SELECT i.resource_provider_id, i.resource_class_id, i.total, '
                'i.reserved, i.allocation_ratio, '
                '(SELECT COALESCE(SUM(a.used), 0) FROM allocations a WHERE '
                'a.resource_provider_id = i.resource_provider_id AND '
                'a.resource_class_id = i.resource_class_id) AS used '
                f'FROM inventories i WHERE i.resource_provider_id IN ({_in_list(chunk)})'
            )).all()
            names = rc_obj.names_by_id(self.conn, {r[1] for r in rows})
            for rp, rc, total, reserved, ratio, used in rows:
                summaries[rp].resources[names[rc]] = {
                    'capacity': int((total - reserved) * ratio), 'used': int(used)}
            for rp, trait in _traits_of(self.conn, chunk):
                summaries[rp].traits.append(trait)
        requests = []
        for amounts, mappings in results:
            allocations: dict[str, dict[str, int]] = {}
            for (rp, rc), amount in amounts.items():
                allocations.setdefault(uuids[rp], {})[self.s.rc_names[rc]] = amount
            requests.append(AllocationRequest(
                allocations,
                {sfx: sorted(uuids[rp] for rp in rps) for sfx, rps in mappings.items()}))
        return CandidateResult(requests, [summaries[rp] for rp in tree_rps])


def _ancestors(rp: int, parents) -> set[int]:
    out = {rp}
    parent = parents.get(rp, (None, rp))[0]
    while parent is not None:
        out.add(parent)
        parent = parents.get(parent, (None, parent))[0]
    return out


def _chunks(items, size):
    items = list(items)
    for i in range(0, len(items), size):
        yield items[i:i + size]
