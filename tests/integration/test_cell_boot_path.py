"""The cell side of the boot flow with real daemons: a build fails on one host and lands on its alternate.

Real ``cellplane-placement`` (PostgreSQL), a real cell conductor (PostgreSQL
cell DB) and three real ``cellplane-compute`` daemons on one RabbitMQ vhost.
The test process plays the super conductor: it creates the instance in the
cell DB, claims the first host in Placement and casts
``build_and_run_instance`` with the host list. cmp1's fake driver fails
every build; the cell must reschedule on its own.
"""
from __future__ import annotations

import configparser
import datetime
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import uuid

import pytest

from cellplane.context import RequestContext
from cellplane.db import engines, migrate
from cellplane.objects import instance_actions, instances
from compute_agent.resource_reporter import compute_node_uuid
from compute_agent.rpcapi import ComputeAPI
from placement.client import PlacementClient
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.integration.daemons import EVENTUALLY_SECONDS, cell_conductor_config, compute_config
from tests.support.polling import eventually

# noauth2: the user admin in the project 'service'.
SERVICE_TOKEN = 'admin:service'
CELL_UUID = '00000000-0000-0000-0000-00000000ce11'
HOSTS = ('cmp1', 'cmp2', 'cmp3')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def placement_url(tmp_path, postgres_url_factory):
    """A running cellplane-placement daemon on a fresh PostgreSQL database; its URL."""
    db_url = postgres_url_factory('cell_boot_placement')
    engine = engines.create_engine(db_url)
    try:
        migrate.sync('placement', engine)
    finally:
        engine.dispose()
    port = _free_port()
    config = tmp_path / 'placement.conf'
    config.write_text(
        f'[placement_database]\nconnection = {db_url}\n'
        f'[api]\nauth_strategy = noauth2\n'
        f'bind_host = 127.0.0.1\nbind_port = {port}\nworkers = 1\n')
    base = f'http://127.0.0.1:{port}'
    with open(tmp_path / 'placement.log', 'wb') as log:
        proc = subprocess.Popen(
            [sys.executable, '-m', 'placement.cmd', '--config-file', str(config)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    try:
        def answers() -> bool:
            assert proc.poll() is None, (tmp_path / 'placement.log').read_text()
            try:
                with urllib.request.urlopen(base + '/', timeout=5) as resp:
                    return resp.status == 200
            except (urllib.error.URLError, ConnectionError, OSError):
                return False
        eventually(answers, 'cellplane-placement answers GET /', seconds=EVENTUALLY_SECONDS)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=EVENTUALLY_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _selection(host: str, flavor: Flavor) -> Selection:
    node = compute_node_uuid(host, host)
    return Selection(
        service_host=host, nodename=host, compute_node_uuid=node, cell_uuid=CELL_UUID,
        allocation_request={'allocations': {node: {'resources': {
            'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb,
            'DISK_GB': flavor.root_gb}}}},
        allocation_request_version='1.36')


def _sections_of(path) -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(path)
    return set(parser.sections())


def _start_cell(daemons, cell_url: str, cell_db: str, placement_url: str,
                failures: dict[str, str], hosts=HOSTS):
    """The cell conductor and one compute daemon per host; ``failures``: host -> reason."""
    placement_section = {'endpoint_url': placement_url, 'token': SERVICE_TOKEN}
    conductor_sections = cell_conductor_config(cell_url, cell_db)
    conductor_sections['placement'] = placement_section
    conductor = daemons.conductor('cond1', conductor_sections).start()
    conductor.wait_until_serving()
    computes = []
    for host in hosts:
        sections = compute_config(cell_url, host=host)
        sections['placement'] = placement_section
        sections['compute'] = {'report_interval': 1}
        if host in failures:
            sections['fake_driver'] = {'fail_all': True, 'failure_reason': failures[host]}
        computes.append(daemons.compute(host, sections).start())
    for compute in computes:
        compute.wait_until_serving()
    return conductor, computes


def _wait_until_reported(cell_engine, placement: PlacementClient, hosts) -> None:
    def reported() -> bool:
        with cell_engine.connect() as conn:
            count = conn.exec_driver_sql('SELECT count(*) FROM compute_nodes').scalar()
        return count == len(hosts) and all(
            placement.get_provider(compute_node_uuid(h, h)) for h in hosts)
    eventually(reported,
               'every agent reported its node to Placement and the cell DB', seconds=EVENTUALLY_SECONDS)


def _boot(cell_engine, placement: PlacementClient, transport, hosts) -> Instance:
    """What the super conductor does: create the instance, claim hosts[0], cast the build."""
    flavor = Flavor(name='small', vcpus=2, memory_mb=1024, root_gb=10)
    instance = Instance(uuid=str(uuid.uuid4()), project_id='proj', user_id='user',
                        flavor=flavor, display_name='vm1', cell_uuid=CELL_UUID)
    spec = RequestSpec(flavor=flavor, project_id='proj', user_id='user')
    host_list = [_selection(h, flavor) for h in hosts]
    with cell_engine.begin() as conn:
        instances.create_instance(conn, instance)
    placement.claim(instance.uuid, host_list[0].allocation_request['allocations'],
                    project_id='proj', user_id='user')
    ComputeAPI(transport).build_and_run_instance(
        RequestContext(), hosts[0], instance, spec, host_list)
    return instance


def _wait_for_state(cell_engine, instance_uuid: str, vm_state: str) -> dict:
    def reached():
        with cell_engine.connect() as conn:
            row = instances.get_instance(conn, instance_uuid)
        return row if row['vm_state'] == vm_state else None
    return eventually(reached,
                      f'instance {instance_uuid} goes {vm_state}', seconds=EVENTUALLY_SECONDS)


def test_build_failing_on_the_first_host_goes_active_on_the_alternate(
        daemons, transport_url_factory, cell_db_factory, placement_url,
        client_transport_factory):
    cell_url = transport_url_factory('cell1')
    cell_db = cell_db_factory('cell_boot')
    conductor, computes = _start_cell(daemons, cell_url, cell_db, placement_url,
                                      {'cmp1': 'No more IP addresses'})

    # No upcall by construction: the cell's configs name no API database and
    # no bus but the cell's own vhost; the agents' name no database at all.
    for daemon in [conductor, *computes]:
        parser = configparser.ConfigParser()
        parser.read(daemon.config_path)
        assert 'api_database' not in parser.sections(), daemon.name
        transport_urls = {parser.get(s, 'transport_url') for s in parser.sections()
                          if parser.has_option(s, 'transport_url')}
        assert transport_urls == {cell_url}, daemon.name
    assert not any('database' in _sections_of(c.config_path) for c in computes)

    cell_engine = engines.create_engine(cell_db)
    placement = PlacementClient.over_http(placement_url, token=SERVICE_TOKEN)
    try:
        _wait_until_reported(cell_engine, placement, HOSTS)
        started = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        instance = _boot(cell_engine, placement, client_transport_factory(cell_url), HOSTS)

        row = _wait_for_state(cell_engine, instance.uuid, 'active')
        assert (row['host'], row['node']) == ('cmp2', 'cmp2')
        with cell_engine.connect() as conn:
            history = instance_actions.history(conn, instance.uuid)
        assert [(e.event, e.host, e.node, e.result, e.reason) for e in history] == [
            (instance_actions.EVENT_BUILD, 'cmp1', 'cmp1', 'failed', 'No more IP addresses'),
            (instance_actions.EVENT_BUILD, 'cmp2', 'cmp2', 'ok', None)]
        assert all(started <= e.start <= e.finish for e in history)

        allocations = placement.get_allocations(instance.uuid).allocations
        assert allocations == {compute_node_uuid('cmp2', 'cmp2'): {
            'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
        failed_usages = placement.transport.request(
            'GET', f'/resource_providers/{compute_node_uuid("cmp1", "cmp1")}/usages').body
        assert not any(failed_usages['usages'].values()), failed_usages
    finally:
        cell_engine.dispose()
    conductor.wait_for_log(f'Instance {instance.uuid} is active on cmp2')
    computes[0].wait_for_log(f'Build of instance {instance.uuid} failed: No more IP')


def test_every_host_failing_ends_in_error_with_each_host_and_reason_and_no_allocation(
        daemons, transport_url_factory, cell_db_factory, placement_url,
        client_transport_factory):
    cell_url = transport_url_factory('cell1')
    cell_db = cell_db_factory('cell_boot')
    hosts = ('cmp1', 'cmp2')
    _start_cell(daemons, cell_url, cell_db, placement_url,
                {'cmp1': 'No more IP addresses', 'cmp2': 'Disk image corrupt'}, hosts)
    cell_engine = engines.create_engine(cell_db)
    placement = PlacementClient.over_http(placement_url, token=SERVICE_TOKEN)
    try:
        _wait_until_reported(cell_engine, placement, hosts)
        instance = _boot(cell_engine, placement, client_transport_factory(cell_url), hosts)

        _wait_for_state(cell_engine, instance.uuid, 'error')
        with cell_engine.connect() as conn:
            (fault,) = instances.faults(conn, instance.uuid)
        assert 'cmp1: build failed: No more IP addresses' in fault['details']
        assert 'cmp2: build failed: Disk image corrupt' in fault['details']
        assert placement.get_allocations(instance.uuid).allocations == {}
    finally:
        cell_engine.dispose()
