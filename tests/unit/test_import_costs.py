"""What each entry point's start imports: the heavy modules it does not need stay out.

Every daemon start and every ``cellplane`` command pays its imports in CPU
(about a second each here); these keep out the ones that only some paths
use. Each runs the import in a fresh interpreter, as a start does.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def loaded(module: str, candidates: list[str]) -> list[str]:
    """Which of ``candidates`` are in sys.modules after importing ``module`` in a fresh interpreter."""
    script = (f'import json, sys, warnings; warnings.simplefilter("ignore"); import {module}; '
              f'print(json.dumps([m for m in {candidates!r} if m in sys.modules]))')
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_compute_agent_loads_no_sqlalchemy():
    # It holds no database; SQLAlchemy is a quarter of a second at every start.
    assert loaded('compute_agent.cmd', ['sqlalchemy']) == []


@pytest.mark.parametrize('module', ['compute_agent.cmd', 'conductor.cmd', 'scheduler.cmd',
                                    'cellplane_api.cmd', 'cellplane_cli.cli'])
def test_no_process_loads_eventlets_green_dns(module):
    # oslo.messaging loads eventlet; nothing here monkey-patches, so its resolver is unused.
    assert loaded(module, ['eventlet', 'eventlet.support.greendns']) == ['eventlet']


@pytest.mark.parametrize('module', ['cellplane_cli.cli', 'cellplane_cli.manage'])
def test_commands_load_neither_the_embedded_cloud_nor_alembic(module):
    assert loaded(module, ['cellplane_embedded.runtime', 'alembic']) == []
