"""When a benchmark's boots are over: all final, some in ERROR, or no longer moving; and how many fit.

Pure logic, no I/O, so that it is tested cheaply (tests/unit/test_bench_progress.py):

- ``capacity``: how many instances of a flavor a deployment's hosts hold,
  from the inventory their driver reports (total - reserved, times the
  allocation ratio, per resource class), so a run that cannot fit is
  refused before anything is started;
- ``Progress``: fed what the databases show at each poll; says when every
  instance is final, and raises ``BenchmarkStopped`` when instances ended in
  ERROR (once all are final) or when none became final for
  ``stall_seconds``; the message says what was seen, one line per reason
  (``160 instances NoValidHost: ...: the hosts are full``).
"""
from __future__ import annotations

import collections
import dataclasses
import math
import re
import time
from typing import Callable, Mapping

#: What a flavor asks of a host, Placement's resource classes -> amount.
Flavor = Mapping[str, int]

_UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')
_POSITION = re.compile(r' \(\d+ of \d+\)')
REASON_CHARS = 200


class BenchmarkStopped(Exception):
    """The boots ended badly (instances in ERROR) or stopped moving; ``str()`` says what was seen."""


@dataclasses.dataclass(frozen=True)
class Inventory:
    """One resource class of one host, as its driver reports it to Placement."""
    total: int
    reserved: int = 0
    allocation_ratio: float = 1.0

    def holds(self, amount: int) -> int:
        usable = math.floor((self.total - self.reserved) * self.allocation_ratio + 1e-9)
        return max(0, usable // amount)


def per_host(inventory: Mapping[str, Inventory], flavor: Flavor) -> int:
    """Instances of ``flavor`` one host with ``inventory`` holds (0 if it lacks a resource)."""
    fits = [inventory[rc].holds(amount) if rc in inventory else 0
            for rc, amount in flavor.items() if amount > 0]
    return int(min(fits)) if fits else 0


def capacity(hosts: int, inventory: Mapping[str, Inventory], flavor: Flavor) -> int:
    """Instances of ``flavor`` that ``hosts`` hosts alike hold together."""
    return hosts * per_host(inventory, flavor)


def reason_kind(reason: str) -> str:
    """A failure reason with what differs between instances taken out (UUIDs, "(2 of 10)")."""
    text = _POSITION.sub('', _UUID.sub('<uuid>', ' '.join(reason.split())))
    text = text.replace('No valid host for instance <uuid>', 'no valid host')
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 3] + '...'


@dataclasses.dataclass(frozen=True)
class Seen:
    """One poll: instances ACTIVE, and those in ERROR counted by reason (cell faults, failed requests)."""
    active: int
    errors: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def error(self) -> int:
        return sum(self.errors.values())

    @property
    def final(self) -> int:
        return self.active + self.error


def describe(seen: Seen, expected: int, *, capacity_: int | None = None) -> str:
    """What the run saw, one line per failure reason, most frequent first."""
    lines = [f'{seen.active} of {expected} instances ACTIVE, {seen.error} in ERROR, '
             f'{expected - seen.final} neither']
    by_kind: collections.Counter[str] = collections.Counter()
    for reason, n in seen.errors.items():
        by_kind[reason_kind(reason)] += n
    for kind, n in by_kind.most_common():
        full = ''
        if kind.startswith('NoValidHost') and capacity_ is not None \
                and seen.active >= capacity_:
            full = f': the hosts are full ({seen.active} ACTIVE, capacity {capacity_})'
        lines.append(f'{n} instance{"s" if n != 1 else ""} {kind}{full}')
    return '\n'.join(lines)


class Progress:
    """Follows the polls of one scenario until its instances are final, in ERROR, or stuck."""

    def __init__(self, expected: int, *, stall_seconds: float, capacity_: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.expected = expected
        self.stall_seconds = stall_seconds
        self.capacity = capacity_
        self._clock = clock
        self._final = -1
        self._moved_at = clock()

    def update(self, seen: Seen) -> bool:
        """True when every instance is final and ACTIVE; raises ``BenchmarkStopped`` else, if over."""
        now = self._clock()
        if seen.final > self._final:
            self._final, self._moved_at = seen.final, now
        if seen.final >= self.expected:
            if seen.error:
                raise BenchmarkStopped(describe(seen, self.expected, capacity_=self.capacity))
            return True
        if now - self._moved_at >= self.stall_seconds:
            raise BenchmarkStopped(
                f'no instance became final for {self.stall_seconds:g} s: stopped.\n'
                + describe(seen, self.expected, capacity_=self.capacity))
        return False
