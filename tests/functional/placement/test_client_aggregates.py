"""PlacementClient.change_aggregates: some aggregates added and removed, the others kept.

The others are kept even when another writer comes in between."""
from __future__ import annotations

import uuid

from placement.client import InProcessTransport, PlacementClient
from tests.functional.placement.test_client import InterleavingTransport

MINE, OLD, THEIRS, KEPT = (str(uuid.uuid4()) for _ in range(4))


def test_adds_and_removes_only_what_it_is_told(api):
    client = PlacementClient(InProcessTransport(api.app))
    rp = client.ensure_provider(str(uuid.uuid4()), 'host-a').uuid
    client.set_aggregates(rp, [KEPT, OLD])

    assert client.change_aggregates(rp, add=[MINE], remove=[OLD]) is True
    assert client.get_aggregates(rp)[0] == {KEPT, MINE}
    # Nothing to change: nothing written, the generation stays.
    generation = client.get_provider(rp).generation
    assert client.change_aggregates(rp, add=[MINE], remove=[OLD]) is False
    assert client.get_provider(rp).generation == generation


def test_a_write_in_between_is_read_again_and_kept(api):
    plain = PlacementClient(InProcessTransport(api.app))
    rp = plain.ensure_provider(str(uuid.uuid4()), 'host-b').uuid
    plain.set_aggregates(rp, [KEPT])

    def another_operator():
        plain.change_aggregates(rp, add=[THEIRS])

    transport = InterleavingTransport(api.app, 'PUT', '/aggregates', another_operator)
    assert PlacementClient(transport).change_aggregates(rp, add=[MINE]) is True

    assert transport.writes == 2          # the first PUT lost the generation, the second won
    assert plain.get_aggregates(rp)[0] == {KEPT, THEIRS, MINE}
