"""``servers.vm_states_of``: every vm_state a server shown in a status can be in (what a list asks its cells for)."""
from cellplane.objects import instances
from cellplane_api import servers
from rpc_schemas import instance as instance_states

ALL_VM_STATES = (*instance_states.VM_STATES, instances.RESIZED)
TASK_STATES = (None, *instances.MOVE_TASK_STATES)


def test_every_vm_state_and_task_state_shown_in_a_status_is_among_its_vm_states():
    for vm_state in ALL_VM_STATES:
        for task_state in TASK_STATES:
            status = servers._status(vm_state, task_state)
            states = servers.vm_states_of([status])
            assert states is None or vm_state in states, (vm_state, task_state, status)


def test_the_boot_watchers_statuses_ask_for_building_and_error_rows_only():
    assert servers.vm_states_of(['BUILD', 'ERROR']) >= {'building', 'error'}
    assert not servers.vm_states_of(['BUILD', 'ERROR']) & {'active', 'deleted', 'resized'}


def test_a_status_of_the_task_state_asks_for_every_vm_state():
    assert servers.vm_states_of(['ACTIVE', 'REBUILD']) is None
    assert servers.vm_states_of(['REVERT_RESIZE']) is None
