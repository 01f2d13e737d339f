"""The ``jsonlines`` record backend: one JSON object per line, in a size-rotated file.

``[scheduler] records_file`` is written in append mode, one line per record.
When it grows past ``records_file_max_bytes`` it is renamed ``FILE.1``
(``FILE.1`` to ``FILE.2`` ...) and a new one is started;
``records_file_backups`` old files are kept, the oldest deleted. Disk use is
bounded by about (backups + 1) x max_bytes. ``find`` reads the current file
and then the backups, newest record first. Plays well with log shippers;
finding by request id reads the files through.

Several scheduler workers on one host should each have their own file: a
rotation by one worker is not seen by another's open file.
"""
from __future__ import annotations

import json
import os
import threading
from typing import IO, Iterator

from oslo_config import cfg

from scheduler.records.backend import RecordBackend, RecordBackendError, RecordQuery
from scheduler.records.record import SchedulingRecord


class JsonLinesBackend(RecordBackend):
    def __init__(self, path: str, *, max_bytes: int, backups: int) -> None:
        if not path:
            raise RecordBackendError(
                'record_backend = jsonlines needs [scheduler] records_file (a file path)')
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> 'JsonLinesBackend':
        return cls(conf.scheduler.records_file,
                   max_bytes=conf.scheduler.records_file_max_bytes,
                   backups=conf.scheduler.records_file_backups)

    def _open(self) -> IO[str]:
        if self._file is None:
            directory = os.path.dirname(os.path.abspath(self.path))
            try:
                os.makedirs(directory, exist_ok=True)
                self._file = open(self.path, 'a', encoding='utf-8')
            except OSError as exc:
                raise RecordBackendError(
                    f'cannot open the scheduling records file {self.path} '
                    f'([scheduler] records_file): {exc}') from exc
        return self._file

    def write(self, records: list[SchedulingRecord]) -> None:
        with self._lock:
            handle = self._open()
            handle.write(''.join(json.dumps(r.to_dict(), sort_keys=True) + '\n'
                                 for r in records))
            handle.flush()
            if handle.tell() >= self.max_bytes:
                self._rotate()

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        self._file = None
        if self.backups == 0:
            os.remove(self.path)
            return
        for index in range(self.backups - 1, 0, -1):
            older = f'{self.path}.{index}'
            if os.path.exists(older):
                os.replace(older, f'{self.path}.{index + 1}')
        os.replace(self.path, f'{self.path}.1')

    def files(self) -> list[str]:
        """The current file and its backups that exist, newest first."""
        names = [self.path] + [f'{self.path}.{i}' for i in range(1, self.backups + 1)]
        return [n for n in names if os.path.exists(n)]

    def _newest_first(self) -> Iterator[SchedulingRecord]:
        for name in self.files():
            try:
                with open(name, encoding='utf-8') as handle:
                    lines = handle.readlines()
            except FileNotFoundError:  # rotated away while we read
                continue
            for line in reversed(lines):
                line = line.strip()
                if not line:
                    continue
                try:
                    yield SchedulingRecord.from_dict(json.loads(line))
                except (ValueError, KeyError):
                    continue  # a line cut short by a crash does not hide the others

    def find(self, query: RecordQuery) -> list[SchedulingRecord]:
        found = []
        for record in self._newest_first():
            if query.matches(record):
                found.append(record)
                if len(found) >= query.last:
                    break
        return found

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
