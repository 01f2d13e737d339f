"""What the fork server of ``tests/support/cli_runner.py`` imports once: the CLIs its commands run.

Imported only in that server, whose ``sys.argv[0]`` is ``-c``. cliff names
an application after ``sys.argv[0]`` when its class is defined, so that
is first made the console script's name (python-openstackclient takes
its name from it; cellplane's CLIs name themselves).
"""
import importlib
import sys

from tests.support.cli_runner import ENTRY_MODULES

sys.argv[0] = 'openstack'
for module in ENTRY_MODULES:
    importlib.import_module(module)
