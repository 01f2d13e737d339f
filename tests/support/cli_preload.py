"""What the fork server of ``tests/support/cli_runner.py`` imports once: the CLIs its commands run.

Imported only in that server, whose ``sys.argv[0]`` is ``-c``. cliff names
an application after ``sys.argv[0]`` when its class is defined, so that
is first made the console script's name (python-openstackclient takes
its name from it; cellplane's CLIs name themselves).
"""
import sys

sys.argv[0] = 'openstack'

import openstackclient.shell  # noqa: E402,F401

import cellplane_cli.cli  # noqa: E402
import cellplane_cli.launcher  # noqa: E402
import cellplane_cli.manage  # noqa: E402,F401
