#!/usr/bin/env bash
# Install the real OpenStack Keystone the integration tests run (PyPI
# `keystone`, with gunicorn, every package pinned in requirements.txt here)
# in a venv of its own, .venv-keystone: Keystone's dependencies (oslo.*,
# SQLAlchemy, Flask ...) are pinned apart from ours.
#
# Cached: nothing is installed when the venv exists and was built from the
# same pins (a copy of requirements.txt is kept in it). pip's output is shown
# only when it fails (the whole of it in $KEYSTONE_VENV/pip.log).
#
# Usage: tools/keystone/setup_venv.sh
# Environment: KEYSTONE_VENV [.venv-keystone], PYTHON [python3]
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=tools/keystone
KEYSTONE_VENV=${KEYSTONE_VENV:-.venv-keystone}
PYTHON=${PYTHON:-python3}

began=$(date +%s)
# pytest-xdist workers may ask at once: one installs, the others wait for it.
if command -v flock >/dev/null; then
    exec 9>"$KEYSTONE_VENV.lock"
    flock 9
fi
# Bytecode written once (see the Makefile's venv): where PYTHONDONTWRITEBYTECODE
# is set, every Keystone start would compile Keystone again. Some packages ship
# files that are not Python 3, hence no failure on them.
compile_venv() {
    "$KEYSTONE_VENV/bin/python" -m compileall -q -j 0 \
        "$("$KEYSTONE_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
        >/dev/null 2>&1 || true
    touch "$KEYSTONE_VENV/.compiled"
}
if cmp -s "$HERE/requirements.txt" "$KEYSTONE_VENV/.installed-requirements" \
        && [ -x "$KEYSTONE_VENV/bin/keystone-manage" ] && [ -x "$KEYSTONE_VENV/bin/gunicorn" ]; then
    # A venv installed before its bytecode was written here.
    [ -e "$KEYSTONE_VENV/.compiled" ] || compile_venv
    echo "[keystone] venv $KEYSTONE_VENV up to date"
    exit 0
fi
[ -x "$KEYSTONE_VENV/bin/python" ] || "$PYTHON" -m venv "$KEYSTONE_VENV"
rm -f "$KEYSTONE_VENV/.installed-requirements"
if ! "$KEYSTONE_VENV/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check \
        -r "$HERE/requirements.txt" >"$KEYSTONE_VENV/pip.log" 2>&1; then
    tail -40 "$KEYSTONE_VENV/pip.log" >&2
    echo "[keystone] installing $HERE/requirements.txt into $KEYSTONE_VENV failed" >&2
    exit 1
fi
compile_venv
cp "$HERE/requirements.txt" "$KEYSTONE_VENV/.installed-requirements"
echo "[keystone] venv $KEYSTONE_VENV installed in $(( $(date +%s) - began )) s"
