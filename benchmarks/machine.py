"""What every benchmark prints about the machine it ran on (stdlib only).

Benchmarks import it as a sibling module (``python benchmarks/x.py`` puts
this folder on ``sys.path``), so placement_bench.py still needs nothing but
``requests`` and the standard library.
"""
from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown CPU'


def facts() -> dict:
    return {'cores': os.cpu_count(), 'cpu': cpu_model(),
            'python': platform.python_version(), 'system': platform.platform()}


def summary(*extra: str) -> str:
    """'2 cores, AMD EPYC, Python 3.11.7' plus any extra parts given."""
    return ', '.join([f'{os.cpu_count()} cores', cpu_model(),
                      f'Python {platform.python_version()}', *extra])
