"""Boots asked one request after another on a thread of their own, while a test breaks something.

``BootStream(deployment, 'name', count)`` runs ``cellplane server create
nameN --flavor small --count count`` through the deployment's CLI until
``stop()``, which returns every server uuid the requests answered with, or
raises the error a request met (in the test's thread, where pytest sees
it). ``wait_for(n)`` returns once n requests were answered.
"""
from __future__ import annotations

import threading

from tests.support.deployment import EVENTUALLY_SECONDS
from tests.support.polling import eventually


class BootStream:
    def __init__(self, deployment, name: str, count: int = 2, *, flavor: str = 'small',
                 seconds: float = EVENTUALLY_SECONDS) -> None:
        self.uuids: list[str] = []
        self.requests = 0
        self._seconds = seconds
        self._stop = threading.Event()
        self._errors: list[BaseException] = []

        def boot() -> None:
            while not self._stop.is_set():
                try:
                    created = deployment.cli('server', 'create', f'{name}{self.requests}',
                                             '--flavor', flavor, '--count', str(count))
                except BaseException as exc:  # noqa: BLE001 - raised in the test thread by stop()
                    self._errors.append(exc)
                    return
                self.uuids += [s['id'] for s in created]
                self.requests += 1
        self._thread = threading.Thread(target=boot, name=f'boot-{name}', daemon=True)
        self._thread.start()

    def wait_for(self, requests: int) -> None:
        eventually(lambda: self.requests >= requests or self._errors,
                   f'{requests} boot requests made', seconds=self._seconds)

    def stop(self) -> list[str]:
        self._stop.set()
        self._thread.join(self._seconds)
        if self._errors:
            raise self._errors[0]
        return self.uuids
