"""python-openstackclient and openstacksdk, unmodified, against the live daemons and a real Keystone.

One deployment for the module (a cell, a hollow agent serving two hosts,
one of them in the zone ``az-osc``, whose fake drivers copy a moving server
for ``MOVE_SECONDS``, so that a live migration is seen in progress), ``cellplane-api`` with an image
catalog of one image, and the session's Keystone
(``tests/support/keystone.py``) holding the deployment's region: the
compute API, its image catalog at ``/image`` and Keystone itself. The
clients know only the Keystone URL, a user and the region
(``tests/support/clients.py``): they find everything else in the token's
catalog, as against any OpenStack cloud.

``openstack`` runs as a subprocess (about 1.5 s of start-up each), so each
test batches its commands; the SDK runs in-process.
"""
from __future__ import annotations

import os
import signal
import time

import openstack
import pytest
import requests

from tests.support.clients import Openstack, sdk
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.keystone import ADMIN, MEMBER_A, MEMBER_B, READER_A

CIRROS = '7f1c4a8e-2b3d-4c5e-9f60-718293a4b5c6'
IMAGES = f"""images:
  - id: {CIRROS}
    name: cirros
    disk_format: qcow2
    properties: {{os_distro: cirros}}
"""
FLAVOR = 'osc-small'
ZONE = 'az-osc'
# Long enough that a live migration is never over by itself while a test looks at it.
MOVE_SECONDS = 600


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server, keystone):
    plan = ComputePlan('cell1-osc', 'cell1', hosted_hosts=2,
                       fake_driver={'move_seconds': MOVE_SECONDS})
    deployment = Deployment(tmp_path_factory.mktemp('openstack-clients'), rabbit_server,
                            postgres_server, [plan], compute_api=True, keystone=keystone,
                            images=IMAGES, placement_workers=1).create()
    try:
        deployment.cli('aggregate', 'create', ZONE, '--zone', ZONE)
        deployment.cli('aggregate', 'add-host', ZONE, plan.hosts[1])
        created = requests.post(deployment.compute_api_url + '/v2.1/flavors', json={'flavor': {
            'name': FLAVOR, 'ram': 128, 'vcpus': 1, 'disk': 1}},
            headers={'X-Auth-Token': keystone.token(ADMIN)}, timeout=30)
        assert created.status_code == 200, created.text
        yield deployment
    finally:
        deployment.destroy()


def test_flavors_through_openstackclient(deployment):
    # The administrator's commands run the installed ``openstack`` script
    # itself, as a shell would; the others are forked (tests/support/cli_runner.py).
    admin = Openstack(deployment, ADMIN, console=True)
    alice = Openstack(deployment, MEMBER_A)
    created = admin('flavor', 'create', '--ram', '256', '--vcpus', '2', '--disk', '2', 'osc-tmp')
    assert (created['name'], created['ram'], created['vcpus'], created['disk'],
            created['os-flavor-access:is_public']) == ('osc-tmp', 256, 2, 2, True)
    admin('flavor', 'set', '--property', 'hw:cpu_policy=shared', 'osc-tmp', json_output=False)
    shown = alice('flavor', 'show', 'osc-tmp')
    assert (shown['id'], shown['properties']) == (created['id'], {'hw:cpu_policy': 'shared'})

    status, err = alice.fails('flavor', 'create', '--ram', '1', '--vcpus', '1', 'not-mine')
    assert status == 1 and 'os_compute_api:os-flavor-manage:create' in err, err
    admin('flavor', 'delete', 'osc-tmp', json_output=False)
    assert {f['Name'] for f in alice('flavor', 'list')} == {FLAVOR}


def _active(conn, name: str) -> openstack.compute.v2.server.Server:
    server = conn.compute.find_server(name, ignore_missing=False)
    return conn.compute.wait_for_server(server, interval=0.3, wait=EVENTUALLY_SECONDS)


