"""The entry point: resolve the request, look at the deployment's layout, pick the path."""
from __future__ import annotations

import random

import sqlalchemy as sa
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


def _random_window(request: ResolvedRequest, search) -> CandidateResult:
    """Up to ``limit`` candidates found from a random provider id on, wrapping around.

    Each search still stops at the limit (the cost does not grow with the
    number of providers), and requests start at different places, as
    kube-scheduler starts each cycle's search where the last one stopped.
    """
    wide = request.wide
    low, high = request.conn.execute(sa.text(
        'SELECT min(id), max(id) FROM resource_providers')).one()
    if low is None:
        return EMPTY
    pivot = random.randint(low, high)
    limit = wide.limit
    wide.id_from, wide.id_below = pivot, None
    first = search()
    missing = limit - len(first.allocation_requests)
    if missing <= 0 or pivot == low:
        return first
    wide.id_from, wide.id_below, wide.limit = None, pivot, missing
    try:
        second = search()
    finally:
        wide.limit = limit
    return CandidateResult(first.allocation_requests + second.allocation_requests,
                           first.summaries + second.summaries)


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
        path = ProviderWalk if request.conn.dialect.name == 'postgresql' else FlatQuery

        def search() -> CandidateResult:
            return path(request, group, tree_roots[suffix], anchors).run()
        if request.wide.randomize and request.wide.limit:
            return _random_window(request, search)
        return search()
    return TreeSearch(request, tree_roots, anchors).run()
