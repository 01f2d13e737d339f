"""The flat path on SQLite (and any database but PostgreSQL): one set-based query.

Taken when no provider has a parent, none shares its inventory and there is one
request group: each candidate is one provider, found by ONE query that stops at
``limit`` and returns their inventories and usage with them.
"""
from __future__ import annotations

import sqlalchemy as sa

from placement.objects import resource_class as rc_obj
from placement.objects.allocation_candidates.request import RequestGroup
from placement.objects.allocation_candidates.resolve import ResolvedRequest
from placement.objects.allocation_candidates.result import (
    EMPTY,
    AllocationRequest,
    CandidateResult,
    CandidateSummary,
)
from placement.objects.allocation_candidates.sql import fetch, in_list, traits_of


class FlatQuery:
    """One group, no trees, no sharing: one provider per candidate, in one SQL query.

    On PostgreSQL the search takes ``ProviderWalk`` instead."""

    def __init__(self, search: ResolvedRequest, group: RequestGroup, tree_root,
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
            ids = in_list(s.agg_ids[a] for a in any_of if a in s.agg_ids)
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
            ids = in_list(s.trait_ids[t] for t in any_of)
            if from_members:
                conds.append('EXISTS (SELECT 1 FROM resource_provider_traits t WHERE '
                             f't.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
                continue
            # IN (subquery), not EXISTS: the planner can start from the
            # (often few) providers that have the trait.
            conds.append('rp.id IN (SELECT t.resource_provider_id FROM '
                         f'resource_provider_traits t WHERE t.trait_id IN ({ids}))')
        if g.forbidden_traits:
            ids = in_list(s.trait_ids[t] for t in g.forbidden_traits)
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_traits t '
                         f'WHERE t.resource_provider_id = rp.id AND t.trait_id IN ({ids}))')
        bad_aggs = [s.agg_ids[a] for a in g.forbidden_aggs if a in s.agg_ids]
        if bad_aggs:
            conds.append('NOT EXISTS (SELECT 1 FROM resource_provider_aggregates m '
                         'WHERE m.resource_provider_id = rp.id AND '
                         f'm.aggregate_id IN ({in_list(bad_aggs)}))')
        if self.tree_root is not None:
            conds.append(f'rp.id = {int(self.tree_root)}')
        if self.anchors is not None:
            conds.append(f'rp.id IN ({in_list(self.anchors)})')
        if s.wide.id_from is not None:
            conds.append(f'rp.id >= {int(s.wide.id_from)}')
        if s.wide.id_below is not None:
            conds.append(f'rp.id < {int(s.wide.id_below)}')
        return conds or ['1 = 1']

    def run(self) -> CandidateResult:
        s, g = self.s, self.g
        limit = f' LIMIT {int(s.wide.limit)}' if s.wide.limit else ''
        members = self._members()
        if members is not None and not members:
            return EMPTY
        conds = self._where(from_members=members is not None)
        if members:
            conds.append(f'rp.id IN ({in_list(members)})')
        windowed = s.wide.id_from is not None or s.wide.id_below is not None
        if windowed:
            # A window is the providers in id order from its pivot, not in the
            # order the database keeps the rows (see provider_walk.py).
            limit = f' ORDER BY rp.id{limit}'
        sql = (
            f'WITH cand AS (SELECT rp.id, rp.uuid FROM resource_providers rp '
            f'WHERE {" AND ".join(conds)}{limit}) '
            'SELECT cand.id, cand.uuid, i.resource_class_id, i.total, i.reserved, '
            'i.allocation_ratio, '
            '(SELECT COALESCE(SUM(a.used), 0) FROM allocations a WHERE '
            'a.resource_provider_id = cand.id AND a.resource_class_id = '
            'i.resource_class_id) AS used '
            'FROM cand LEFT JOIN inventories i ON i.resource_provider_id = cand.id')
        rows = fetch(s.conn, sql)
        if not rows:
            return EMPTY
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
        if windowed:
            order.sort()    # the join above need not keep the CTE's order
        for rp_id, trait in traits_of(s.conn, order):
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
