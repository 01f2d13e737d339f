"""``cellplane failure-domain ...`` over a running embedded control plane, read back from Placement.

Placement is the embedded cloud's own, served over HTTP on 127.0.0.1 for
the command as an operator's would reach it (``[placement] endpoint_url``).
The levels are recorded as a scheduler started with ``[scheduler]
failure_domain_levels = rack,row,room`` records them
(``cellplane-manage failure-domain record-levels``). After every command the
hosts' resource providers are read back from Placement: a domain's
aggregate has exactly its hosts' providers, and other aggregates stay.
"""
from __future__ import annotations

import json
import socket
import threading
import uuid as uuidlib
from wsgiref import simple_server

import pytest

from cellplane.context import new_context
from cellplane_cli import cli, manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from placement.wsgi import make_app
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import InstanceGroup, RequestSpec

H1, H2, H3, H4 = (f'cell1-host{n}' for n in range(1, 5))


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def cloud(tmp_path):
    with EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=4)) as c:
        server = simple_server.make_server('127.0.0.1', 0, make_app(c.placement_engine),
                                           handler_class=_Quiet)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        api = f'[api_database]\nconnection = {c.conf.api_database.connection}\n'
        conf = tmp_path / 'top.conf'
        conf.write_text(f'{api}[placement]\nendpoint_url = http://127.0.0.1:{server.server_port}\n'
                        f'[scheduler]\nfailure_domain_levels = rack, row, room\n')
        c.top_conf = str(conf)
        c.refresher.refresh()   # the scheduler maps the hosts it reads
        try:
            yield c
        finally:
            server.shutdown()
            server.server_close()


@pytest.fixture
def run(cloud, capsys):
    """Run one ``cellplane failure-domain`` command: (exit code, parsed JSON or None, stderr)."""
    assert manage.main(['failure-domain', 'record-levels', '--config-file', cloud.top_conf,
                        '-f', 'json']) == 0

    def _run(*args: str, config: str | None = None):
        capsys.readouterr()
        code = cli.main(['failure-domain', *args, '--config-file', config or cloud.top_conf,
                         '-f', 'json'])
        out, err = capsys.readouterr()
        return code, (json.loads(out) if code == 0 else None), err
    return _run


def aggregates_of(cloud, host: str) -> set[str]:
    return set(cloud.placement.get_aggregates(cloud.computes[host].node_uuid)[0])


def test_racks_and_a_row_made_of_them_are_placement_aggregates_of_their_hosts(cloud, run):
    unrelated = str(uuidlib.uuid4())
    cloud.placement.set_aggregates(cloud.computes[H1].node_uuid, [unrelated])

    code, r1, _ = run('create', 'rack', 'r1', '--host', H1, '--host', H2)
    assert code == 0
    assert (r1['level'], r1['name'], r1['hosts'], r1['own_hosts']) == \
        ('rack', 'r1', [H1, H2], [H1, H2])
    assert r1['placement'] == '2 provider(s) changed'
    r2 = run('create', 'rack', 'r2', '--host', H3)[1]
    code, row, _ = run('create', 'row', 'A', '--contains', 'rack:r1', '--contains', 'rack:r2')
    assert code == 0
    assert (row['hosts'], row['own_hosts'], row['contains']) == \
        ([H1, H2, H3], [], ['rack:r1', 'rack:r2'])

    assert aggregates_of(cloud, H1) == {unrelated, r1['id'], row['id']}
    assert aggregates_of(cloud, H2) == {r1['id'], row['id']}
    assert aggregates_of(cloud, H3) == {r2['id'], row['id']}
    assert aggregates_of(cloud, H4) == set()
    # The scheduler's next host refresh sees them (run now, not waited for).
    cloud.refresher.refresh()
    assert cloud.scheduler.cache.failure_domain_of_host(H1, 'rack') == r1['id']
    assert cloud.scheduler.cache.failure_domain_of_host(H3, 'row') == row['id']
    assert cloud.scheduler.cache.failure_domain_of_host(H4, 'rack') is None

    # A host the rack gains later is in the row too, in Placement as well.
    code, grown, _ = run('add-host', 'rack:r2', H4)
    assert code == 0 and grown['hosts'] == [H3, H4]
    assert aggregates_of(cloud, H4) == {r2['id'], row['id']}
    assert run('show', 'row:A')[1]['hosts'] == [H1, H2, H3, H4]

    code, shrunk, _ = run('remove-host', r1['id'], H1)
    assert code == 0 and shrunk['hosts'] == [H2]
    assert aggregates_of(cloud, H1) == {unrelated}
    assert run('show', 'rack:r1')[1]['contained_in'] == ['row:A']

    code, gone, _ = run('delete', 'row:A')
    assert code == 0 and gone['placement'] == '3 provider(s) changed'
    assert aggregates_of(cloud, H2) == {r1['id']}
    assert aggregates_of(cloud, H4) == {r2['id']}
    assert [(d['level'], d['name']) for d in run('list')[1]] == [('rack', 'r1'), ('rack', 'r2')]


