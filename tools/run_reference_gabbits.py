"""Run the reference Placement's own gabbi HTTP tests against cellplane-placement.

    .venv/bin/python tools/run_reference_gabbits.py [--reference-venv DIR] [YAML ...]
    .venv/bin/python tools/run_reference_gabbits.py --in-process [YAML ...]

The YAML files, the data fixtures' source and gabbi come from a venv with
the reference installed (``--reference-venv``; tools/reference-placement/
conformance.sh builds .venv-reference from the pins in
tools/reference-placement/requirements.txt, then runs this).

By default every file runs against a live ``cellplane-placement``, started
with a config file on a fresh PostgreSQL database once per profile (the
server configuration a file's fixtures ask for: legacy, secure, open,
cors; reference_gabbits/profiles.py, live_daemon.py), its data removed
between files.
The PostgreSQL server is the one ``--postgres-admin-url`` names (default
``$CELLPLANE_TEST_DB_URL``, else postgres@127.0.0.1:5432 with trust auth).
``--in-process`` runs the legacy-profile files against the WSGI app on a
fresh SQLite copy per file instead (seconds; for development). The list
describes the live run: in-process, a test only a live server fails
(basic-http's non-integer Content-Length) passes and is reported stale.

Each outcome is judged against tools/reference-placement/expected-failures.txt
(reference_gabbits/expectations.py). Exit status 1 on any unexpected
failure, or with ``--strict`` on any stale entry of that list; 2 when the
daemon cannot be run.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, 'reference-placement', 'expected-failures.txt')
DEFAULT_ADMIN_URL = 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres'


def _site_packages(venv: str) -> str:
    found = glob.glob(os.path.join(venv, 'lib', 'python3*', 'site-packages'))
    if not found:
        sys.exit(f'no site-packages under {venv}: build the reference venv first '
                 '(tools/reference-placement/conformance.sh)')
    return found[0]


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('files', nargs='*', metavar='YAML',
                        help='reference YAML files to run (default: all)')
    parser.add_argument('--reference-venv', default=os.environ.get(
        'REFERENCE_VENV', os.path.join(REPO, '.venv-reference')),
        help='a venv with the reference installed (default: $REFERENCE_VENV, '
             'else .venv-reference, which conformance.sh builds)')
    parser.add_argument('--in-process', action='store_true',
                        help='our WSGI app in this process on SQLite (legacy profile only)')
    parser.add_argument('--postgres-admin-url', default=os.environ.get(
        'CELLPLANE_TEST_DB_URL', DEFAULT_ADMIN_URL),
        help='a PostgreSQL URL allowed to CREATE DATABASE')
    parser.add_argument('--expected', default=EXPECTED,
                        help='the expected-failure list')
    parser.add_argument('--strict', action='store_true',
                        help='fail on stale expected-failure entries too')
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    site = os.environ.get('REFERENCE_SITE_PACKAGES') or _site_packages(args.reference_venv)
    # The reference's site-packages has a 'placement' package too: this
    # repository's goes first (an editable install's finder comes after
    # every sys.path entry), the reference's last, for gabbi and its kin.
    sys.path.insert(0, REPO)
    sys.path.append(site)
    from reference_gabbits import expectations, fixtures, in_process, live_daemon, profiles, report

    functional = os.path.join(site, 'placement', 'tests', 'functional')
    gabbits = os.path.join(functional, 'gabbits')
    known = sorted(n for n in os.listdir(gabbits) if n.endswith('.yaml'))
    names = args.files or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        sys.exit(f'not reference YAML files: {", ".join(unknown)}')
    with open(args.expected) as f:
        entries = expectations.parse(f.read())
    module = fixtures.load(functional)
    profile_of = {name: profiles.profile_of(os.path.join(gabbits, name), module)
                  for name in names}

    began = time.monotonic()
    outcomes: dict[str, list] = {}
    workdir = tempfile.mkdtemp(prefix='reference-gabbits-')
    try:
        for profile in profiles.PROFILES:
            files = [name for name in names if profile_of[name] == profile]
            if not files:
                continue
            if args.in_process:
                if profile != 'legacy':
                    print(f'-- {profile}: {len(files)} files not run (in-process serves '
                          'the legacy profile only)')
                    continue
                target = in_process.InProcess()
                _run_files(target, files, gabbits, module, outcomes)
                continue
            policy_file = None
            if profile == 'open':
                policy_file = os.path.join(workdir, 'open-policy.yaml')
                with open(policy_file, 'w') as f:
                    f.write(profiles.open_policy(_reference_rules(args.reference_venv)))
            daemon = live_daemon.LiveDaemon(profile, profiles.sections(profile, policy_file),
                                        args.postgres_admin_url, workdir, code=REPO)
            start = time.monotonic()
            with daemon:
                print(f'-- {profile}: cellplane-placement --config-file {daemon.config_file} '
                      f'up in {time.monotonic() - start:.1f} s on {daemon.url}')
                _run_files(daemon, files, gabbits, module, outcomes)
    except live_daemon.DaemonError as exc:
        print(f'cannot run the daemon: {exc}\n(config files and logs: {workdir})',
              file=sys.stderr)
        return 2

    verdict = expectations.judge(entries, outcomes, set(known))
    report.print_report(verdict, profile_of, time.monotonic() - began)
    if verdict.failed and not args.in_process:
        print(f'the daemons\' config files and logs are kept in {workdir}')
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if verdict.ok(strict=args.strict) else 1


class _Outcomes(unittest.TestResult):
    """Each test of one file by its YAML name: (name, passed, why it failed)."""

    def __init__(self):
        super().__init__()
        self.by_name: dict[str, tuple[bool, str]] = {}

    @staticmethod
    def _name(test) -> str:
        return test.test_data['name']

    def addSuccess(self, test):
        self.by_name.setdefault(self._name(test), (True, ''))

    def addFailure(self, test, err):
        self.by_name[self._name(test)] = (False, _why(self._exc_info_to_string(err, test)))

    addError = addFailure

    def addSkip(self, test, reason):
        # gabbi skips every test of a file whose fixture failed.
        if reason == 'fixture failure':
            self.by_name.setdefault(self._name(test), (False, 'its fixture failed'))


def _why(trace: str) -> str:
    """The exception line of a traceback and what follows it, on one line."""
    lines = trace.splitlines()
    start = max((i for i, line in enumerate(lines)
                 if line[:1].isalpha() and 'Error' in line.split(':')[0]), default=0)
    return ' '.join(' '.join(lines[start:]).split())[:300]


def _run_files(target, files, gabbits, module, outcomes) -> None:
    from gabbi import driver
    from reference_gabbits import fixtures

    fixtures.use(target)
    for name in files:
        folder = tempfile.mkdtemp(prefix='gabbi-yaml-')
        shutil.copy(os.path.join(gabbits, name), folder)
        suite = driver.build_tests(folder, unittest.TestLoader(), fixture_module=module,
                                   test_loader_name='reference', **target.gabbi_args())
        result = _Outcomes()
        suite.run(result)
        shutil.rmtree(folder, ignore_errors=True)
        outcomes[name] = [(test, passed, why) for test, (passed, why) in result.by_name.items()]
        failed = sum(1 for _, passed, _ in outcomes[name] if not passed)
        print(f'{name}: {len(outcomes[name])} tests, {failed} failed')


def _reference_rules(venv: str) -> list[str]:
    """The reference's policy rule names, asked of its own venv (its 'placement')."""
    python = os.path.join(venv, 'bin', 'python')
    out = subprocess.run(
        # -I: neither PYTHONPATH nor the working directory, which hold ours.
        [python, '-I', '-c', 'from placement import policies\n'
                       'print("\\n".join(r.name for r in policies.list_rules()))'],
        check=True, capture_output=True, text=True)
    return out.stdout.split()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
