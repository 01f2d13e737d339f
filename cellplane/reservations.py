"""Reservations held for a request, given back last first when a later step fails.

What a service takes for a request before the request is done (a Placement
claim, a server group's place, an assumption in a cache, an instance row
written into a cell) is a ``Reservation``: the code that reserves returns
one, with its undo beside it (kube-scheduler's Reserve/Unreserve). The
caller pushes each on a ``ReservationStack``; when a later step fails it
``unwind``s, so everything is given back in the reverse of the order it was
taken (what was taken last may rest on what was taken before it). An
unreserve that fails is logged with what is left held and does not stop the
others. ``unreserve`` does nothing the second time, so a reservation may be
given back early (by whoever took it) and still stay on the stack.
"""
from __future__ import annotations

import abc
import logging
from typing import Iterator, TypeVar

LOG = logging.getLogger(__name__)

R = TypeVar('R', bound='Reservation')


class Reservation(abc.ABC):
    """One thing held for ``consumer`` (an instance) until its request is done or fails."""

    consumer: str = ''
    _released: bool = False

    def unreserve(self) -> None:
        """Give it back; nothing happens if it was given back already."""
        if self._released:
            return
        self._release()
        self._released = True

    @property
    def released(self) -> bool:
        return self._released

    @abc.abstractmethod
    def _release(self) -> None:
        """Undo what was reserved; raise if it could not be undone."""

    def __str__(self) -> str:
        return f'{type(self).__name__} of {self.consumer}'


class ReservationStack:
    """The reservations of one request, in the order they were taken."""

    def __init__(self) -> None:
        self._held: list[Reservation] = []
        # Those whose unreserve raised: still held, logged; (reservation, error).
        self.failed: list[tuple[Reservation, Exception]] = []

    def push(self, reservation: R) -> R:
        """Hold ``reservation`` until ``unwind`` (or ``keep``); returns it."""
        self._held.append(reservation)
        return reservation

    def mark(self) -> int:
        """A point to ``unwind`` back to: what is pushed after it can be undone alone."""
        return len(self._held)

    def keep(self, reservation: Reservation) -> None:
        """Take ``reservation`` off the stack without undoing it (it is handed on)."""
        self._held.remove(reservation)

    def unwind(self, to: int = 0) -> list[Reservation]:
        """Unreserve everything pushed since mark ``to``, last first; those given back.

        One that fails is logged at ERROR, kept in ``failed``, and the rest
        are still given back.
        """
        undone = []
        while len(self._held) > to:
            reservation = self._held.pop()
            try:
                reservation.unreserve()
            except Exception as exc:  # noqa: BLE001 - the others must still be given back
                LOG.error('Could not give back %s while undoing a failed request; it '
                          'stays held: %s', reservation, exc)
                self.failed.append((reservation, exc))
                continue
            undone.append(reservation)
        return undone

    def __iter__(self) -> Iterator[Reservation]:
        return iter(list(self._held))

    def __len__(self) -> int:
        return len(self._held)
