"""What the Placement client raises: Placement's error answers, a refused claim, Placement out of reach."""
from __future__ import annotations

CONCURRENT_UPDATE = 'placement.concurrent_update'


class PlacementClientError(Exception):
    """Placement answered with an error status."""

    def __init__(self, status: int, detail: str, code: str | None = None):
        super().__init__(f'placement answered {status} ({code}): {detail}')
        self.status = status
        self.detail = detail
        self.code = code


class ClaimConflict(PlacementClientError):
    """The claim was refused with 409: no room, or another writer won.

    ``lost_race`` is True when Placement says the provider or consumer
    changed concurrently (code placement.concurrent_update).
    """

    @property
    def lost_race(self) -> bool:
        return self.code == CONCURRENT_UPDATE

    @property
    def stale_consumer(self) -> bool:
        """The consumer's generation was not the one given: it already has
        (other) allocations, or someone changed them meanwhile."""
        return self.code == CONCURRENT_UPDATE and \
            'consumer generation conflict' in self.detail


class PlacementUnreachable(Exception):
    """Placement could not be reached, even after retrying."""


class MalformedCandidates(ValueError):
    """Placement's reply does not have the shape of an allocation-candidates reply."""
