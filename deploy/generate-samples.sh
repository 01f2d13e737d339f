#!/usr/bin/env bash
# Write the full option reference of every service, and the policy
# defaults of Placement and the compute API, to deploy/samples/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gen=${OSLO_CONFIG_GENERATOR:-oslo-config-generator}
cd "$here/.."
mkdir -p deploy/samples
for cfg in "$here"/config-generator/*.conf; do
    "$gen" --config-file "$cfg"
done
policy_gen=${OSLOPOLICY_SAMPLE_GENERATOR:-oslopolicy-sample-generator}
"$policy_gen" --namespace placement --output-file deploy/samples/placement-policy.yaml.sample
"$policy_gen" --namespace cellplane-compute --output-file deploy/samples/compute-policy.yaml.sample
