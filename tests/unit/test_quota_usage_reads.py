"""quotas.placement_usage never counts too little when a claim lands while it reads.

A build request being scheduled is counted from its flavor until its claim
is in Placement, then from Placement's usages. The claim can land at any
moment between the reads; the count may then be too high (counted twice),
never too low (counted in neither), or a project could go past its limit.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cellplane.objects.build_requests import Pending
from cellplane_api import quotas

RAM = 256


class PlacementWhereAClaimLands:
    """Placement's usages and allocations, the pending build's claim landing after ``reads_before`` reads."""

    def __init__(self, reads_before: int) -> None:
        self.reads = 0
        self.reads_before = reads_before

    def _read(self) -> bool:
        claimed = self.reads >= self.reads_before
        self.reads += 1
        return claimed

    def usages(self, project_id):
        placed = RAM if self._read() else 0
        return {'INSTANCE': {'MEMORY_MB': RAM + placed}}

    def get_allocations(self, consumer):
        return SimpleNamespace(allocations={'rp': {}} if self._read() else {})


@pytest.mark.parametrize('reads_before', [0, 1, 2])
def test_a_claim_landing_between_the_reads_is_counted(monkeypatch, reads_before):
    # One instance already placed (RAM), one build leased by a super conductor, claiming now.
    pending = [Pending('building', 1, RAM, True, {'MEMORY_MB': RAM})]
    monkeypatch.setattr(quotas.build_requests, 'pending_of_project', lambda conn, p: pending)
    used = quotas.placement_usage(None, PlacementWhereAClaimLands(reads_before), 'p')
    assert used['MEMORY_MB'] >= 2 * RAM
