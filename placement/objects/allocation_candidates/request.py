"""What a GET /allocation_candidates asks: its request groups, its request-wide options, and the errors in it."""
from __future__ import annotations

from dataclasses import dataclass, field

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


class CandidateQueryError(Exception):
    """The request names something that does not exist (400)."""


class UnknownResourceClass(CandidateQueryError):
    def __init__(self, name: str):
        super().__init__(f'No such resource class {name}.')


class UnknownTraits(CandidateQueryError):
    def __init__(self, names):
        super().__init__(f"No such trait(s): {', '.join(sorted(names))}.")


@dataclass
class RequestGroup:
    """One request group: the unsuffixed one ('') or a granular one."""
    suffix: str = ''
    resources: dict[str, int] = field(default_factory=dict)
    required_traits: list[set[str]] = field(default_factory=list)  # AND of ORs
    forbidden_traits: set[str] = field(default_factory=set)
    member_of: list[set[str]] = field(default_factory=list)        # AND of ORs
    forbidden_aggs: set[str] = field(default_factory=set)
    in_tree: str | None = None

    @property
    def use_same_provider(self) -> bool:
        return bool(self.suffix)


@dataclass
class RequestWide:
    """The parameters that apply to the whole request."""
    limit: int | None = None
    group_policy: str | None = None
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    same_subtrees: list[set[str]] = field(default_factory=list)
    nested_aware: bool = True
    # With a limit: start from a random provider (see search.py).
    randomize: bool = False
    # The window of provider ids searched (flat paths): [id_from, id_below).
    id_from: int | None = None
    id_below: int | None = None
