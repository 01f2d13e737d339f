"""PendingUnclaims: an allocation removal Placement could not take is retried until it is."""
from __future__ import annotations

from placement.client import PlacementClientError, PlacementUnreachable
from placement.client.pending_unclaims import PendingUnclaims


class _Placement:
    """Placement down for the first ``down`` calls, then removing; ``refuse`` answers 400."""

    def __init__(self, down: int = 0, refuse: frozenset[str] = frozenset()):
        self.down = down
        self.refuse = refuse
        self.removed: list[str] = []

    def unclaim(self, consumer_uuid: str) -> bool:
        if self.down:
            self.down -= 1
            raise PlacementUnreachable('placement at http://p unreachable: refused')
        if consumer_uuid in self.refuse:
            raise PlacementClientError(400, 'bad consumer', 'placement.undefined_code')
        self.removed.append(consumer_uuid)
        return True


def test_a_removal_placement_takes_at_once_is_not_kept():
    placement = _Placement()
    unclaims = PendingUnclaims(placement)
    assert unclaims.unclaim('a') is True
    assert unclaims.pending() == []
    assert placement.removed == ['a']


def test_removals_made_while_placement_is_down_are_made_when_it_is_back():
    placement = _Placement(down=3)
    unclaims = PendingUnclaims(placement)
    assert unclaims.unclaim('a') is False
    assert unclaims.unclaim('b') is False
    assert unclaims.pending() == ['a', 'b']
    assert unclaims.retry() == 0          # still down: stops at the first failure
    assert unclaims.pending() == ['a', 'b']

    assert unclaims.retry() == 2
    assert placement.removed == ['a', 'b']
    assert unclaims.pending() == []
    assert unclaims.retry() == 0


def test_a_server_error_is_retried_and_a_refusal_is_not():
    class _Failing(_Placement):
        def __init__(self):
            super().__init__(refuse=frozenset({'refused'}))
            self.errors = 1

        def unclaim(self, consumer_uuid):
            if consumer_uuid == 'flaky' and self.errors:
                self.errors -= 1
                raise PlacementClientError(500, 'boom')
            return super().unclaim(consumer_uuid)

    placement = _Failing()
    unclaims = PendingUnclaims(placement)
    assert unclaims.unclaim('flaky') is False
    assert unclaims.unclaim('refused') is True   # nothing more to do: asking again is refused
    assert unclaims.pending() == ['flaky']
    assert unclaims.retry() == 1
    assert placement.removed == ['flaky']
