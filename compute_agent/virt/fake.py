"""A virt driver that builds nothing, takes as long as told, and fails on demand.

A move's destination spawns as a build does (its failures are a build's);
the source's hand-over copies the instance for ``move_seconds`` (an abort
during the copy stops it, the instance still running; a force complete ends
it at once; with ``fail_copies`` the copy fails halfway, the instance still
running), then stops the instance and keeps it until the move is
confirmed (destroyed) or fails or is reverted (run again).

Its capacity, build time and failures come from ``[fake_driver]`` options
(or a ``FakeSettings`` given directly, as the embedded mode does for its many
hosts in one process), so every path of the boot flow can be driven in tests
and in the demo: fail every build, fail the first N, fail a seeded random
fraction, always with the configured reason.

Its guests live in the process, or, with ``[fake_driver] state_dir``, also
in ``<state_dir>/<host>.json``, written at each change and read at start:
they outlive the agent as a real hypervisor's guests do, so that a host
killed and started again still holds them (the evacuation tests need a
returning host with the guests it no longer owns).

A random failure is transient: an instance that failed at random on one
host of an agent process does not fail at random again in that process
(``_FAILED_AT_RANDOM``, shared by the process's drivers, as a hollow agent's
hosts and the embedded mode's are). Which instance meets which host depends
on timing; that its retry then succeeds does not, so a seeded demo run ends
with the same counts every time.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from oslo_config import cfg

from compute_agent.virt.driver import (
    BuildFailed,
    BuildRequest,
    CopyControl,
    CopyFailed,
    DriverInventory,
    MoveAborted,
    VirtDriver,
)

fake_driver_group = cfg.OptGroup('fake_driver', title='The fake virt driver')
fake_driver_opts = [
    cfg.IntOpt('vcpus', default=16, min=1, help='VCPU total of this host.'),
    cfg.FloatOpt('cpu_allocation_ratio', default=4.0, min=0.0001,
                 help='Overcommit ratio reported for VCPU.'),
    cfg.IntOpt('memory_mb', default=65536, min=1, help='MEMORY_MB total.'),
    cfg.IntOpt('reserved_memory_mb', default=512, min=0, help='MEMORY_MB kept for the host.'),
    cfg.IntOpt('disk_gb', default=1000, min=1, help='DISK_GB total.'),
    cfg.ListOpt('traits', default=[], help='Traits of this host (e.g. HW_CPU_X86_AVX2, CUSTOM_SSD).'),
    cfg.FloatOpt('build_seconds', default=0.0, min=0.0,
                 help='How long a build takes.'),
    cfg.BoolOpt('fail_all', default=False, help='Fail every build.'),
    cfg.IntOpt('fail_first', default=0, min=0, help='Fail the first N builds, then succeed.'),
    cfg.FloatOpt('fail_fraction', default=0.0, min=0.0, max=1.0,
                 help='Fail this fraction of builds at random. An instance fails at '
                      'random at most once in an agent process (a transient fault): '
                      'with max_attempts of 2 or more, random failures alone never '
                      'end an instance in ERROR, so a seeded run ends with the same '
                      'counts whatever host each instance lands on.'),
    cfg.IntOpt('fail_seed', help='Seed of the random failures, for repeatable runs.'),
    cfg.StrOpt('failure_reason', default='Simulated build failure',
               help='The reason a failed build reports, e.g. "No more IP addresses".'),
    cfg.FloatOpt('move_seconds', default=0.0, min=0.0,
                 help='How long a source host takes to hand an instance over to a '
                      'move (the simulated copy of its disk). An abort of a live '
                      'migration during the copy stops it (the instance keeps running '
                      'here); a force complete ends it at once.'),
    cfg.BoolOpt('fail_copies', default=False,
                help='Fail every move this host is the source of halfway through its '
                     'copy (after half of move_seconds), with copy_failure_reason: the '
                     'instance keeps running here and the move fails.'),
    cfg.StrOpt('copy_failure_reason', default='Simulated copy failure',
               help='The reason a failed copy reports, e.g. "lost the migration network".'),
    cfg.StrOpt('state_dir',
               help='A directory where each host keeps its guests (<host>.json), so '
                    'that they outlive the agent process as a hypervisor\'s do; unset, '
                    'they live in the process only.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # A fresh OptGroup per ConfigOpts, so overrides never leak between configs.
    conf.register_group(cfg.OptGroup(fake_driver_group.name, title=fake_driver_group.title))
    conf.register_opts(fake_driver_opts, group=fake_driver_group.name)


def list_opts():
    return [(fake_driver_group, fake_driver_opts)]


@dataclass
class FakeSettings:
    vcpus: int = 16
    cpu_allocation_ratio: float = 4.0
    memory_mb: int = 65536
    reserved_memory_mb: int = 512
    disk_gb: int = 1000
    traits: list[str] = field(default_factory=list)
    build_seconds: float = 0.0
    fail_all: bool = False
    fail_first: int = 0
    fail_fraction: float = 0.0
    fail_seed: int | None = None
    failure_reason: str = 'Simulated build failure'
    move_seconds: float = 0.0
    fail_copies: bool = False
    copy_failure_reason: str = 'Simulated copy failure'
    state_dir: str | None = None

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> 'FakeSettings':
        group = conf.fake_driver
        return cls(**{opt.dest: group[opt.dest] for opt in fake_driver_opts})


# Instances that already failed at random in this process: never again.
_FAILED_AT_RANDOM: set[str] = set()
_FAILED_AT_RANDOM_LOCK = threading.Lock()


def _fails_at_random_once(instance_uuid: str, drawn: bool) -> bool:
    if not drawn:
        return False
    with _FAILED_AT_RANDOM_LOCK:
        if instance_uuid in _FAILED_AT_RANDOM:
            return False
        _FAILED_AT_RANDOM.add(instance_uuid)
        return True


class FakeDriver(VirtDriver):
    """Keeps instances in a dict; see the module docstring for failure modes."""

    @classmethod
    def for_host(cls, conf: cfg.ConfigOpts, host: str) -> 'FakeDriver':
        """The driver of one host of a hollow agent: ``[fake_driver]``, with a seed of its own.

        The random failures of each host are drawn from ``fail_seed`` and the
        host's name: repeatable, but not the same draws on every host.
        """
        register_opts(conf)
        settings = FakeSettings.from_conf(conf)
        if settings.fail_seed is not None:
            settings.fail_seed = random.Random(f'{settings.fail_seed}-{host}').randrange(2**31)
        return cls(settings, host=host)

    def __init__(self, settings: FakeSettings | None = None, conf: cfg.ConfigOpts | None = None,
                 host: str | None = None):
        if settings is None:
            conf = cfg.CONF if conf is None else conf
            register_opts(conf)
            settings = FakeSettings.from_conf(conf)
            if settings.state_dir:
                host = host or conf.host
        self.settings = settings
        self._state_file = (Path(settings.state_dir) / f'{host}.json'
                            if settings.state_dir and host else None)
        self._random = random.Random(settings.fail_seed)
        self._lock = threading.Lock()
        self._builds_started = 0
        self._instances: dict[str, BuildRequest] = {}
        # Handed over to a move and not running: kept until confirm or revert.
        self._stopped: set[str] = set()
        self._load()

    def _load(self) -> None:
        if self._state_file is None or not self._state_file.exists():
            return
        state = json.loads(self._state_file.read_text())
        self._instances = {uuid: BuildRequest(**request)
                           for uuid, request in state['instances'].items()}
        self._stopped = set(state['stopped'])

    def _save(self) -> None:
        """Write the guests out (called with the lock held)."""
        if self._state_file is None:
            return
        self._state_file.parent.mkdir(parents=True, exist_ok=True)
        written = self._state_file.with_suffix('.tmp')
        written.write_text(json.dumps({
            'instances': {uuid: dataclasses.asdict(r) for uuid, r in self._instances.items()},
            'stopped': sorted(self._stopped)}))
        os.replace(written, self._state_file)

    def get_inventory(self) -> dict[str, DriverInventory]:
        s = self.settings
        return {
            'VCPU': DriverInventory(total=s.vcpus, allocation_ratio=s.cpu_allocation_ratio),
            'MEMORY_MB': DriverInventory(total=s.memory_mb, reserved=s.reserved_memory_mb),
            'DISK_GB': DriverInventory(total=s.disk_gb),
        }

    def get_traits(self) -> set[str]:
        return set(self.settings.traits)

    def _should_fail(self, instance_uuid: str) -> bool:
        with self._lock:
            self._builds_started += 1
            if self.settings.fail_all or self._builds_started <= self.settings.fail_first:
                return True
            # Drawn for every build, so a host's sequence of draws is its seed's.
            drawn = self._random.random() < self.settings.fail_fraction
        return _fails_at_random_once(instance_uuid, drawn)

    def spawn(self, request: BuildRequest) -> None:
        fail = self._should_fail(request.instance_uuid)
        if self.settings.build_seconds:
            time.sleep(self.settings.build_seconds)
        if fail:
            raise BuildFailed(self.settings.failure_reason)
        with self._lock:
            self._instances[request.instance_uuid] = request
            self._stopped.discard(request.instance_uuid)
            self._save()

    def destroy(self, instance_uuid: str) -> None:
        with self._lock:
            self._instances.pop(instance_uuid, None)
            self._stopped.discard(instance_uuid)
            self._save()

    def list_instances(self) -> list[str]:
        with self._lock:
            return sorted(self._instances)

    def hand_over(self, instance_uuid: str, control: CopyControl | None = None) -> None:
        seconds = self.settings.move_seconds
        if self.settings.fail_copies:
            # It fails halfway through; an abort asked before then still wins.
            if control is None:
                time.sleep(seconds / 2)
            elif control.wait(seconds / 2) == CopyControl.ABORT:
                raise MoveAborted(f'the copy of instance {instance_uuid} was aborted')
            raise CopyFailed(self.settings.copy_failure_reason)
        if control is None:
            time.sleep(seconds)
        elif control.wait(seconds) == CopyControl.ABORT or not control.reached_end():
            raise MoveAborted(f'the copy of instance {instance_uuid} was aborted')
        with self._lock:
            self._stopped.add(instance_uuid)
            self._save()

    def power_on(self, instance_uuid: str) -> None:
        with self._lock:
            if instance_uuid not in self._instances:
                raise BuildFailed(f'instance {instance_uuid} is not on this host')
            self._stopped.discard(instance_uuid)
            self._save()

    def running(self) -> list[str]:
        with self._lock:
            return sorted(set(self._instances) - self._stopped)
