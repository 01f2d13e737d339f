"""``exit_process``: a daemon's process ends with the code it is given, nothing printed or logged lost."""
import os
import subprocess
import sys

SCRIPT = '''
import logging, sys
from cellplane.service import exit_process
logging.basicConfig(filename=sys.argv[1], level=logging.INFO)
logging.getLogger('x').info('logged before the end')
sys.stdout.write('printed without a newline')
exit_process(3)
'''


def test_the_code_is_kept_and_nothing_buffered_is_lost(tmp_path):
    log = tmp_path / 'daemon.log'
    # stdout to a pipe, block-buffered (PYTHONUNBUFFERED off): only a flush
    # gets the text out before os._exit.
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONUNBUFFERED'}
    proc = subprocess.run([sys.executable, '-c', SCRIPT, str(log)], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == 'printed without a newline'
    assert 'logged before the end' in log.read_text()
