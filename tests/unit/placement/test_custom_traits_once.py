"""A client creates each custom trait once, however many threads set traits at once."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from placement.client import PlacementClient
from placement.client.transport import Response


class RecordingPlacement:
    """Answers trait and provider-trait writes; a trait's creation takes a moment."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def request(self, method, path, body=None, microversion=None):
        with self._lock:
            self.requests.append((method, path))
        if path.startswith('/traits/'):
            time.sleep(0.05)   # long enough for every other thread to arrive meanwhile
            return Response(201, None)
        return Response(200, {'resource_provider_generation': body['resource_provider_generation'] + 1})


def test_eight_hosts_registering_at_once_create_each_custom_trait_once():
    placement = RecordingPlacement()
    client = PlacementClient(placement)
    traits = {'CUSTOM_HOLLOW_HOST', 'CUSTOM_CELL_CELL1', 'COMPUTE_STATUS_DISABLED'}
    with ThreadPoolExecutor(8) as pool:
        generations = list(pool.map(
            lambda n: client.set_traits(f'rp-{n}', traits, generation=0), range(8)))
    assert generations == [1] * 8
    created = sorted(path for method, path in placement.requests if path.startswith('/traits/'))
    assert created == ['/traits/CUSTOM_CELL_CELL1', '/traits/CUSTOM_HOLLOW_HOST']
    assert sum(1 for _, path in placement.requests if path.endswith('/traits')
               and path.startswith('/resource_providers/')) == 8


class ProviderWithTraits(RecordingPlacement):
    """One provider with two custom traits, read at generation 7."""

    def request(self, method, path, body=None, microversion=None):
        if method == 'GET' and path.endswith('/traits'):
            with self._lock:
                self.requests.append((method, path))
            return Response(200, {'traits': ['CUSTOM_HOLLOW_HOST', 'CUSTOM_CELL_CELL1',
                                             'HW_CPU_X86_AVX2'],
                                  'resource_provider_generation': 7})
        return super().request(method, path, body, microversion)


def test_traits_read_then_written_back_take_two_requests():
    # What a service disable does: the provider's traits and COMPUTE_STATUS_DISABLED.
    placement = ProviderWithTraits()
    client = PlacementClient(placement)
    present, generation = client.get_traits_and_generation('rp-1')
    assert generation == 7
    assert client.set_traits('rp-1', present | {'COMPUTE_STATUS_DISABLED'},
                             generation=generation) == 8
    # No trait created again, no generation read again.
    assert placement.requests == [('GET', '/resource_providers/rp-1/traits'),
                                  ('PUT', '/resource_providers/rp-1/traits')]
