"""The flat path on PostgreSQL: walk the candidate providers one by one in one statement."""
from __future__ import annotations

from typing import Sequence

from sqlalchemy.engine import Connection

from placement.objects import resource_class as rc_obj
from placement.objects.allocation_candidates.request import RequestGroup
from placement.objects.allocation_candidates.resolve import ResolvedRequest
from placement.objects.allocation_candidates.result import (
    EMPTY,
    AllocationRequest,
    CandidateResult,
    CandidateSummary,
)
from placement.objects.allocation_candidates.sql import fetch, in_list, names_of_traits


class ProviderWalk:
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

    def __init__(self, search: ResolvedRequest, group: RequestGroup, tree_root,
                 anchors: set[int] | None):
        self.s = search
        self.g = group
        self.tree_root = tree_root
        self.anchors = anchors

    def _members(self) -> str:
        """SELECT id of the providers in every member_of any-of set, by
        the aggregate index, within the walk's own statement."""
        s = self.s
        return ' INTERSECT '.join(
            _providers_with('resource_provider_aggregates', 'aggregate_id',
                            [s.agg_ids[a] for a in any_of if a in s.agg_ids],
                            _window_bounds(s))
            for any_of in self.g.member_of)

    def _driver(self) -> str:
        """SELECT id, uuid of the providers to walk (a window's in id order)."""
        s, g = self.s, self.g
        lookup = ('CROSS JOIN LATERAL (SELECT uuid FROM resource_providers '
                  'WHERE id = m.id OFFSET 0) AS r')
        # A window is the providers in id order from its pivot: unordered,
        # a scan returns them as the table keeps them, and a provider's row
        # moves each time a claim bumps its generation. A set of linked
        # providers is bounded to the window in the link table's subquery;
        # for one trait its primary key (trait, provider) yields them in
        # order, else (an aggregate, several traits) the ones in the window
        # are sorted, not every linked provider.
        bounds = _window_bounds(s)
        order = ' ORDER BY resource_provider_id' if _windowed(s) else ''
        conds = []
        if g.member_of:
            source = f'SELECT m.id, r.uuid FROM ({self._members()}{order}) AS m(id) {lookup}'
            column = 'm.id'
        elif g.required_traits:
            trait_set = _providers_with('resource_provider_traits', 'trait_id',
                                        [s.trait_ids[t] for t in g.required_traits[0]],
                                        bounds)
            source = f'SELECT m.id, r.uuid FROM ({trait_set}{order}) AS m(id) {lookup}'
            column = 'm.id'
        else:
            source = 'SELECT r.id, r.uuid FROM resource_providers AS r'
            column = 'r.id'
            conds += [f'r.id {bound}' for bound in bounds]
        if self.tree_root is not None:
            conds.append(f'{column} = {int(self.tree_root)}')
        if self.anchors is not None:
            conds.append(f'{column} IN ({in_list(self.anchors)})')
        where = f' WHERE {" AND ".join(conds)}' if conds else ''
        return source + where + (f' ORDER BY {column}' if order else '')

    def _sql(self) -> str:
        s, g = self.s, self.g
        fits = ' OR '.join(
            f'(i.resource_class_id = {s.rc_ids[name]} AND i.min_unit <= {amount} '
            f'AND i.max_unit >= {amount} AND {amount} % i.step_size = 0 '
            f'AND COALESCE(u.used, 0) + {amount} <= (i.total - i.reserved) * i.allocation_ratio)'
            for name, amount in g.resources.items()) or 'false'
        conds = [f'inv.fitting = {len(g.resources)}']
        for any_of in g.required_traits:
            conds.append(f"tr.traits && '{{{in_list(s.trait_ids[t] for t in any_of)}}}'"
                         '::integer[]')
        if g.forbidden_traits:
            ids = in_list(s.trait_ids[t] for t in g.forbidden_traits)
            conds.append(f"NOT tr.traits && '{{{ids}}}'::integer[]")
        bad_aggs = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad_aggs:
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_aggregates x '
                         'WHERE x.resource_provider_id = d.id AND '
                         f'x.aggregate_id IN ({in_list(bad_aggs)}))')
        limit = f' LIMIT {int(s.wide.limit)}' if s.wide.limit else ''
        if _windowed(s):
            limit = f' ORDER BY d.id{limit}'
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
        rows = fetch(s.conn, _walk_settings(s.conn) + self._sql())
        if not rows:
            return EMPTY
        names = rc_obj.names_by_id(s.conn, {rc for r in rows if r[1] for rc in r[1]})
        # Names by a second, tiny query: joined inside the per-provider
        # subquery, the planner hashed the whole traits table every time.
        trait_names = names_of_traits(s.conn, {t for r in rows for t in r[4]})
        resources, suffix = g.resources, g.suffix
        requests, summaries = [], []
        for uuid, rcs, caps, used, traits in rows:
            summaries.append(CandidateSummary(
                uuid, None, uuid,
                {names[rc]: {'capacity': cap, 'used': int(u)}
                 for rc, cap, u in zip(rcs or (), caps or (), used or (), strict=True)},
                [trait_names[t] for t in traits]))   # in trait id order, as the reference
            requests.append(AllocationRequest({uuid: resources}, {suffix: [uuid]}))
        return CandidateResult(requests, summaries)


def _windowed(search: ResolvedRequest) -> bool:
    """Whether the walk is one side of a random window (``search._random_window``)."""
    return search.wide.id_from is not None or search.wide.id_below is not None


def _window_bounds(search: ResolvedRequest) -> list[str]:
    """The window's bounds on a provider id, as SQL comparisons (none outside a window)."""
    bounds = []
    if search.wide.id_from is not None:
        bounds.append(f'>= {int(search.wide.id_from)}')
    if search.wide.id_below is not None:
        bounds.append(f'< {int(search.wide.id_below)}')
    return bounds


def _providers_with(table: str, column: str, any_of: list[int],
                    bounds: Sequence[str] = ()) -> str:
    """SELECT the providers that ``table`` links to any of ``any_of``
    (trait or aggregate ids), each once, within ``bounds`` of their id.

    Both link tables have (provider, other) as primary key, so the rows of
    one id are unique per provider already: DISTINCT, only added for
    several ids, would otherwise be a hash over them for nothing (10% of
    the required-trait walk at 5,000 providers).
    """
    distinct = 'DISTINCT ' if len(any_of) > 1 else ''
    within = ''.join(f' AND resource_provider_id {bound}' for bound in bounds)
    return (f'SELECT {distinct}resource_provider_id FROM {table} '
            f'WHERE {column} IN ({in_list(sorted(any_of))}){within}')


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