def test_affinity_at_a_rack_asks_placement_for_the_racks_aggregate_and_it_answers(cloud, run):
    run('create', 'rack', 'r1', '--host', H1, '--host', H2)
    r2 = run('create', 'rack', 'r2', '--host', H3, '--host', H4)[1]
    cloud.refresher.refresh()
    group = InstanceGroup(uuid=str(uuidlib.uuid4()), policy='affinity', level='rack',
                          hosts=[H3])
    spec = RequestSpec(flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1),
                       project_id='p', user_id='u', instance_group=group)
    instance = str(uuidlib.uuid4())

    (chosen,) = cloud.scheduler.manager.select_destinations(new_context(), spec, [instance], 3)

    # Placement itself offered only the rack's hosts: its aggregate has them.
    assert {s.service_host for s in chosen} == {H3, H4}
    trace = cloud.traces[-1]
    assert ('member_of', f'in:{r2["id"]}') in trace.query
    assert trace.candidate_hosts == 2
    assert trace.request['instance_group'] == {
        'uuid': group.uuid, 'policy': 'affinity', 'level': 'rack', 'member_of': [r2['id']]}
    cloud.placement.unclaim(instance)


def test_a_row_gains_and_loses_a_rack_later_with_its_hosts_in_placement(cloud, run):
    r1 = run('create', 'rack', 'r1', '--host', H1)[1]
    r2 = run('create', 'rack', 'r2', '--host', H2, '--host', H3)[1]
    row = run('create', 'row', 'A', '--contains', 'rack:r1')[1]

    code, grown, _ = run('add-domain', 'row:A', 'rack:r2')
    assert code == 0
    assert (grown['hosts'], grown['contains']) == ([H1, H2, H3], ['rack:r1', 'rack:r2'])
    assert grown['placement'] == '2 provider(s) changed'
    assert aggregates_of(cloud, H3) == {r2['id'], row['id']}

    code, shrunk, _ = run('remove-domain', 'row:A', 'rack:r1')
    assert code == 0 and shrunk['hosts'] == [H2, H3]
    assert aggregates_of(cloud, H1) == {r1['id']}
    # Out of the row, the rack can be deleted once it has no hosts.
    run('remove-host', 'rack:r1', H1)
    assert run('delete', 'rack:r1')[0] == 0
    assert aggregates_of(cloud, H1) == set()


def test_list_by_level_and_the_recorded_levels(run):
    run('create', 'rack', 'r1', '--host', H1)
    run('create', 'room', 'east', '--contains', 'rack:r1')
    assert [d['name'] for d in run('list', '--level', 'room')[1]] == ['east']
    assert run('list', '--level', 'row')[1] == []
    assert [(lv['position'], lv['level']) for lv in run('levels')[1]] == \
        [(1, 'rack'), (2, 'row'), (3, 'room')]


