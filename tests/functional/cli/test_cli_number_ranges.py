"""A number out of its range is a usage error: one line naming the option and the range, exit 2.

argparse refuses it before any config file or database is read, so these
run without a deployment.
"""
from __future__ import annotations

import pytest

from cellplane_cli import cli, manage


def _run(main, argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exited:
        code = exited.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize('main, argv, message', [
    (cli.main, ['server', 'create', 'w', '--flavor', 'f', '--count', '0'],
     'argument --count: must be from 1 to 1000, not 0'),
    (cli.main, ['server', 'create', 'w', '--flavor', 'f', '--count', '1001'],
     'argument --count: must be from 1 to 1000, not 1001'),
    (cli.main, ['server', 'create', 'w', '--flavor', 'f', '--wait', '--timeout', '-1'],
     'argument --timeout: must be 0 or more, not -1'),
    (cli.main, ['scheduler', 'records', '--last', '-3'],
     'argument --last: must be 1 or more, not -3'),
    (cli.main, ['flavor', 'create', 'f', '--vcpus', '-1', '--ram', '512'],
     'argument --vcpus: must be from 1 to 2147483647, not -1'),
    (cli.main, ['flavor', 'create', 'f', '--vcpus', '100000000000', '--ram', '512'],
     'argument --vcpus: must be from 1 to 2147483647, not 100000000000'),
    (cli.main, ['flavor', 'create', 'f', '--vcpus', '1', '--ram', '0'],
     'argument --ram: must be from 1 to 2147483647, not 0'),
    (cli.main, ['flavor', 'create', 'f', '--vcpus', '1', '--ram', '64', '--disk', '-5'],
     'argument --disk: must be from 0 to 2147483647, not -5'),
    (cli.main, ['flavor', 'create', 'f', '--vcpus', 'two', '--ram', '64'],
     "argument --vcpus: expected a whole number, got 'two'"),
    (cli.main, ['server', 'group', 'create', 'g', '--policy', 'anti-affinity',
                '--max-per-domain', '0'],
     'argument --max-per-domain: must be 1 or more, not 0'),
    (cli.main, ['demo', '--instances', '0'], 'argument --instances: must be 1 or more, not 0'),
    (cli.main, ['demo', '--fail-fraction', '1.5'],
     'argument --fail-fraction: must be from 0 to 1, not 1.5'),
    (cli.main, ['demo', '--fail-fraction', 'nan'],
     'argument --fail-fraction: must be from 0 to 1, not nan'),
    (manage.main, ['rpc', 'ping', '--topic', 'scheduler', '--count', '0'],
     'argument --count: must be 1 or more, not 0'),
    (manage.main, ['placement', 'audit', '--grace', '-1'],
     'argument --grace: must be 0 or more, not -1'),
    (manage.main, ['scheduler', 'purge-records', '--keep', '-1'],
     'argument --keep: must be 0 or more, not -1'),
])
def test_a_number_out_of_range_is_one_line_naming_the_range_exit_2(main, argv, message,
                                                                    capsys):
    code, err = _run(main, argv, capsys)
    assert code == 2, err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
