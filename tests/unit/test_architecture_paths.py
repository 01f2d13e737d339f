"""ARCHITECTURE.md names real code: every `path.py` and `path.py:name` it quotes exists.

The flows in ARCHITECTURE.md name the module and function behind each step
(``scheduler/claim_walk.py:ClaimWalk.place``). A rename or a move that does
not update the page fails here, so the page cannot drift silently. Names are
resolved by reading the source (``ast``), not by importing it.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / 'ARCHITECTURE.md'
# `a/b.py`, `a/b.py:func`, `a/b.py:Class.method` (inside backticks).
REFERENCE = re.compile(r'`([A-Za-z0-9_./-]+\.py)(?::([A-Za-z_][A-Za-z0-9_.]*))?`')


def references() -> list[tuple[str, str | None]]:
    found = REFERENCE.findall(DOCUMENT.read_text())
    return [(path, name or None) for path, name in sorted(set(found))]


def defines(tree: ast.AST, dotted: str) -> bool:
    """Whether ``dotted`` (``func``, ``Class``, ``Class.method``, ``NAME``) is defined in ``tree``."""
    scope = tree
    for part in dotted.split('.'):
        found = None
        for node in getattr(scope, 'body', []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == part:
                    found = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    found = node
        if found is None:
            return False
        scope = found
    return True


def test_the_document_names_code():
    assert len(references()) >= 20, 'ARCHITECTURE.md should name the code behind its flows'


@pytest.mark.parametrize('path,name', references(),
                         ids=lambda value: value or '')
def test_every_named_path_and_function_exists(path, name):
    source = ROOT / path
    assert source.is_file(), f'ARCHITECTURE.md names {path}, which does not exist'
    if name:
        tree = ast.parse(source.read_text(), filename=str(source))
        assert defines(tree, name), f'ARCHITECTURE.md names {path}:{name}, which {path} does not define'


def test_a_wrong_name_is_caught():
    tree = ast.parse('class A:\n    def b(self):\n        pass\nX = 1\n')
    assert defines(tree, 'A.b') and defines(tree, 'X')
    assert not defines(tree, 'A.c') and not defines(tree, 'b')
