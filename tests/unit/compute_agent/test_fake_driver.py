"""The fake virt driver fails exactly as configured, with the configured reason."""
from __future__ import annotations

import uuid

import pytest

from compute_agent.virt import driver
from compute_agent.virt.fake import FakeDriver, FakeSettings


def _request():
    return driver.BuildRequest(instance_uuid=str(uuid.uuid4()), vcpus=1, memory_mb=512,
                               root_gb=1, image_properties={})


def _outcomes(fake: FakeDriver, n: int) -> list[str | None]:
    results = []
    for _ in range(n):
        try:
            fake.spawn(_request())
            results.append(None)
        except driver.BuildFailed as exc:
            results.append(exc.reason)
    return results


def test_fail_all_fails_every_build_with_the_configured_reason():
    fake = FakeDriver(FakeSettings(fail_all=True, failure_reason='No more IP addresses'))
    assert _outcomes(fake, 5) == ['No more IP addresses'] * 5
    assert fake.list_instances() == []


def test_fail_first_n_then_succeeds():
    fake = FakeDriver(FakeSettings(fail_first=2, failure_reason='disk error'))
    assert _outcomes(fake, 4) == ['disk error', 'disk error', None, None]
    assert len(fake.list_instances()) == 2


def test_fail_fraction_with_a_seed_is_repeatable_and_near_the_fraction():
    a = _outcomes(FakeDriver(FakeSettings(fail_fraction=0.3, fail_seed=7)), 400)
    b = _outcomes(FakeDriver(FakeSettings(fail_fraction=0.3, fail_seed=7)), 400)
    assert a == b
    assert 80 <= sum(r is not None for r in a) <= 160


def test_an_instance_fails_at_random_once_in_a_process_whatever_the_host():
    request = _request()
    first = FakeDriver(FakeSettings(fail_fraction=1.0, failure_reason='flaky'))
    second = FakeDriver(FakeSettings(fail_fraction=1.0, failure_reason='flaky'))
    with pytest.raises(driver.BuildFailed, match='flaky'):
        first.spawn(request)

    second.spawn(request)    # its retry, on another host: the fault was transient

    assert second.list_instances() == [request.instance_uuid]
    with pytest.raises(driver.BuildFailed):
        second.spawn(_request())    # another instance still fails at random
    # fail_all is not random: it fails the same instance every time.
    failing = FakeDriver(FakeSettings(fail_all=True))
    for _ in range(2):
        with pytest.raises(driver.BuildFailed):
            failing.spawn(request)


def test_no_failure_configured_builds_and_destroy_removes():
    fake = FakeDriver(FakeSettings())
    req = _request()
    fake.spawn(req)
    assert fake.list_instances() == [req.instance_uuid]
    fake.destroy(req.instance_uuid)
    fake.destroy(req.instance_uuid)
    assert fake.list_instances() == []


def test_inventory_reports_placement_fields_with_max_unit_defaulting_to_total():
    inv = FakeDriver(FakeSettings(vcpus=8, cpu_allocation_ratio=2.0)).get_inventory()
    assert inv['VCPU'].as_placement() == {'total': 8, 'reserved': 0, 'min_unit': 1,
                                          'max_unit': 8, 'step_size': 1,
                                          'allocation_ratio': 2.0}
    assert set(inv) == {'VCPU', 'MEMORY_MB', 'DISK_GB'}


def test_unknown_driver_name_lists_installed_ones():
    with pytest.raises(driver.UnknownVirtDriver) as err:
        driver.load('nonexistent')
    assert 'fake' in str(err.value)


def test_fake_loads_through_stevedore():
    assert isinstance(driver.load('fake', settings=FakeSettings()), FakeDriver)


def test_guests_kept_in_state_dir_are_found_by_a_driver_started_again(tmp_path):
    running, stopped, gone = _request(), _request(), _request()
    first = FakeDriver(FakeSettings(state_dir=str(tmp_path)), host='h1')
    for request in (running, stopped, gone):
        first.spawn(request)
    first.hand_over(stopped.instance_uuid)
    first.destroy(gone.instance_uuid)

    again = FakeDriver(FakeSettings(state_dir=str(tmp_path)), host='h1')
    assert again.running() == [running.instance_uuid]
    assert again.list_instances() == sorted([running.instance_uuid, stopped.instance_uuid])
    # Another host's file is its own.
    assert FakeDriver(FakeSettings(state_dir=str(tmp_path)), host='h2').list_instances() == []


def test_fail_copies_fails_a_hand_over_halfway_and_the_instance_runs_on():
    fake = FakeDriver(FakeSettings(fail_copies=True, copy_failure_reason='lost the network'))
    request = _request()
    fake.spawn(request)
    with pytest.raises(driver.CopyFailed) as failed:
        fake.hand_over(request.instance_uuid, driver.CopyControl())
    assert failed.value.reason == 'lost the network'
    assert fake.running() == [request.instance_uuid]


def test_an_abort_asked_before_a_failing_copy_fails_still_aborts_it():
    fake = FakeDriver(FakeSettings(fail_copies=True, move_seconds=30))
    request = _request()
    fake.spawn(request)
    control = driver.CopyControl()
    control.abort()
    with pytest.raises(driver.MoveAborted):
        fake.hand_over(request.instance_uuid, control)
    assert fake.running() == [request.instance_uuid]
