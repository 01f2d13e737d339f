"""benchmarks/progress.py: a run that cannot fit is refused, and boots that fail or stall end the run."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'benchmarks'))

import progress  # benchmarks/ is not a package: found through sys.path

FAKE_HOST = {'VCPU': progress.Inventory(16, allocation_ratio=4.0),
             'MEMORY_MB': progress.Inventory(65536, reserved=512),
             'DISK_GB': progress.Inventory(1000)}
SMALL = {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}


def test_capacity_is_the_scarcest_resource_after_reserved_and_ratio():
    assert progress.per_host(FAKE_HOST, SMALL) == 64                     # VCPU: 16 x 4.0
    assert progress.per_host(FAKE_HOST, {'VCPU': 1, 'MEMORY_MB': 4096}) == 15   # 65024 / 4096
    assert progress.capacity(10, FAKE_HOST, SMALL) == 640


def test_a_host_without_a_resource_the_flavor_asks_holds_none():
    assert progress.per_host({'VCPU': progress.Inventory(8)}, SMALL) == 0


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_all_active_ends_the_wait():
    watch = progress.Progress(3, stall_seconds=10, clock=Clock())
    assert watch.update(progress.Seen(active=1)) is False
    assert watch.update(progress.Seen(active=3)) is True


def novalidhost(uuid: str, position: int) -> str:
    return (f'NoValidHost: No valid host for instance {uuid} ({position} of 10): '
            f'0 of 10 hosts had room (VCPU)')


def test_errors_once_all_are_final_stop_the_run_counted_by_reason():
    watch = progress.Progress(800, stall_seconds=10, capacity_=640, clock=Clock())
    errors = {novalidhost(f'{i:08x}-0000-4000-8000-000000000000', i % 10 + 1): 1
              for i in range(160)}
    with pytest.raises(progress.BenchmarkStopped) as stopped:
        watch.update(progress.Seen(active=640, errors=errors))
    assert str(stopped.value).splitlines() == [
        '640 of 800 instances ACTIVE, 160 in ERROR, 0 neither',
        '160 instances NoValidHost: no valid host: 0 of 10 hosts had room (VCPU): '
        'the hosts are full (640 ACTIVE, capacity 640)']


def test_errors_are_waited_out_while_others_still_progress():
    watch = progress.Progress(10, stall_seconds=10, clock=Clock())
    assert watch.update(progress.Seen(active=2, errors={'Build failed': 1})) is False


def test_no_instance_becoming_final_for_stall_seconds_stops_the_run():
    clock = Clock()
    watch = progress.Progress(10, stall_seconds=30, clock=clock)
    watch.update(progress.Seen(active=4))
    clock.now = 29.0
    assert watch.update(progress.Seen(active=4)) is False
    clock.now = 40.0
    assert watch.update(progress.Seen(active=5)) is False    # moved: the stall starts again
    clock.now = 69.0
    assert watch.update(progress.Seen(active=5)) is False
    clock.now = 70.0
    with pytest.raises(progress.BenchmarkStopped, match=r'no instance became final for 30 s'
                       r'(.|\n)*5 of 10 instances ACTIVE, 0 in ERROR, 5 neither'):
        watch.update(progress.Seen(active=5))


def test_boot_bench_refuses_more_instances_than_the_hosts_hold_before_starting(capsys):
    import boot_bench
    with pytest.raises(SystemExit) as exited:
        boot_bench.main(['--instances', '400', '--cells', '2', '--hosts-per-cell', '5'])
    assert exited.value.code == 2
    assert ('--instances 400 boots 800 instances (400 as single requests, then 400 in '
            'batches, nothing deleted in between), but 2 cells x 5 hosts hold 640 of '
            'bench.small (64 per host); use --instances 320 or fewer') in capsys.readouterr().err
