"""The scheduler's part of server groups, one module per step (ARCHITECTURE.md, "Server groups").

- ``book.py``: the API and cell databases behind a group (members, places, states);
- ``places.py``: ``GroupPlaces``, the group during one request: members
  counted per domain, the query's ``member_of``/``!in:`` (the pre-filter
  Placement answers), the alternates a hard policy allows, and the place
  each claimed instance takes (``reserve``/``unreserve``);
- ``counts.py``: the group as one instance's filters and weighers see it;
- ``affinity_filter.py``, ``anti_affinity_filter.py``: the hard policies'
  filters; ``soft_affinity_weigher.py``, ``soft_anti_affinity_weigher.py``:
  the soft policies' weighers.

What NoValidHost says of a group (policy, level, full domains, members
asked for) is ``scheduler.no_valid_host.group_refusal``, beside the rest of
its explanation.

The rule itself (which domains are full, may a member join a domain) is
``cellplane.server_group_policy``, shared with the cell conductor.
"""
