"""CPU of writing and reading one message's payloads, for code trees compared in one run.

    .venv/bin/python benchmarks/payload_codec.py [--trees OLD,NEW] [--rounds 3] [--loops 2000]

The payloads of a move's ``prep_move`` (an Instance, a RequestSpec with a
server group and a requested cell, three Selections) go through
``cellplane.rpc.serializer.PayloadSerializer`` as a cast sends them (each
``to_primitive``) and as a server reads them (each ``from_primitive``:
envelope, version, the compiled schema check, the fields decoded). Each
tree (a path to a checkout; default this one) runs in a child process of
its own with that tree first on ``sys.path``, the trees in turns for
``--rounds`` rounds; the table gives the median microseconds of CPU
(``time.process_time``) per message for each tree. A worktree of an older
commit (``git worktree add /tmp/before COMMIT``) is the usual OLD.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
TREE = HERE.parents[1]

CHILD = r'''
import datetime, json, sys, time, uuid
sys.path.insert(0, sys.argv[1])
from cellplane.rpc.serializer import PayloadSerializer
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import InstanceGroup, RequestedDestination, RequestSpec
from rpc_schemas.selection import Selection

loops = int(sys.argv[2])
ids = iter(str(uuid.UUID(int=n)) for n in range(1, 100))
flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1)
instance = Instance(uuid=next(ids), project_id='p', user_id='u', flavor=flavor,
                    display_name='vm-1', image_properties={'hw_arch': 'x86_64'},
                    host='h1', node='h1', cell_uuid=next(ids), image_ref='img',
                    launched_at=datetime.datetime(2026, 11, 28, tzinfo=datetime.timezone.utc))
spec = RequestSpec(flavor=flavor, project_id='p', user_id='u', image_properties={'a': 'b'},
                   scheduler_hints={'group': ['g']},
                   instance_group=InstanceGroup(uuid=next(ids), policy='anti-affinity',
                                                members=[next(ids), next(ids)]),
                   requested_destination=RequestedDestination(cell_uuid=next(ids)))


def selection():
    node = next(ids)
    return Selection(service_host='h2', nodename='h2', compute_node_uuid=node,
                     cell_uuid=next(ids), allocation_request_version='1.36',
                     allocation_request={'allocations': {node: {'resources': {
                         'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}})


serializer = PayloadSerializer()
message = [instance, spec, [selection() for _ in range(3)]]


def write():
    return [[serializer.serialize_entity(None, p) for p in part] if isinstance(part, list)
            else serializer.serialize_entity(None, part) for part in message]


wire = json.loads(json.dumps(write()))


def read():
    return [[serializer.deserialize_entity(None, p) for p in part] if isinstance(part, list)
            else serializer.deserialize_entity(None, part) for part in wire]


assert read() == message
out = {}
for name, step in (('write', write), ('read', read)):
    started = time.process_time()
    for _ in range(loops):
        step()
    out[name] = (time.process_time() - started) / loops * 1e6
print(json.dumps(out))
'''


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--trees', default=str(TREE),
                        help='comma-separated checkouts to compare (default: this one)')
    parser.add_argument('--rounds', type=int, default=3, help='rounds, the trees in turns')
    parser.add_argument('--loops', type=int, default=2000, help='messages per measurement')
    args = parser.parse_args(argv)
    trees = [str(Path(t).resolve()) for t in args.trees.split(',') if t]
    for tree in trees:
        if not (Path(tree) / 'rpc_schemas').is_dir():
            parser.error(f'--trees: {tree} is not a cellplane checkout (no rpc_schemas/)')
    sys.path.insert(0, str(HERE.parent))
    import machine  # the sibling benchmarks/machine.py
    seen: dict[str, list[dict]] = {tree: [] for tree in trees}
    for round_number in range(args.rounds):
        for tree in trees:
            done = subprocess.run([sys.executable, '-c', CHILD, tree, str(args.loops)],
                                  capture_output=True, text=True, check=False)
            if done.returncode:
                raise SystemExit(f'{tree}: {done.stderr.strip().splitlines()[-1]}')
            seen[tree].append(json.loads(done.stdout))
        print(f'payload_codec: round {round_number + 1} of {args.rounds} done', file=sys.stderr)
    print(f'Payload codec - {machine.summary()}; one prep_move message (Instance, RequestSpec, '
          f'3 Selections), {args.loops} per measurement, median of {args.rounds} rounds\n')
    print('| tree | write (to_primitive) us | read (from_primitive) us |')
    print('|---|---|---|')
    for tree, runs in seen.items():
        print(f'| {tree} | {statistics.median(r["write"] for r in runs):.1f} | '
              f'{statistics.median(r["read"] for r in runs):.1f} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
