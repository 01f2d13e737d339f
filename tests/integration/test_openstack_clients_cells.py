"""python-openstackclient, unmodified, against two cells, one of whose databases goes away; and ``openstack usage``.

One deployment for the module: two cells of one hollow agent each, cell2's
host in the zone ``az-two`` and cell1's in none (so in ``nova``, Nova's
default zone, which is how a boot is steered into cell1), ``cellplane-api``
with the session's Keystone, and cell1's database reached through a TCP
proxy of this test's own (``Deployment(proxied_databases=...)``), as
``test_database_faults.py`` does: stopping it drops every connection to
that database and refuses new ones without touching the PostgreSQL server
other tests share.

- ``openstack usage list`` (admin) and ``usage show`` (a project's member)
  read os-simple-tenant-usage over both cells.
- With cell1's database unreachable, ``openstack server list --long
  --all-projects`` at 2.69 shows cell1's server UNKNOWN and cell2's as
  usual; below 2.69 cell1's server is left out, as Nova does.
"""
from __future__ import annotations

import datetime

import pytest
import requests

from tests.support.clients import Openstack, sdk
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.keystone import ADMIN, MEMBER_A

IMAGES = """images:
  - id: 5d2c8b1e-6a4f-4e3d-8c7b-9a0f1e2d3c4b
    name: cirros
    disk_format: qcow2
"""
FLAVOR = 'cells-small'
ZONE_TWO = 'az-two'


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server, keystone):
    computes = [ComputePlan('cell1-osc', 'cell1', hosted_hosts=1),
                ComputePlan('cell2-osc', 'cell2', hosted_hosts=1)]
    deployment = Deployment(tmp_path_factory.mktemp('openstack-clients-cells'), rabbit_server,
                            postgres_server, computes, compute_api=True, keystone=keystone,
                            images=IMAGES, placement_workers=1,
                            proxied_databases=('cell1',)).create()
    try:
        deployment.cli('aggregate', 'create', ZONE_TWO, '--zone', ZONE_TWO)
        deployment.cli('aggregate', 'add-host', ZONE_TWO, computes[1].hosts[0])
        created = requests.post(deployment.compute_api_url + '/v2.1/flavors', json={'flavor': {
            'name': FLAVOR, 'ram': 128, 'vcpus': 2, 'disk': 1}},
            headers={'X-Auth-Token': keystone.token(ADMIN)}, timeout=30)
        assert created.status_code == 200, created.text
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def servers(deployment):
    """One server of project-a in each cell: ``{"one": id, "two": id}`` (cell1, cell2)."""
    alice = Openstack(deployment, MEMBER_A)
    ids = {}
    for name, zone in (('one', 'nova'), ('two', ZONE_TWO)):
        ids[name] = alice('server', 'create', '--flavor', FLAVOR, '--image', 'cirros',
                          '--availability-zone', zone, '--wait', name)['id']
    return ids


def test_servers_boot_into_nova_and_into_an_aggregate_zone(deployment, servers):
    admin = Openstack(deployment, ADMIN)
    listed = {s['Name']: s for s in admin('server', 'list', '--long', '--all-projects')}
    assert {n: (s['Status'], s['Availability Zone'], s['Host']) for n, s in listed.items()} == {
        'one': ('ACTIVE', 'nova', deployment.computes[0].hosts[0]),
        'two': ('ACTIVE', ZONE_TWO, deployment.computes[1].hosts[0])}


def test_usage_list_and_show_through_openstackclient(deployment, servers, keystone):
    admin, alice = Openstack(deployment, ADMIN), Openstack(deployment, MEMBER_A)
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    tomorrow = (now + datetime.timedelta(days=1)).strftime('%Y-%m-%d')
    window = ('--start', '2020-01-01', '--end', tomorrow)
    (usage,) = admin('usage', 'list', *window)
    assert usage['Project'] in ('project-a', keystone.project_id(MEMBER_A)), usage
    # With -f json the Servers column is the servers' usages themselves.
    assert sorted(s['name'] for s in usage['Servers']) == ['one', 'two'], usage
    assert float(usage['CPU Hours']) > 0, usage
    shown = alice('usage', 'show', *window)
    assert sorted(s['name'] for s in shown['Servers']) == ['one', 'two'], shown
    status, err = alice.fails('usage', 'list', *window)
    assert status == 1 and 'os_compute_api:os-simple-tenant-usage:list' in err, err
    # The SDK reads the same: both cells' servers, each with its flavor.
    conn = sdk(deployment, ADMIN)
    usage = conn.compute.get_usage(keystone.project_id(MEMBER_A),
                                   start=datetime.datetime(2020, 1, 1),
                                   end=now)
    assert sorted((s['name'], s['vcpus']) for s in usage.server_usages) == [
        ('one', 2), ('two', 2)]


def test_server_list_with_a_cell_database_unreachable(deployment, servers):
    admin = Openstack(deployment, ADMIN)
    proxy = deployment.database_proxies['cell1']
    proxy.stop()
    try:
        at_269 = {s['ID']: s for s in admin('--os-compute-api-version', '2.69', 'server',
                                            'list', '--long', '--all-projects')}
        below = {s['ID']: s for s in admin('--os-compute-api-version', '2.68', 'server',
                                           'list', '--long', '--all-projects')}
    finally:
        proxy.start()
    assert set(at_269) == {servers['one'], servers['two']}
    assert at_269[servers['one']]['Status'] == 'UNKNOWN'
    assert (at_269[servers['two']]['Status'], at_269[servers['two']]['Name']) == (
        'ACTIVE', 'two')
    assert set(below) == {servers['two']}
    assert below[servers['two']]['Status'] == 'ACTIVE'
    # Once the database is back, cell1's server is itself again.
    conn = sdk(deployment, ADMIN)
    back = conn.compute.wait_for_server(conn.compute.get_server(servers['one']),
                                        interval=0.5, wait=EVENTUALLY_SECONDS)
    assert back.status == 'ACTIVE'
