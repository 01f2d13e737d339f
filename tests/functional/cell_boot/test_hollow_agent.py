"""A hollow compute agent (one agent, many hosts) in one process, with its cell conductor.

Each hosted host must keep its own identity: its RPC server name, its
provider (with the hollow trait), its compute node and service rows, its
builds and failures; one host can be stopped and started alone, and an
agent restarted with fewer hosts removes the ones it no longer serves.
"""
from __future__ import annotations

from cellplane.context import RequestContext
from cellplane.objects import compute_nodes, services
from compute_agent.hosted_host import HOLLOW_HOST_TRAIT
from compute_agent.resource_reporter import compute_node_uuid
from tests.support.polling import eventually


def _compute_services(cell) -> dict[str, dict]:
    return {row['host']: row for row in services.list_all(cell.engine)
            if row['binary'] == compute_nodes.COMPUTE_BINARY}


def test_every_hosted_host_registers_with_its_own_provider_node_and_service(cell):
    agent = cell.add_hollow_agent('hollow', 12)

    names = [f'hollow-{i}' for i in range(1, 13)]
    assert list(agent.hosts) == names
    providers = {p.name: p for p in cell.placement.list_providers(name_prefix='hollow-')}
    assert sorted(providers) == sorted(names)
    for name in names:
        uuid = compute_node_uuid(name, name)
        assert providers[name].uuid == uuid
        assert cell.placement.get_inventory(uuid)['VCPU'].total == 8
        assert HOLLOW_HOST_TRAIT in cell.placement.get_traits(uuid)
        node = compute_nodes.get_node(cell.engine, uuid)
        assert (node['host'], node['nodename']) == (name, name)
    eventually(lambda: set(_compute_services(cell)) == set(names),
               'a compute service row for each hosted host')


def test_builds_cast_to_different_hosted_hosts_run_on_those_hosts(cell):
    agent = cell.add_hollow_agent('hollow', 6)

    booted = {host: cell.boot([host])[0] for host in ('hollow-2', 'hollow-5', 'hollow-6')}
    for host, instance in booted.items():
        row = cell.wait_for_state(instance.uuid, 'active')
        assert (row['host'], row['node']) == (host, host)
        assert agent.hosts[host].driver.list_instances() == [instance.uuid]
        assert list(cell.allocations(instance.uuid)) == [agent.hosts[host].node_uuid]
    assert agent.hosts['hollow-1'].driver.list_instances() == []


def test_a_build_failing_on_one_hosted_host_goes_to_an_alternate_in_the_same_agent(cell):
    agent = cell.add_hollow_agent(
        'hollow', 4, settings_for=lambda host: (
            {'fail_all': True, 'failure_reason': 'No more IP addresses'}
            if host == 'hollow-1' else {}))

    instance, _ = cell.boot(['hollow-1', 'hollow-3'])

    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'hollow-3'
    failed, ok = cell.history(instance.uuid)
    assert (failed.host, failed.result, failed.reason) == (
        'hollow-1', 'failed', 'No more IP addresses')
    assert (ok.host, ok.result) == ('hollow-3', 'ok')
    assert list(cell.allocations(instance.uuid)) == [agent.hosts['hollow-3'].node_uuid]
    assert cell.provider_usages('hollow-1') == {}
    assert agent.hosts['hollow-1'].builder.failed_builds == 1
    assert agent.hosts['hollow-3'].builder.failed_builds == 0


def test_a_stopped_hosted_host_holds_its_builds_and_heartbeats_no_more(cell):
    agent = cell.add_hollow_agent('hollow', 3)
    eventually(lambda: 'hollow-2' in _compute_services(cell), 'hollow-2 heartbeats')
    agent.stop_host('hollow-2')
    seen = _compute_services(cell)['hollow-2']['report_count']

    instance, _ = cell.boot(['hollow-2'])
    other, _ = cell.boot(['hollow-1'])
    cell.wait_for_state(other.uuid, 'active')
    eventually(lambda: agent.hosts['hollow-2'].held_count == 1,
               'the build waits in the stopped host')
    assert cell.instance(instance.uuid)['vm_state'] == 'building'
    agent.reports.heartbeat()
    assert _compute_services(cell)['hollow-2']['report_count'] == seen
    eventually(lambda: _compute_services(cell)['hollow-1']['report_count'] > 1,
               'the other hosts still heartbeat')

    agent.start_host('hollow-2')
    row = cell.wait_for_state(instance.uuid, 'active')
    assert row['host'] == 'hollow-2'
    assert agent.hosts['hollow-2'].held_count == 0


def test_terminate_names_its_host_and_frees_that_hosts_resources(cell):
    agent = cell.add_hollow_agent('hollow', 3)
    instance, _ = cell.boot(['hollow-3'])
    cell.wait_for_state(instance.uuid, 'active')

    cell.compute.terminate_instance(RequestContext(), 'hollow-3', instance.uuid)

    eventually(lambda: cell.instance(instance.uuid)['vm_state'] == 'deleted',
               'the instance is reported deleted')
    assert agent.hosts['hollow-3'].driver.list_instances() == []
    assert agent.hosts['hollow-3'].builder.local_claims.usage() == {}
    assert cell.allocations(instance.uuid) == {}


