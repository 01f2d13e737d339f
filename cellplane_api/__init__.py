"""The API role: what the ``cellplane`` CLI does for users, in-process.

It writes what users ask for (build requests, request specs, instance
mappings, server groups, failure domains) in the API database and casts the
boot to the super conductor. It reaches downward, never up: it reads each
cell's database to show servers (with a deadline per cell) and the hosts of
failure domains, casts ``terminate_instance`` to a host over its cell's bus,
and keeps Placement's aggregates in step with the failure domains.
"""