def test_servers_through_openstackclient(deployment, keystone):
    alice, bob = Openstack(deployment, MEMBER_A), Openstack(deployment, MEMBER_B)
    admin, rita = Openstack(deployment, ADMIN), Openstack(deployment, READER_A)
    one = alice('server', 'create', '--flavor', FLAVOR, '--image', 'cirros', '--wait', 'one')
    assert (one['status'], one['image']) == ('ACTIVE', f'cirros ({CIRROS})')
    # "NAME (ID)" below 2.47; from 2.47 the server's own copy, named original_name.
    flavor = one['flavor']
    assert (flavor['original_name'] if isinstance(flavor, dict)
            else flavor.split(' (')[0]) == FLAVOR, flavor
    assert one['project_id'] == keystone.project_id(MEMBER_A)
    alice('server', 'create', '--flavor', FLAVOR, '--image', 'cirros', '--min', '2',
          '--max', '2', 'many')
    zoned = alice('server', 'create', '--flavor', FLAVOR, '--image', CIRROS,
                  '--availability-zone', ZONE, 'zoned')
    conn = sdk(deployment, MEMBER_A)
    for name in ('many-1', 'many-2', 'zoned'):
        _active(conn, name)

    listed = {s['Name']: s for s in rita('server', 'list', '--long')}
    assert set(listed) == {'one', 'many-1', 'many-2', 'zoned'}
    assert {s['Image Name'] for s in listed.values()} == {'cirros'}
    # The column is "Flavor Name" below 2.47, "Flavor" (the server's copy's name) from it.
    assert {s.get('Flavor Name', s.get('Flavor')) for s in listed.values()} == {FLAVOR}
    # The host is shown to admins only, as in Nova.
    assert (listed['zoned']['Availability Zone'], listed['zoned']['Host']) == (ZONE, None)
    shown = rita('server', 'show', zoned['id'])
    assert (shown['status'], shown['OS-EXT-AZ:availability_zone']) == ('ACTIVE', ZONE)

    everyone = {s['Name']: s for s in admin('server', 'list', '--all-projects', '--long')}
    assert set(everyone) >= set(listed)
    assert everyone['zoned']['Host'] == deployment.computes[0].hosts[1]
    assert bob('server', 'list') == []
    status, err = bob.fails('server', 'show', zoned['id'])
    assert status == 1 and 'No Server found' in err, err

    alice('server', 'delete', '--wait', 'one', 'many-1', 'many-2', 'zoned', json_output=False)
    assert conn.list_servers() == []


def test_servers_through_openstacksdk(deployment):
    conn, other = sdk(deployment, MEMBER_A), sdk(deployment, MEMBER_B)
    image = conn.image.find_image('cirros', ignore_missing=False)
    assert (image.id, image.disk_format, image.os_distro) == (
        CIRROS, 'qcow2', 'cirros')
    flavor = conn.compute.find_flavor(FLAVOR, ignore_missing=False)

    server = conn.compute.create_server(name='sdk', image_id=image.id, flavor_id=flavor.id,
                                        networks=[])
    server = conn.compute.wait_for_server(server, interval=0.3, wait=EVENTUALLY_SECONDS)
    assert (server.status, server.image.id) == ('ACTIVE', CIRROS)
    # The flavor's id below 2.47, its name (original_name) from 2.47.
    assert server.flavor.id == flavor.id or server.flavor.name == FLAVOR, server.flavor
    with pytest.raises(openstack.exceptions.NotFoundException):
        other.compute.get_server(server.id)

    # The cloud layer, by names (its wait_for_server wants an IP address,
    # which no server has without a network service: see README).
    by_name = conn.create_server('sdk-cloud', image='cirros', flavor=FLAVOR, wait=False)
    assert by_name.status == 'BUILD'
    assert {s.name for s in conn.list_servers()} >= {'sdk', 'sdk-cloud'}
    assert conn.delete_server('sdk-cloud', wait=True, timeout=EVENTUALLY_SECONDS)

    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, interval=0.3, wait=EVENTUALLY_SECONDS)
    assert {s.name for s in conn.list_servers()} & {'sdk', 'sdk-cloud'} == set()


