"""The general path: trees, sharing providers, several request groups, same_subtree.

The rows that matter are read in a few queries and the combinatorics are done
in memory, following the reference's semantics step by step (see the package
docstring).
"""
from __future__ import annotations

import collections
import itertools
import random
from dataclasses import dataclass

import sqlalchemy as sa

from placement.objects import resource_class as rc_obj
from placement.objects.allocation_candidates.request import SHARING_TRAIT, RequestGroup
from placement.objects.allocation_candidates.resolve import ResolvedRequest
from placement.objects.allocation_candidates.result import (
    EMPTY,
    AllocationRequest,
    CandidateResult,
    CandidateSummary,
)
from placement.objects.allocation_candidates.sql import in_list, traits_of


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


class TreeSearch:
    """The general path: each group's partial answers per anchor tree, then
    their combinations (see the module docstring)."""

    def __init__(self, search: ResolvedRequest, tree_roots: dict, anchors: set[int] | None):
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
            f'WHERE resource_class_id IN ({in_list(rc_ids)}) '
            'GROUP BY resource_provider_id, resource_class_id) u '
            'ON u.resource_provider_id = i.resource_provider_id '
            'AND u.resource_class_id = i.resource_class_id '
            f'WHERE i.resource_class_id IN ({in_list(rc_ids)})')).all()
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
            f'WHERE s.resource_provider_id IN ({in_list(self.sharing)})')).all()
        for sp, root in rows:
            self.anchors_of_sharing.setdefault(sp, set()).add(root)

    def _providers_having(self, trait_ids) -> set[int]:
        return set(self.conn.execute(sa.text(
            'SELECT DISTINCT resource_provider_id FROM resource_provider_traits '
            f'WHERE trait_id IN ({in_list(trait_ids)})')).scalars())

    def _providers_in(self, agg_ids) -> set[int]:
        return set(self.conn.execute(sa.text(
            'SELECT DISTINCT resource_provider_id FROM resource_provider_aggregates '
            f'WHERE aggregate_id IN ({in_list(agg_ids)})')).scalars())

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
                    root, tuple((rp, rc, amounts[rc]) for rp, rc in zip(combo, rcs, strict=True)),
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
            conds.append(f'id IN ({in_list(only)})')
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
                    f'({in_list(chunk)})')):
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
                return EMPTY
            per_group[suffix] = found
        parents = self._load_parents(per_group)
        results = self._merge(per_group, parents)
        if not results:
            return EMPTY
        if not self.s.wide.nested_aware and self.s.has_trees:
            results = [r for r in results if self._one_per_tree(r, parents)]
        if self.s.wide.limit:
            if self.s.wide.randomize:
                random.shuffle(results)
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
                    f'resource_providers WHERE root_provider_id IN ({in_list(chunk)})')):
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
                f'WHERE id IN ({in_list(chunk)})')).all())
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
                f'FROM inventories i WHERE i.resource_provider_id IN ({in_list(chunk)})'
            )).all()
            names = rc_obj.names_by_id(self.conn, {r[1] for r in rows})
            for rp, rc, total, reserved, ratio, used in rows:
                summaries[rp].resources[names[rc]] = {
                    'capacity': int((total - reserved) * ratio), 'used': int(used)}
            for rp, trait in traits_of(self.conn, chunk):
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