def test_an_agent_restarted_with_fewer_hosts_removes_those_without_allocations(cell):
    first = cell.add_hollow_agent('hollow', 5)
    instance, _ = cell.boot(['hollow-5'])
    cell.wait_for_state(instance.uuid, 'active')
    eventually(lambda: len(_compute_services(cell)) == 5, 'five compute services')
    first.service.stop()
    cell.hollow_agents.remove(first)

    cell.add_hollow_agent('hollow', 2)

    def left():
        names = {p.name for p in cell.placement.list_providers(name_prefix='hollow-')}
        return names if names == {'hollow-1', 'hollow-2', 'hollow-5'} else None
    eventually(left, 'hollow-3 and hollow-4 removed from Placement, hollow-5 kept')
    eventually(lambda: set(_compute_services(cell)) == {'hollow-1', 'hollow-2', 'hollow-5'},
               'the service rows of hollow-3 and hollow-4 removed')
    nodes = {compute_nodes.get_node(cell.engine, compute_node_uuid(h, h)) is not None
             for h in ('hollow-3', 'hollow-4')}
    assert nodes == {False}
    # hollow-5 still holds the instance's allocation: kept for the operator.
    assert compute_nodes.get_node(cell.engine, compute_node_uuid('hollow-5', 'hollow-5'))


def test_stopped_hosts_from_the_configuration_stop_and_start_hosts_on_reload(cell, caplog):
    agent = cell.add_hollow_agent('hollow', 3)
    conf = agent.service.conf
    conf.set_override('stopped_hosts', ['hollow-1', 'nosuch'], group='compute')
    agent.service.reload()
    assert [h.running for h in agent.hosts.values()] == [False, True, True]
    assert 'does not serve, ignored: nosuch' in caplog.text

    conf.clear_override('stopped_hosts', group='compute')
    agent.service.reload()
    assert all(h.running for h in agent.hosts.values())


def test_a_build_cast_twice_to_its_host_is_built_once(cell, caplog):
    agent = cell.add_hollow_agent('hollow', 2, settings_for=lambda host: {
        'build_seconds': 0.5})
    instance, spec = cell.boot(['hollow-1', 'hollow-2'])
    host_list = [cell.selection(h, instance.flavor) for h in ('hollow-1', 'hollow-2')]
    # The same cast again while it builds (a redelivery), then once it runs.
    cell.compute.build_and_run_instance(RequestContext(), 'hollow-1', instance, spec,
                                        host_list)
    cell.wait_for_state(instance.uuid, 'active')
    cell.compute.build_and_run_instance(RequestContext(), 'hollow-1', instance, spec,
                                        host_list)
    eventually(lambda: caplog.text.count('this second build of it is ignored') == 2,
               'both repeated casts handled')

    assert [(e.host, e.result) for e in cell.history(instance.uuid)] == [('hollow-1', 'ok')]
    assert agent.hosts['hollow-1'].driver.list_instances() == [instance.uuid]
    assert agent.hosts['hollow-1'].builder.failed_builds == 0
    assert agent.hosts['hollow-2'].driver.list_instances() == []
    assert cell.instance(instance.uuid)['host'] == 'hollow-1'
    assert list(cell.allocations(instance.uuid)) == [agent.hosts['hollow-1'].node_uuid]


class _Requests:
    """A Placement transport that notes each request (method, path) before sending it."""

    def __init__(self, inner):
        self.inner = inner
        self.sent: list[tuple[str, str]] = []

    def request(self, method, path, body=None, microversion=None):
        self.sent.append((method, path))
        if microversion is None:
            return self.inner.request(method, path, body)
        return self.inner.request(method, path, body, microversion)


def test_a_hollow_agent_refreshes_its_providers_from_one_list(cell):
    # A refresh at every report: each report() below is a due one.
    agent = cell.add_hollow_agent('hollow', 4, placement_refresh_interval=0)
    moved = agent.hosts['hollow-2'].node_uuid
    gone = agent.hosts['hollow-3'].node_uuid
    traits = cell.placement.get_traits(moved)
    cell.placement.set_traits(moved, traits | {'CUSTOM_SOMEONE_ELSES'})
    cell.placement.delete_provider(gone)
    requests = _Requests(cell.placement.transport.inner)
    cell.placement.transport.inner = requests
    try:
        agent.reports.report()
        first = list(requests.sent)
        requests.sent.clear()
        agent.reports.report()
        second = list(requests.sent)
    finally:
        cell.placement.transport.inner = requests.inner

    # One list; the provider someone changed read and put back; the one
    # deleted created again; the two others not asked about.
    assert first[0] == ('GET', f'/resource_providers?required={HOLLOW_HOST_TRAIT}')
    assert sorted(first[1:]) == sorted([
        ('GET', f'/resource_providers/{moved}/inventories'),
        ('GET', f'/resource_providers/{moved}/traits'),
        ('PUT', f'/resource_providers/{moved}/traits'),
        ('POST', '/resource_providers'),
        ('PUT', f'/resource_providers/{gone}/inventories'),
        ('PUT', f'/resource_providers/{gone}/traits')])
    assert cell.placement.get_traits(moved) == traits
    assert cell.placement.get_provider(gone) is not None
    # In sync again: the list alone.
    assert second == [('GET', f'/resource_providers?required={HOLLOW_HOST_TRAIT}')]


def test_a_hollow_agent_whose_providers_and_trait_placement_lost_creates_them_again(cell):
    # Placement's database reset, or the providers and then the hollow
    # trait deleted: the list by trait is refused (no such trait), and
    # every host is created again, not left out until a restart.
    agent = cell.add_hollow_agent('lost', 3, placement_refresh_interval=0)
    uuids = [hosted.node_uuid for hosted in agent.hosts.values()]
    for uuid in uuids:
        cell.placement.delete_provider(uuid)
    cell.placement.transport.request('DELETE', f'/traits/{HOLLOW_HOST_TRAIT}')

    agent.reports.report()

    for uuid in uuids:
        assert cell.placement.get_provider(uuid) is not None, uuid
        assert HOLLOW_HOST_TRAIT in cell.placement.get_traits(uuid)
        assert cell.placement.get_inventory(uuid)
