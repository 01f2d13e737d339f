"""The embedded cloud's start-up errors name a few hosts and count the rest."""
from __future__ import annotations

from cellplane_embedded.runtime import _some


def test_a_few_hosts_are_all_named_in_order():
    assert _some({'h2', 'h1'}) == 'h1, h2'


def test_thousands_of_hosts_are_ten_names_and_a_count():
    hosts = {f'cell1-host{n:04d}' for n in range(5000)}
    said = _some(hosts)
    assert said.startswith('cell1-host0000, cell1-host0001, ')
    assert said.count(',') == 9
    assert said.endswith('cell1-host0009 and 4990 more')
