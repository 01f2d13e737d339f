"""Where a move's time goes: the steps of each move, from the daemons' logs, as offsets and gaps.

    python benchmarks/move_timeline.py DIR [--move-seconds 1]

``DIR`` holds the daemons' logs of a run (``move_bench.py --keep-logs DIR``).
Each move is followed by its migration (the super conductor's "Scheduling
move M of instance I" names both) through the INFO lines each step logs:

    scheduling     super conductor took the migrate_server cast
    handed         the scheduler's claim came back; move_instance cast to the cell
    prep sent      the cell conductor cast prep_move to the destination
    prepared       the destination promised it; hand_over cast to the source
    copy began     the source's copy began (its end less --move-seconds:
                   the fake driver's copy takes exactly that long)
    copied         the source's copy ended; finish_move cast to the destination
    spawned        the destination runs it; move_finished cast to the cell
    finished       the cell conductor wrote finished (cold) or done (live)
    confirmed      the cell conductor confirmed it (cold, confirm_at_finish)

For each step it prints the median and 90th percentile of its gap from the
step before and of its offset from the move's "scheduling", and, for each
second of the run, how many copies ran: what the agents' handler threads
allowed at once.
"""
from __future__ import annotations

import argparse
import datetime
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

STAMP = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})')
BY_MIGRATION = [
    ('scheduling', re.compile(r'Scheduling move (\S+) of instance (\S+)')),
    ('handed', re.compile(r'Move (\S+) of instance (\S+): \S+ claimed .* handed to cell')),
    ('prep sent', re.compile(r'Move (\S+) of instance (\S+) sent to \S+ \(')),
    ('finished', re.compile(r'Instance (\S+) moved from \S+ to \S+ \(migration (\S+) (\w+)\)')),
    ('confirmed', re.compile(r'Move (\S+) of instance (\S+) confirmed at its finish')),
]
BY_INSTANCE = [
    ('prepared', re.compile(r'Move of instance (\S+) prepared on \S+; asking')),
    ('copied', re.compile(r'Instance (\S+) handed over by \S+ to \S+')),
    ('spawned', re.compile(r'Instance (\S+) moved to \S+$')),
]
STEPS = ['scheduling', 'handed', 'prep sent', 'prepared', 'copy began', 'copied', 'spawned',
         'finished', 'confirmed']


def _time(line: str) -> float | None:
    found = STAMP.match(line)
    if not found:
        return None
    return datetime.datetime.strptime(found.group(1), '%Y-%m-%d %H:%M:%S.%f').timestamp()


def read(directory: Path, move_seconds: float) -> dict[str, dict[str, dict[str, float]]]:
    """Kind (cold, live) -> migration uuid -> step -> when (seconds since the epoch), first logged."""
    kinds: dict[str, str] = {}
    moves: dict[str, dict[str, float]] = defaultdict(dict)
    # An instance may move more than once in a run (cold, then live from
    # where it landed): its steps are matched to each move by time.
    by_instance: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    migrations_of: dict[str, set[str]] = defaultdict(set)
    for log in sorted(directory.glob('*.log')):
        for line in log.read_text(errors='replace').splitlines():
            if ' INFO ' not in line:
                continue
            when = _time(line)
            if when is None:
                continue
            for step, pattern in BY_MIGRATION:
                found = pattern.search(line)
                if found:
                    if step == 'finished':
                        instance, migration = found.group(1), found.group(2)
                        # done: a live migration; finished: a cold one.
                        kinds[migration] = 'live' if found.group(3) == 'done' else 'cold'
                    else:
                        migration, instance = found.group(1), found.group(2)
                    migrations_of[instance].add(migration)
                    moves[migration].setdefault(step, when)
                    break
            else:
                for step, pattern in BY_INSTANCE:
                    found = pattern.search(line)
                    if found:
                        by_instance[found.group(1)][step].append(when)
                        break
    for instance, steps in by_instance.items():
        ordered = sorted((moves[m]['scheduling'], m) for m in migrations_of[instance]
                         if 'scheduling' in moves[m])
        for i, (began, migration) in enumerate(ordered):
            until = ordered[i + 1][0] if i + 1 < len(ordered) else float('inf')
            for step, times in steps.items():
                within = [t for t in times if began <= t < until]
                if within:
                    moves[migration].setdefault(step, min(within))
            if 'copied' in moves[migration]:
                moves[migration].setdefault('copy began',
                                            moves[migration]['copied'] - move_seconds)
    found: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for migration, steps in moves.items():
        if 'scheduling' in steps:
            found[kinds.get(migration, 'unfinished')][migration] = steps
    return found


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def render(moves: dict[str, dict[str, float]]) -> str:
    lines = [f'{len(moves)} moves', '',
             '| step | moves | gap from the step before, median / p90 s '
             '| offset from scheduling, median / p90 s |', '|---|---|---|---|']
    for i, step in enumerate(STEPS):
        gaps, offsets = [], []
        for steps in moves.values():
            if step not in steps:
                continue
            offsets.append(steps[step] - steps['scheduling'])
            before = next((steps[s] for s in reversed(STEPS[:i]) if s in steps), None)
            if before is not None:
                gaps.append(steps[step] - before)
        if not offsets:
            continue
        gap = (f'{statistics.median(gaps):.2f} / {_pct(gaps, 0.9):.2f}' if gaps else '-')
        lines.append(f'| {step} | {len(offsets)} | {gap} | {statistics.median(offsets):.2f} / '
                     f'{_pct(offsets, 0.9):.2f} |')
    copies = [(s['copy began'], s['copied']) for s in moves.values() if 'copied' in s]
    if copies:
        start = min(s['scheduling'] for s in moves.values())
        end = max(e for _, e in copies)
        lines += ['', 'Copies running, by half second from the first scheduling '
                      '(most at once in it):']
        t, row = start, []
        while t < end:
            row.append(str(max(sum(1 for b, e in copies if b <= u < e)
                               for u in (t, t + 0.1, t + 0.2, t + 0.3, t + 0.4))))
            t += 0.5
        lines.append(' '.join(row))
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('directory', type=Path, help='the logs (move_bench.py --keep-logs)')
    parser.add_argument('--move-seconds', type=float, default=1.0,
                        help='the fake driver\'s copy per move in that run (default 1)')
    args = parser.parse_args(argv)
    kinds = read(args.directory, args.move_seconds)
    if not kinds:
        print(f'no moves found in {args.directory}/*.log', file=sys.stderr)
        return 1
    for kind, moves in sorted(kinds.items()):
        print(f'## {kind} moves: ', end='')
        print(render(moves))
        print()
    return 0


if __name__ == '__main__':
    sys.exit(main())
