"""The database writes of a boot, alone: the client CPU each transaction costs.

    .venv/bin/python benchmarks/db_writes_bench.py [--instances 1000] [--batch 10]

One process, no broker, on PostgreSQL (the local server, or
``CELLPLANE_TEST_DB_URL``): an API database and a cell database, migrated,
dropped at the end. It runs the code the daemons run for each boot, with
nothing around it, and measures this process's CPU per instance for each
step:

- ``lease``: the super conductor leases and reads the build requests
  (``build_request_leases.lease_and_read``);
- ``cell write``: it writes the instances into their cell
  (``cell_writes.create_many``: instance, build plan, create action,
  schedule event);
- ``place``: it points the mappings at the cell and deletes the build
  requests (``build_requests.place_many``);
- ``report``: the cell conductor applies the agent's ACTIVE report
  (``CellConductorManager.instance_update``).

Each step runs for single boots and for multi-creates of ``--batch``. The
database server's CPU is not counted here (see ``boot_bench.py`` for it).
The machine and its load are printed: it is shared; compare rows of one run,
or runs of two commits made one after the other.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import sys
import time
import uuid as uuidlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine as machine_facts  # the sibling benchmarks/machine.py

from cellplane.context import new_context
from cellplane.db import engines, migrate
from cellplane.objects import build_request_leases, build_requests, cell_mappings
from conductor.cell.manager import CellConductorManager
from conductor.super import cell_writes
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.support import backing_services

STEPS = ('lease', 'cell write', 'place', 'report')


def _selection(host: str, cell_uuid: str) -> Selection:
    return Selection(service_host=host, nodename=host, compute_node_uuid=str(uuidlib.uuid4()),
                     cell_uuid=cell_uuid, allocation_request={'allocations': {}},
                     allocation_request_version='1.39')


def measure(api, cell, cell_uuid: str, instances: int, batch: int) -> dict[str, float]:
    """CPU milliseconds per instance of each step, for boots of ``batch`` instances."""
    flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10)
    spec = RequestSpec(flavor=flavor, project_id='proj', user_id='alice', num_instances=batch)
    holder = build_requests.Lease(host='bench', token=uuidlib.uuid4().hex)
    conductor = CellConductorManager(engine=cell, rescheduler=None, compute=None)
    spent = dict.fromkeys(STEPS, 0.0)
    boots = [[Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                       flavor=flavor, display_name=f'web-{i}') for i in range(batch)]
             for _ in range(instances // batch)]
    for asked in boots:
        build_requests.record(api, asked, spec)   # the API role's part, not timed
    ctxt = new_context()
    for asked in boots:
        uuids = [i.uuid for i in asked]
        started = datetime.datetime.now(datetime.timezone.utc)
        t0 = time.process_time()
        requests = build_request_leases.lease_and_read(api, uuids, holder)
        t1 = time.process_time()
        placed = [(dataclasses.replace(r.instance, host=f'h{n}', node=f'h{n}',
                                       cell_uuid=cell_uuid),
                   [_selection(f'h{n}', cell_uuid), _selection('spare', cell_uuid)])
                  for n, r in enumerate(requests.values())]
        t2 = time.process_time()
        cell_writes.create_many(cell, placed, spec, request_id=ctxt.request_id,
                                scheduling_started=started)
        t3 = time.process_time()
        build_requests.place_many(api, {u: cell_uuid for u in uuids}, holder)
        t4 = time.process_time()
        now = datetime.datetime.now(datetime.timezone.utc)
        for instance, _host_list in placed:
            conductor.instance_update(ctxt, InstanceUpdate(
                instance_uuid=instance.uuid, vm_state=ACTIVE, host=instance.host,
                node=instance.node, launched_at=now, attempt=BuildAttempt(
                    host=instance.host, nodename=instance.node, start=now, finish=now,
                    result='ok', reason='')))
        t5 = time.process_time()
        spent['lease'] += t1 - t0
        spent['cell write'] += t3 - t2
        spent['place'] += t4 - t3
        spent['report'] += t5 - t4
    done = len(boots) * batch
    return {step: 1000 * seconds / done for step, seconds in spent.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--instances', type=int, default=1000, help='per mode (default 1000)')
    parser.add_argument('--batch', type=int, default=10, help='multi-create size (default 10)')
    args = parser.parse_args(argv)
    postgres = backing_services.find_postgres()
    urls = [postgres.create_database('dbwrites-api'), postgres.create_database('dbwrites-cell')]
    api, cell = (engines.create_engine(u) for u in urls)
    try:
        migrate.sync('api', api)
        migrate.sync('cell', cell)
        mapping = cell_mappings.create(api, name='cell1', transport_url='rabbit://x',
                                       database_connection=urls[1])
        rows = {'single': measure(api, cell, mapping.uuid, args.instances, 1),
                f'batch of {args.batch}': measure(api, cell, mapping.uuid, args.instances,
                                                  args.batch)}
    finally:
        api.dispose()
        cell.dispose()
        for url in urls:
            postgres.drop_database(url)
    load = ', '.join(f'{x:.1f}' for x in os.getloadavg())
    print(f'Database writes of a boot - {machine_facts.summary()}; load {load}; '
          f'PostgreSQL, client CPU only, {args.instances} instances per mode')
    print()
    print('| boots | ' + ' | '.join(f'{s} ms/instance' for s in STEPS) + ' | all |')
    print('|---|' + '---|' * (len(STEPS) + 1))
    for name, ms in rows.items():
        print(f'| {name} | ' + ' | '.join(f'{ms[s]:.3f}' for s in STEPS)
              + f' | {sum(ms.values()):.3f} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