def test_groups_events_and_the_operators_commands_through_openstackclient(deployment):
    alice, admin = Openstack(deployment, MEMBER_A), Openstack(deployment, ADMIN)
    group = alice('server', 'group', 'create', '--policy', 'anti-affinity', '--rule',
                  'max_server_per_host=2', 'osc-group')
    assert (group['policy'], group['rules']) == ('anti-affinity', {'max_server_per_host': 2})
    alice('server', 'create', '--flavor', FLAVOR, '--image', 'cirros', '--hint',
          f'group={group["id"]}', '--min', '3', '--max', '3', 'grouped')
    conn = sdk(deployment, MEMBER_A)
    members = [_active(conn, f'grouped-{n}') for n in (1, 2, 3)]
    shown = alice('server', 'group', 'show', 'osc-group')
    assert sorted(shown['members']) == sorted(s.id for s in members)
    assert [g['Name'] for g in alice('server', 'group', 'list')] == ['osc-group']

    [action] = alice('server', 'event', 'list', members[0].id)
    assert action['Action'] == 'create'
    event = alice('server', 'event', 'show', members[0].id, action['Request ID'])
    assert {e['event'] for e in event['events']} >= {'compute_build_and_run_instance'}
    assert {e['result'] for e in event['events']} == {'Success'}

    zones = {z['Zone Name'] for z in alice('availability', 'zone', 'list', '--compute')}
    assert ZONE in zones
    hosts = deployment.computes[0].hosts
    hypervisors = {h['Hypervisor Hostname']: h for h in admin('hypervisor', 'list')}
    assert set(hypervisors) == set(hosts)
    usage = admin('hypervisor', 'show', hosts[0])
    assert (usage['hypervisor_hostname'], usage['state']) == (hosts[0], 'up')

    admin('compute', 'service', 'set', '--disable', '--disable-reason', 'osc maintenance',
          hosts[0], 'cellplane-compute', json_output=False)
    services = {s['Host']: s for s in admin('compute', 'service', 'list', '--long')}
    assert (services[hosts[0]]['Status'], services[hosts[0]]['Disabled Reason']) == (
        'disabled', 'osc maintenance')
    admin('compute', 'service', 'set', '--enable', hosts[0], 'cellplane-compute',
          json_output=False)
    assert admin('compute', 'service', 'list', '--host', hosts[0])[0]['Status'] == 'enabled'

    project_a = deployment.keystone.project_id(MEMBER_A)
    admin('quota', 'set', '--instances', '7', '--cores', '9', project_a, json_output=False)
    quotas = {q['Resource']: q['Limit'] for q in alice('quota', 'show', '--compute')}
    assert (quotas['instances'], quotas['cores']) == (7, 9)
    limits = {row['Name']: row['Value'] for row in alice('limits', 'show', '--absolute')}
    assert (limits['instances'], limits['instances_used']) == (7, 3)

    for server in members:
        conn.compute.delete_server(server)
    for server in members:
        conn.compute.wait_for_delete(server, interval=0.3, wait=EVENTUALLY_SECONDS)
    alice('server', 'group', 'delete', 'osc-group', json_output=False)
    assert alice('server', 'group', 'list') == []


