#!/bin/sh
# Run the two-cell example's real daemons on this machine (RabbitMQ and
# PostgreSQL must be running locally):
#   deploy/run-local.sh start|status|stop|restart|purge [NAME...] [--config-dir DIR]
#       [--run-dir DIR] [--no-create] [--format json]
# See deploy/README.md. It is `python -m cellplane_cli.launcher` from the
# repository's virtualenv (`make venv` creates it).
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-"$here/.venv/bin/python"}
cd "$here"
exec "$python" -m cellplane_cli.launcher "$@"
