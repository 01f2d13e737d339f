"""What a conformance run prints: failures, tables per file family and profile, a summary."""
from __future__ import annotations

from collections import defaultdict

from reference_gabbits.expectations import Verdict

# A file's family is the API resource it is about; the rest of its name says
# which microversion, bug or policy profile it covers.
_FAMILIES = ('allocation-candidates', 'allocation', 'aggregate', 'consumer-types',
             'granular', 'inventory', 'reshaper', 'resource-class', 'resource-provider',
             'traits', 'usage', 'microversion')
_PROFILE_SUFFIXES = ('-legacy-rbac', '-secure-rbac', '-policy')


def family_of(file: str) -> str:
    stem = file.removesuffix('.yaml')
    if stem.endswith(_PROFILE_SUFFIXES) or 'cors' in stem or stem == 'confirm-auth':
        return 'auth, policy, cors'
    for family in _FAMILIES:
        if stem.startswith(family):
            return {'allocation': 'allocations',
                    'resource-class': 'resource-classes'}.get(family, family)
    return 'other'


def _counts(verdict: Verdict, key) -> dict[str, list[int]]:
    """key(file) -> [files, passed, expected failures, unexpected failures]."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    files: dict[str, set] = defaultdict(set)
    for file, _ in verdict.passed:
        table[key(file)][1] += 1
        files[key(file)].add(file)
    for file, _, _ in verdict.expected:
        table[key(file)][2] += 1
        files[key(file)].add(file)
    for file, _, _ in verdict.failed:
        table[key(file)][3] += 1
        files[key(file)].add(file)
    for name, row in table.items():
        row[0] = len(files[name])
    return table


def print_table(title: str, table: dict[str, list[int]]) -> None:
    width = max([len(title)] + [len(name) for name in table])
    print(f'{title:<{width}}  files  passed  failed-as-expected  failed')
    for name in sorted(table):
        files, passed, expected, failed = table[name]
        print(f'{name:<{width}}  {files:>5}  {passed:>6}  {expected:>18}  {failed:>6}')


def print_report(verdict: Verdict, profile_of: dict[str, str], seconds: float) -> None:
    for file, name, why in verdict.failed:
        print(f'FAIL {file} :: {name}\n     {why}')
    for entry, why in verdict.stale:
        target = entry.file + (f' :: {entry.test}' if entry.test else '')
        print(f'STALE expected failure (line {entry.line}): {target}: {why}; '
              'remove it from the list')
    print()
    print_table('family', _counts(verdict, family_of))
    print()
    print_table('profile', _counts(verdict, profile_of.get))
    print()
    files = len({f for f, _ in verdict.passed} | {f for f, _, _ in verdict.expected}
                | {f for f, _, _ in verdict.failed})
    print(f'reference gabbits against cellplane-placement: {files} files, '
          f'{len(verdict.passed)} tests passed, {len(verdict.expected)} failed as expected, '
          f'{len(verdict.failed)} failed unexpectedly, {len(verdict.stale)} stale '
          f'expected-failure entries ({seconds:.0f} s)')
