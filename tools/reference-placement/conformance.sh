#!/usr/bin/env bash
# The reference OpenStack Placement's own gabbi suite (all its YAML files)
# against a live cellplane-placement, one daemon start per server profile
# (legacy, secure, open, cors), judged against expected-failures.txt here.
#
# Builds the reference in a venv of its own from requirements.txt here (its
# top-level package is also named 'placement', so it cannot share ours),
# then runs tools/run_reference_gabbits.py with our venv. Needs our venv
# (`make venv`) and a PostgreSQL that `$CELLPLANE_TEST_DB_URL` names, else
# postgres@127.0.0.1:5432 with trust auth. Exit status: the runner's (1 on
# any unexpected failure).
#
# Usage: tools/reference-placement/conformance.sh [runner arguments, e.g. YAML files]
#        tools/reference-placement/conformance.sh --prepare   # build the reference venv only
# Environment: REFERENCE_VENV [.venv-reference], VENV (ours) [.venv], PYTHON [python3]
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=tools/reference-placement
REFERENCE_VENV=${REFERENCE_VENV:-.venv-reference}
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

began=$(date +%s)
if [ ! -x "$REFERENCE_VENV/bin/python" ]; then
    "$PYTHON" -m venv "$REFERENCE_VENV"
fi
# Installed again only when the pins changed.
if ! cmp -s "$HERE/requirements.txt" "$REFERENCE_VENV/.installed-requirements"; then
    # pip's own output only when it fails.
    if ! "$REFERENCE_VENV/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check \
            -r "$HERE/requirements.txt" >"$REFERENCE_VENV/pip.log" 2>&1; then
        tail -40 "$REFERENCE_VENV/pip.log" >&2
        exit 1
    fi
    cp "$HERE/requirements.txt" "$REFERENCE_VENV/.installed-requirements"
fi
echo "[conformance] reference venv $REFERENCE_VENV ready in $(( $(date +%s) - began )) s"
if [ "${1:-}" = "--prepare" ]; then
    exit 0
fi
exec "$VENV/bin/python" tools/run_reference_gabbits.py --reference-venv "$REFERENCE_VENV" "$@"
