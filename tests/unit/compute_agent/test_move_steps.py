"""A move's steps on one node (compute_agent.moves): the source taking an instance back, a failed copy."""
from __future__ import annotations

import copy
import uuid

import pytest
from oslo_config import cfg

from cellplane import conf as shared_conf
from cellplane.rpc.transport import get_transport
from compute_agent import moves
from compute_agent.builder import InstanceBuilder
from compute_agent.rpcapi import ComputeAPI
from compute_agent.virt import driver
from compute_agent.virt.fake import FakeDriver, FakeSettings
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.migration import RESIZE, Migration

OLD = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1)
NEW = Flavor(name='large', vcpus=2, memory_mb=2048, root_gb=2)


def _builder(host: str, **settings) -> InstanceBuilder:
    return InstanceBuilder(host=host, nodename=host, driver=FakeDriver(FakeSettings(**settings)))


def _running_at(builder: InstanceBuilder, flavor: Flavor) -> Instance:
    instance = Instance(uuid=str(uuid.uuid4()), project_id='p', user_id='u', flavor=flavor,
                        vm_state='active', task_state=None, host=builder.host)
    builder.driver.spawn(driver.BuildRequest(
        instance_uuid=instance.uuid, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
        root_gb=flavor.root_gb, image_properties={}))
    return instance


def _resize(instance: Instance, source: str) -> Migration:
    return Migration(uuid=str(uuid.uuid4()), instance_uuid=instance.uuid,
                     migration_type=RESIZE, source_host=source, source_node=source,
                     old_flavor=OLD, new_flavor=NEW)


def _size(builder: InstanceBuilder, instance_uuid: str) -> int:
    return builder.driver._instances[instance_uuid].memory_mb


def test_an_instance_already_running_on_its_source_is_left_running_at_its_old_size():
    # A revert done twice, or a copy that failed: it never stopped here.
    source = _builder('h1')
    instance = _running_at(source, OLD)
    assert moves.take_back(source, instance, _resize(instance, 'h1')) is None
    assert source.driver.running() == [instance.uuid]
    assert _size(source, instance.uuid) == OLD.memory_mb
    assert source.local_claims.usage() == OLD.placement_resources()


def test_a_same_host_resize_taken_back_runs_again_at_its_old_size():
    host = _builder('h1')
    instance = _running_at(host, NEW)
    assert moves.take_back(host, instance, _resize(instance, 'h1'), same_host=True) is None
    assert _size(host, instance.uuid) == OLD.memory_mb
    assert host.local_claims.usage() == OLD.placement_resources()


def test_a_copy_that_fails_is_the_moves_failure_with_its_reason_and_the_instance_runs_on():
    source = _builder('h1', fail_copies=True, copy_failure_reason='lost the network')
    instance = _running_at(source, OLD)
    why = moves.hand_over(source, instance.uuid, driver.CopyControl())
    assert why == 'the copy failed on h1: lost the network'
    assert source.driver.running() == [instance.uuid]


class _Recorded:
    def __init__(self, sent: list, version: str) -> None:
        self.sent, self.version = sent, version

    def cast(self, ctxt, method, **kwargs) -> None:
        self.sent.append((method, self.version, sorted(kwargs)))


@pytest.mark.parametrize('cap, version, names', [
    (None, '1.8', ['host', 'instance', 'migration', 'same_host']),
    ('1.7', '1.4', ['host', 'instance', 'migration']),
], ids=['uncapped', 'capped-below-1.8'])
def test_take_back_says_same_host_only_to_agents_that_know_it(cap, version, names):
    conf = cfg.ConfigOpts()
    conf.register_opts(copy.deepcopy(shared_conf.upgrade_levels_opts), group='upgrade_levels')
    conf([], default_config_files=[], default_config_dirs=[])
    if cap:
        conf.set_override('compute', cap, group='upgrade_levels')
    transport = get_transport('fake://')
    try:
        client = ComputeAPI(transport, conf=conf)
        sent: list = []
        client.prepare = lambda method, v, **kw: _Recorded(sent, v)
        instance = _running_at(_builder('h1'), NEW)
        client.take_back(None, instance, _resize(instance, 'h1'), same_host=True)
    finally:
        transport.cleanup()
    assert sent == [('take_back', version, names)]