@pytest.mark.parametrize('args, said', [
    (('create', 'pod', 'p1'), "unknown failure-domain level 'pod'; the scheduler uses "
                              "rack, row, room"),
    (('list', '--level', 'pod'), "unknown failure-domain level 'pod'"),
    (('add-host', 'rack:r2', H1), f'host {H1} would be in rack:r1 and in rack:r2; a host '
                                  f'is in at most one rack'),
    (('create', 'rack', 'r7', '--host', H1), f'host {H1} would be in rack:r1 and in '
                                             f'rack:r7'),
    (('add-host', 'row:B', H1), f'host {H1} would be in row:A (through rack:r1) and in '
                                f'row:B; a host is in at most one row'),
    (('create', 'rack', 'r9', '--contains', 'row:A'),
     'rack:r9 cannot contain row:A: a rack is made of smaller levels only'),
    (('create', 'row', 'C', '--contains', 'rack:r1'),
     'rack:r1 is already in row:A; a domain is in at most one row'),
    (('delete', 'rack:r1'), 'rack:r1 is part of row:A, whose hosts would change; take '
                            'it out first (`cellplane failure-domain remove-domain row:A '
                            'rack:r1`)'),
    (('add-domain', 'row:B', 'rack:r1'), 'rack:r1 is already in row:A'),
    (('add-domain', 'row:A', 'rack:r3'), f'host {H4} would be in row:A (through rack:r3) '
                                         f'and in row:B; a host is in at most one row'),
    (('add-host', 'rack:r1', H2), f'host {H2} would be in row:A (through rack:r1) and in '
                                  f'row:B'),
    (('remove-domain', 'row:A', 'rack:r2'), 'row:A does not contain rack:r2'),
    (('delete', 'rack:r2'), f'rack:r2 still has host(s) {H3}; remove them first'),
    (('add-host', 'rack:r1', 'nosuchhost'), "no compute host 'nosuchhost' is mapped"),
    (('remove-host', 'row:A', H1), f'not among the own hosts of row:A; {H1} (through '
                                   f'rack:r1): remove it from that domain'),
    (('show', 'rack:nope'), "no failure domain 'rack:nope'"),
    (('create', 'rack', 'r1'), 'failure domain rack:r1 exists'),
])
def test_refusals_say_why_and_change_nothing(cloud, run, args, said):
    run('create', 'rack', 'r1', '--host', H1)
    run('create', 'rack', 'r2', '--host', H3)
    run('create', 'row', 'A', '--contains', 'rack:r1')
    run('create', 'rack', 'r3', '--host', H4)
    run('create', 'row', 'B', '--host', H2, '--host', H4)
    before = run('list')[1]
    placement_before = {h: aggregates_of(cloud, h) for h in (H1, H2, H3, H4)}

    code, _, err = run(*args)

    assert code == 1
    # The reason is one line (in-process, cliff's log handlers of earlier
    # tests may print before it).
    assert said in err.strip().splitlines()[-1]
    assert run('list')[1] == before
    assert {h: aggregates_of(cloud, h) for h in (H1, H2, H3, H4)} == placement_before


def test_a_malformed_contains_is_a_usage_error_in_one_line(run, capsys):
    with pytest.raises(SystemExit) as exited:
        run('create', 'row', 'A', '--contains', 'r1')
    assert exited.value.code == 2
    assert "expected LEVEL:NAME, got 'r1'" in capsys.readouterr().err.strip().splitlines()[-1]


def test_placement_unreachable_keeps_the_database_change_and_sync_repairs(
        cloud, run, tmp_path):
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        closed_port = probe.getsockname()[1]
    down = tmp_path / 'down.conf'
    down.write_text(f'[api_database]\nconnection = {cloud.conf.api_database.connection}\n'
                    f'[placement]\nendpoint_url = http://127.0.0.1:{closed_port}\n'
                    f'retry_timeout = 0\nconnect_attempts = 1\n')

    code, _, err = run('create', 'rack', 'r1', '--host', H1, config=str(down))

    assert code == 1
    assert 'Placement not updated' in err and 'failure-domain sync' in err
    rack = run('show', 'rack:r1')[1]
    assert rack['hosts'] == [H1]
    assert aggregates_of(cloud, H1) == set()

    code, synced, _ = run('sync')
    assert code == 0 and synced['placement'] == '1 provider(s) changed'
    assert aggregates_of(cloud, H1) == {rack['id']}

    # A delete that cannot reach Placement deletes nothing: run again later.
    row = run('create', 'row', 'A', '--contains', 'rack:r1')[1]
    code, _, err = run('delete', 'row:A', config=str(down))
    assert code == 1 and 'row:A not deleted' in err
    assert run('show', 'row:A')[0] == 0
    assert aggregates_of(cloud, H1) == {rack['id'], row['id']}
