"""The API role: what the ``cellplane`` CLI does against the API database.

It writes what users ask for (flavors, build requests, request specs,
instance mappings) and hands work to the super conductor; it never talks to
a cell directly except to read instances for listing.
"""
