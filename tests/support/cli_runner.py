"""Runs `cellplane`, `cellplane-manage` and `openstack` for the tests, a process per command, imports paid once.

A command run as ``python -m cellplane_cli.cli`` spends about a second of
CPU starting the interpreter and importing oslo.*, SQLAlchemy and the
command modules before it does anything (python-openstackclient's
``openstack`` about as much), and the integration tests run hundreds of
commands (many of them in loops that wait for a state). Here each command
is a child forked from a process that imported the CLIs once
(multiprocessing's fork server with their modules preloaded). The child
still starts from nothing the command depends on: no configuration was
ever parsed in the parent, no logging set up, no connection opened. It
runs the very ``main(argv)`` the console scripts call (python-openstackclient's
unmodified, as pinned in the test extra), with the caller's
environment and working directory, writes to stdout and stderr of its own,
and ends with that function's exit code, as ``python -m`` would.

What this does not exercise, the console-script start itself, is run as
a real ``python -m`` by the tests that are about it (the CLI's exit codes
and usage errors, ``tests/functional/cli``, the demo's).
"""
from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The modules whose ``main`` the tests run; the fork server imports them once.
ENTRY_MODULES = ('cellplane_cli.cli', 'cellplane_cli.manage', 'cellplane_cli.launcher',
                 'openstackclient.shell')

_context = None


def _fork_server():
    global _context
    if _context is None:
        context = multiprocessing.get_context('forkserver')
        context.set_forkserver_preload(['tests.support.cli_preload'])
        _context = context
    return _context


def _child(module: str, argv: list[str], environ: dict[str, str], cwd: str | None, out: str,
           err: str) -> None:
    """The forked command: the caller's environment, fresh stdout and stderr, then ``main(argv)``."""
    os.environ.clear()
    os.environ.update(environ)
    if cwd is not None:
        os.chdir(cwd)
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, 'w', encoding='utf-8', closefd=False)
    sys.stderr = open(2, 'w', encoding='utf-8', closefd=False)
    sys.argv = [module, *argv]
    code = 1
    try:
        code = importlib.import_module(module).main(argv)
    except SystemExit as exit_:
        # As the interpreter ends on it: None is 0, a message is printed and is 1.
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    finally:
        # What the interpreter's own exit does for a console script.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code or 0)


def run(module: str, argv: list[str], *, timeout: float = 600,
        env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
        ) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGV``, as a CompletedProcess with its text output and exit code.

    ``env`` is the command's whole environment (this process's if None), ``cwd``
    its working directory (this process's if None).
    """
    if module not in ENTRY_MODULES:
        raise ValueError(f'{module} is not one of {ENTRY_MODULES}')
    with tempfile.TemporaryDirectory(prefix='cellplane-cli-') as scratch:
        out, err = Path(scratch, 'stdout'), Path(scratch, 'stderr')
        out.touch()
        err.touch()
        process = _fork_server().Process(
            target=_child, args=(module, list(argv), dict(os.environ if env is None else env),
                  None if cwd is None else str(cwd), str(out), str(err)),
            name=f'{module} {" ".join(argv[:2])}')
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired([module, *argv], timeout,
                                            output=out.read_text(), stderr=err.read_text())
        return subprocess.CompletedProcess([sys.executable, '-m', module, *argv],
                                           process.exitcode, out.read_text(), err.read_text())
