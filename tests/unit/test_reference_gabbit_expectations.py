"""The expected-failure list of the reference gabbi run: parsing and the verdict."""
from __future__ import annotations

import os
import sys

import pytest

TOOLS = os.path.join(os.path.dirname(__file__), '..', '..', 'tools')
sys.path.insert(0, os.path.abspath(TOOLS))

from reference_gabbits import expectations  # noqa: E402

LIST = """\
# a comment
## Waits for the auth work
cors.yaml -- no CORS yet
## Deliberate
basic-http.yaml :: bad content length -- the client refuses to send it
"""
KNOWN = {'cors.yaml', 'basic-http.yaml', 'traits.yaml'}


def test_entries_keep_their_file_test_reason_and_heading():
    cors, basic = expectations.parse(LIST)
    assert (cors.file, cors.test, cors.reason, cors.heading) == (
        'cors.yaml', None, 'no CORS yet', 'Waits for the auth work')
    assert (basic.file, basic.test, basic.heading) == (
        'basic-http.yaml', 'bad content length', 'Deliberate')


def test_an_entry_without_a_reason_is_refused():
    with pytest.raises(ValueError, match='line 1'):
        expectations.parse('cors.yaml\n')


def test_listed_failures_pass_the_run_and_unlisted_ones_fail_it():
    verdict = expectations.judge(expectations.parse(LIST), {
        'cors.yaml': [('options', False, '405'), ('get', True, '')],
        'basic-http.yaml': [('bad content length', False, 'refused'), ('root', True, '')],
    }, KNOWN)
    assert verdict.ok(strict=True)
    assert len(verdict.expected) == 2 and len(verdict.passed) == 2

    verdict = expectations.judge(expectations.parse(LIST), {
        'traits.yaml': [('list', False, '500')]}, KNOWN)
    assert verdict.failed == [('traits.yaml', 'list', '500')]
    assert not verdict.ok()


def test_listed_tests_that_pass_are_stale_and_fail_only_a_strict_run():
    verdict = expectations.judge(expectations.parse(LIST), {
        'cors.yaml': [('options', True, '')],
        'basic-http.yaml': [('bad content length', True, '')],
    }, KNOWN)
    assert sorted(why for _, why in verdict.stale) == [
        'every test of the file passes', 'passes']
    assert verdict.ok() and not verdict.ok(strict=True)


def test_entries_naming_nothing_are_stale():
    verdict = expectations.judge(
        expectations.parse('gone.yaml -- old\nbasic-http.yaml :: renamed -- old\n'),
        {'basic-http.yaml': [('root', True, '')]}, KNOWN)
    assert sorted(why for _, why in verdict.stale) == [
        'names no file of the reference', 'names nothing that ran']


def test_the_repository_list_parses():
    path = os.path.join(TOOLS, 'reference-placement', 'expected-failures.txt')
    with open(path) as f:
        entries = expectations.parse(f.read())
    assert entries and all(entry.reason for entry in entries)
