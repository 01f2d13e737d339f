"""deploy/systemd: every unit passes ``systemd-analyze verify``, templates instantiated.

The units name the install the README gives (``/opt/cellplane``); here
they are checked against this test's own install: the same files with that
prefix replaced by this interpreter's, so that verify also finds each
``ExecStart`` executable. Any complaint verify prints (an unknown key, a
bad value) fails the test, not only its exit code.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

UNITS = Path(__file__).resolve().parents[3] / 'deploy' / 'systemd'
INSTANCES = {'cellplane-scheduler@.service': 'cellplane-scheduler@1.service',
             'cellplane-cell-conductor@.service': 'cellplane-cell-conductor@cell1.service',
             'cellplane-compute@.service': 'cellplane-compute@host1.service'}


def test_every_unit_verifies_with_its_templates_instantiated(tmp_path):
    names = sorted(p.name for p in UNITS.glob('*.service'))
    assert names == ['cellplane-api.service', 'cellplane-cell-conductor@.service',
                     'cellplane-compute@.service',
                     'cellplane-placement.service', 'cellplane-scheduler@.service',
                     'cellplane-super-conductor.service']
    for name in names:
        text = (UNITS / name).read_text()
        assert 'Restart=on-failure' in text and 'RestartPreventExitStatus=2' in text
        (tmp_path / name).write_text(text.replace('/opt/cellplane', sys.prefix))
    checked = [str(tmp_path / INSTANCES.get(name, name)) for name in names]

    proc = subprocess.run(['systemd-analyze', 'verify', *checked], capture_output=True,
                          text=True, timeout=60)

    assert (proc.returncode, proc.stdout + proc.stderr) == (0, '')


def test_a_unit_naming_a_missing_executable_fails_verify(tmp_path):
    text = (UNITS / 'cellplane-compute@.service').read_text()
    (tmp_path / 'cellplane-compute@.service').write_text(
        text.replace('/opt/cellplane/bin/cellplane-compute', f'{sys.prefix}/bin/nope'))
    proc = subprocess.run(['systemd-analyze', 'verify',
                           str(tmp_path / 'cellplane-compute@host1.service')],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert 'is not executable' in proc.stdout + proc.stderr
