"""Allocation candidates: which providers could satisfy a request, and how.

``find_candidates`` (``search.py``) answers GET /allocation_candidates. It
resolves the request's names to ids (``resolve.py``), looks at the
deployment's layout, and takes one of three paths, which give the same
answers as the reference implementation:

* **Flat, on PostgreSQL** (``provider_walk.py``). No provider has a parent,
  none shares its inventory (MISC_SHARES_VIA_AGGREGATE) and there is one
  request group, so each candidate is one provider that satisfies
  everything. One statement walks the candidate providers one by one (the
  members of member_of, else the providers with the first required trait,
  else all), tests each by index lookups, stops at ``limit`` and returns one
  row per candidate. This is the common case and the fast one.
* **Flat, on any other database** (``flat.py``: SQLite in the embedded mode
  and the tests). Same conditions; one set-based query finds the providers,
  stops at ``limit`` and returns their inventories and usage with them.
* **General** (``tree.py``: trees, sharing providers, several request
  groups, same_subtree). The rows that matter (inventories of the requested
  classes with usage, the trees and their traits and aggregates, sharing
  anchors) are read in a few queries and the combinatorics are done in
  memory, following the reference's semantics step by step:
  - the unsuffixed group may spread its resources over the providers of one
    tree plus sharing providers anchored to that tree; its required traits
    must be covered by the union of the traits of the providers used, and
    no provider used may have a forbidden trait; member_of matches the
    provider or its root;
  - a suffixed group is satisfied by a single provider, which must itself
    have the traits and aggregates asked for;
  - results of all groups are combined per anchor tree, then filtered by
    group_policy=isolate, same_subtree, and capacity of the summed amounts.

All reads happen on one connection at READ COMMITTED: a claim committed
between two of its statements may show in one and not the other. That is
harmless, candidates are advice: the claim re-checks everything.
"""
from placement.objects.allocation_candidates.request import (
    CandidateQueryError,
    RequestGroup,
    RequestWide,
    UnknownResourceClass,
    UnknownTraits,
)
from placement.objects.allocation_candidates.result import (
    AllocationRequest,
    CandidateResult,
    CandidateSummary,
)
from placement.objects.allocation_candidates.search import find_candidates

__all__ = ['AllocationRequest', 'CandidateQueryError', 'CandidateResult',
           'CandidateSummary', 'RequestGroup', 'RequestWide', 'UnknownResourceClass',
           'UnknownTraits', 'find_candidates']
