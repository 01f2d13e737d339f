"""Why no host could take a server group's member: the words NoValidHost and the scheduling record show."""
from __future__ import annotations

from scheduler.server_group.places import GroupPlaces


def why_full(places: GroupPlaces) -> str | None:
    """Under hard anti-affinity: which domains are full, by name; None when none is."""
    full = places.full_domains()
    if not full:
        return None
    label = places.group.name or places.group.uuid
    level = places.level
    if level is None:
        return (f'anti-affinity at host: group {label} has members on '
                f'{", ".join(full)}')
    names = dict(places.book.domain_names(level))
    named = sorted(names.get(d, d) for d in full)
    if set(names) <= set(full):
        return (f'anti-affinity at {level}: group {label} has members in every '
                f'{level} ({", ".join(named)})')
    return (f'anti-affinity at {level}: group {label} has members in '
            f'{level} {", ".join(named)}, and no host of another {level} '
            f'could take it')
