#!/usr/bin/env bash
# Write the full option reference of every service to deploy/samples/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gen=${OSLO_CONFIG_GENERATOR:-oslo-config-generator}
cd "$here/.."
mkdir -p deploy/samples
for cfg in "$here"/config-generator/*.conf; do
    "$gen" --config-file "$cfg"
done