def test_evacuate_through_openstackclient(deployment):
    """``openstack server evacuate``, unmodified: refused while the host is up, done once it is down."""
    admin = Openstack(deployment, ADMIN)
    admin('server', 'create', '--flavor', FLAVOR, '--image', 'cirros', '--wait', 'evac')
    source = admin('server', 'show', 'evac')['OS-EXT-SRV-ATTR:host']
    [other] = [h for h in deployment.computes[0].hosts if h != source]
    status, err = admin.fails('server', 'evacuate', 'evac')
    assert status == 1 and f'Compute service of {source} is still in use' in err, err

    # The host dies (stopped alone in its hollow agent) and is forced down.
    conf = deployment.config('compute-cell1-osc.conf')
    original = conf.read_text()
    pid = deployment.pid('compute-cell1-osc')
    conf.write_text(original.replace('[compute]\n', f'[compute]\nstopped_hosts = {source}\n'))
    os.kill(pid, signal.SIGHUP)
    try:
        admin('compute', 'service', 'set', '--down', source, 'cellplane-compute',
              json_output=False)
        # Without --wait: python-openstackclient 10.5's waits for 'ACTIVE'
        # among lower-cased statuses, so it never ends (against Nova too).
        moved = admin('server', 'evacuate', 'evac')
        deadline = time.monotonic() + EVENTUALLY_SECONDS
        while (shown := admin('server', 'show', 'evac'))['status'] != 'ACTIVE':
            assert time.monotonic() < deadline, f'still {shown["status"]}'
            time.sleep(1)
        assert shown['OS-EXT-SRV-ATTR:host'] == other
    finally:
        conf.write_text(original)
        os.kill(pid, signal.SIGHUP)
        admin('compute', 'service', 'set', '--up', source, 'cellplane-compute',
              json_output=False)
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while [m['status'] for m in deployment.cli('server', 'migration', 'list', '--server',
                                                moved['id'])] != ['completed']:
        assert time.monotonic() < deadline, 'the returning host never cleaned up'
        time.sleep(0.5)
    admin('server', 'delete', '--wait', 'evac', json_output=False)


def _copying(conn, server_id: str):
    """The server's live migration, once its source copies it (the admin's SDK connection)."""
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        found = [m for m in conn.compute.server_migrations(server_id)
                 if m.status == 'migrating']
        if found:
            return found[0]
        assert time.monotonic() < deadline, 'the live migration never began its copy'
        time.sleep(0.3)


def _migration_status(admin, server_id: str, migration_uuid: str, wanted: str) -> dict:
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        [row] = [m for m in admin('server', 'migration', 'list', '--server', server_id)
                 if m['UUID'] == migration_uuid]
        if row['Status'] == wanted:
            return row
        assert time.monotonic() < deadline, row
        time.sleep(0.5)


def test_migrations_listed_aborted_and_forced_through_openstackclient(deployment):
    alice, admin = Openstack(deployment, MEMBER_A), Openstack(deployment, ADMIN)
    conn = sdk(deployment, ADMIN)
    server = alice('server', 'create', '--flavor', FLAVOR, '--image', 'cirros', '--wait',
                   'moving')
    source = admin('server', 'show', server['id'])['OS-EXT-SRV-ATTR:host']
    admin('server', 'migrate', '--live-migration', server['id'], json_output=False)
    live = _copying(conn, server['id'])

    [listed] = admin('server', 'migration', 'list', '--server', server['id'])
    assert (str(listed['Id']), listed['UUID'], listed['Status'], listed['Type']) == (
        str(live.id), live.uuid, 'migrating', 'live-migration')
    assert listed['Source Compute'] == source and listed['Dest Compute'] != source
    # By uuid: openstackclient lists the server's migrations. (By id, the pinned
    # openstackclient 10.5.0 hands openstacksdk 4.22 the server and the
    # migration the other way round and asks /servers/{id}/migrations/{server}.)
    shown = admin('server', 'migration', 'show', server['id'], listed['UUID'])
    assert (str(shown['ID']), shown['Status']) == (str(live.id), 'migrating')
    status, err = alice.fails('server', 'migration', 'list')
    assert status == 1 and 'os_compute_api:os-migrations:index' in err, err

    admin('server', 'migration', 'abort', server['id'], listed['UUID'], json_output=False)
    _migration_status(admin, server['id'], listed['UUID'], 'cancelled')
    after = admin('server', 'show', server['id'])
    assert (after['status'], after['OS-EXT-SRV-ATTR:host']) == ('ACTIVE', source)

    admin('server', 'migrate', '--live-migration', server['id'], json_output=False)
    again = _copying(conn, server['id'])
    admin('server', 'migration', 'force', 'complete', server['id'], str(again.id),
          json_output=False)
    done = _migration_status(admin, server['id'], again.uuid, 'done')
    moved = admin('server', 'show', server['id'])
    assert moved['OS-EXT-SRV-ATTR:host'] == done['Dest Compute'] != source
    alice('server', 'delete', '--wait', 'moving', json_output=False)
