"""The list of reference tests expected to fail, and the verdict on a run.

The list (tools/reference-placement/expected-failures.txt) has one entry a
line, each with its reason after `` -- ``; ``## `` lines are headings
(kept with their entries, to say why a group is there), ``#`` lines
comments::

    ## Waits for the auth/policy work
    cors.yaml -- CORS is not built yet                  (every test of the file)
    inventory.yaml :: delete inventory in use -- ...    (one test, by its name)

A test that fails and is listed is an expected failure. One that fails
unlisted is an unexpected failure: the run fails. A listed test that
passes, a listed file none of whose tests fails, or an entry naming
nothing that ran, is reported so that the list can shrink; it fails the
run only when asked (``strict``), since work landing elsewhere (the
auth/policy work) is what turns those entries into passes.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    file: str
    test: str | None     # None: the whole file
    reason: str
    heading: str
    line: int


def parse(text: str) -> list[Entry]:
    entries, heading = [], ''
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith('## '):
            heading = line[3:].strip()
            continue
        if not line or line.startswith('#'):
            continue
        target, sep, reason = line.partition(' -- ')
        if not sep or not reason.strip():
            raise ValueError(f'line {number}: no " -- reason" in {raw!r}')
        file, _, test = (part.strip() for part in target.partition(' :: '))
        entries.append(Entry(file, test or None, reason.strip(), heading, number))
    return entries


@dataclass
class Verdict:
    """Each test's outcome judged against the list."""

    passed: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)      # + why
    expected: list[tuple[str, str, Entry]] = field(default_factory=list)
    stale: list[tuple[Entry, str]] = field(default_factory=list)  # + why it no longer holds

    def ok(self, strict: bool = False) -> bool:
        return not self.failed and not (strict and self.stale)


def judge(entries: list[Entry], outcomes: dict[str, list[tuple[str, bool, str]]],
          known_files: set[str]) -> Verdict:
    """``outcomes``: file -> [(test name, passed, why it failed)] of every test run;
    ``known_files``: every YAML file the reference has (a run may take a few)."""
    whole = {e.file: e for e in entries if e.test is None}
    single = {(e.file, e.test): e for e in entries if e.test is not None}
    verdict = Verdict()
    for file, tests in outcomes.items():
        for name, passed, why in tests:
            entry = single.get((file, name)) or whole.get(file)
            if passed:
                verdict.passed.append((file, name))
                if (file, name) in single:
                    verdict.stale.append((entry, 'passes'))
            elif entry is not None:
                verdict.expected.append((file, name, entry))
            else:
                verdict.failed.append((file, name, why))
        if file in whole and all(passed for _, passed, _ in tests):
            verdict.stale.append((whole[file], 'every test of the file passes'))
    ran = {(file, name) for file, tests in outcomes.items() for name, _, _ in tests}
    for entry in entries:
        if entry.file not in known_files:
            verdict.stale.append((entry, 'names no file of the reference'))
        elif entry.test is not None and entry.file in outcomes \
                and (entry.file, entry.test) not in ran:
            verdict.stale.append((entry, 'names nothing that ran'))
    return verdict
