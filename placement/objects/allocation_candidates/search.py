"""The entry point: resolve the request, look at the deployment's layout, pick the path."""
from __future__ import annotations

from sqlalchemy.engine import Engine

from placement.db import api as db_api
from placement.objects.allocation_candidates.flat import FlatQuery
from placement.objects.allocation_candidates.provider_walk import ProviderWalk
from placement.objects.allocation_candidates.request import SHARING_TRAIT, RequestGroup, RequestWide
from placement.objects.allocation_candidates.resolve import LAYOUT, ResolvedRequest
from placement.objects.allocation_candidates.result import EMPTY, CandidateResult
from placement.objects.allocation_candidates.tree import TreeSearch


def find_candidates(engine: Engine, groups: dict[str, RequestGroup],
                    wide: RequestWide) -> CandidateResult:
    """The answer to GET /allocation_candidates for ``groups`` and ``wide``."""
    with engine.connect() as conn, db_api.autocommit(conn):
        return _search(ResolvedRequest(conn, groups, wide))


def _search(request: ResolvedRequest) -> CandidateResult:
    request.resolve_names()
    # Aggregates that do not exist match nothing.
    for g in request.groups.values():
        for any_of in g.member_of:
            if not any(a in request.agg_ids for a in any_of):
                return EMPTY
    layout = request.conn.execute(
        LAYOUT, {'sharing': request.trait_ids.get(SHARING_TRAIT, -1)}).one()
    request.has_trees = bool(layout.nested)
    request.has_sharing = bool(layout.sharing)
    anchors = request.anchor_roots()
    if anchors is not None and not anchors:
        return EMPTY
    tree_roots = {}
    for suffix, g in request.groups.items():
        root = request.tree_root_of(g.in_tree)
        if root is False:
            return EMPTY
        tree_roots[suffix] = root
    if (not request.has_trees and not request.has_sharing
            and len(request.groups) == 1 and not request.wide.same_subtrees):
        (suffix, group), = request.groups.items()
        if request.conn.dialect.name == 'postgresql':
            return ProviderWalk(request, group, tree_roots[suffix], anchors).run()
        return FlatQuery(request, group, tree_roots[suffix], anchors).run()
    return TreeSearch(request, tree_roots, anchors).run()
