"""The interface every virt driver implements, and the failure it raises."""
from __future__ import annotations

import abc
import threading
from dataclasses import dataclass

import stevedore

NAMESPACE = 'cellplane.compute.virt_drivers'


class BuildFailed(Exception):
    """A build failed on this host; ``reason`` is what the operator will read."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class MoveAborted(Exception):
    """A move's copy was stopped by an abort: the instance still runs here, untouched."""


class CopyFailed(Exception):
    """A move's copy failed on its source; the instance still runs there. ``reason`` is the operator's."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class CopyControl:
    """What may be asked of a move's copy while it runs: stop it (abort) or end it now (force complete).

    The first ask wins and stays: an abort asked before the copy began stops
    it as it begins. A driver's ``hand_over`` waits on ``wait``.
    """

    ABORT = 'abort'
    COMPLETE = 'complete'

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked = threading.Event()
        self.asked: str | None = None

    def _ask(self, what: str) -> bool:
        with self._lock:
            if self.asked is None:
                self.asked = what
                self._asked.set()
            return self.asked == what

    def abort(self) -> bool:
        """Ask the copy to stop; False if a force complete was asked first."""
        return self._ask(self.ABORT)

    def force_complete(self) -> bool:
        """Ask the copy to end now; False if an abort was asked first."""
        return self._ask(self.COMPLETE)

    def reached_end(self) -> bool:
        """The copy is at its end: True, unless an abort came first (then it must stop).

        After it, an abort is refused: the switch-over goes on.
        """
        return self._ask(self.COMPLETE)

    def wait(self, seconds: float) -> str | None:
        """Wait up to ``seconds`` for an ask; what was asked (ABORT, COMPLETE) or None."""
        self._asked.wait(seconds)
        return self.asked


class UnknownVirtDriver(Exception):
    """``[compute] virt_driver`` names no installed driver."""


@dataclass(frozen=True)
class DriverInventory:
    """One resource class of a host, in Placement's inventory terms."""
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int | None = None     # None: the total
    step_size: int = 1
    allocation_ratio: float = 1.0

    def as_placement(self) -> dict:
        return {'total': self.total, 'reserved': self.reserved,
                'min_unit': self.min_unit,
                'max_unit': self.total if self.max_unit is None else self.max_unit,
                'step_size': self.step_size, 'allocation_ratio': self.allocation_ratio}


@dataclass(frozen=True)
class BuildRequest:
    """What a driver needs to build one instance."""
    instance_uuid: str
    vcpus: int
    memory_mb: int
    root_gb: int
    image_properties: dict


class VirtDriver(abc.ABC):
    """Builds and destroys instances on one host and describes its capacity."""

    @abc.abstractmethod
    def get_inventory(self) -> dict[str, DriverInventory]:
        """Resource class name -> inventory of this host."""

    @abc.abstractmethod
    def get_traits(self) -> set[str]:
        """The traits this host's provider carries in Placement."""

    @abc.abstractmethod
    def spawn(self, request: BuildRequest) -> None:
        """Build the instance, or raise ``BuildFailed`` with the reason."""

    @abc.abstractmethod
    def destroy(self, instance_uuid: str) -> None:
        """Remove the instance; removing an unknown one is not an error."""

    @abc.abstractmethod
    def list_instances(self) -> list[str]:
        """Uuids of the instances this host holds (running or stopped)."""

    @abc.abstractmethod
    def hand_over(self, instance_uuid: str, control: CopyControl | None = None) -> None:
        """Copy the instance for a move, then stop it here (kept, stopped, until confirmed).

        ``control``: an abort asked during the copy raises ``MoveAborted``
        and leaves the instance running; a force complete ends the copy now.
        """

    @abc.abstractmethod
    def power_on(self, instance_uuid: str) -> None:
        """Run a stopped instance again (a move that failed or was reverted); raise ``BuildFailed``."""

    @abc.abstractmethod
    def running(self) -> list[str]:
        """Uuids of the instances this host runs (not stopped)."""


def load(name: str, **kwargs) -> VirtDriver:
    """Instantiate the driver registered as ``name``, passing ``kwargs``."""
    try:
        manager = stevedore.DriverManager(NAMESPACE, name, invoke_on_load=True,
                                          invoke_kwds=kwargs)
    except stevedore.exception.NoMatches:
        names = sorted(stevedore.ExtensionManager(NAMESPACE).names())
        raise UnknownVirtDriver(
            f'no virt driver named {name!r}; installed: {", ".join(names) or "none"}') from None
    return manager.driver
