#!/usr/bin/env bash
# TLS overhead on this machine, in one run (a benchmark, not a test): the raw gRPC round trip with
# and without TLS, then uncontended live acquire latency (1 client, many locks) and 32-client
# throughput on a local cluster with mutual TLS and on one started --insecure.
#   tools/scripts/tls-overhead.sh [protocol] [operations]
set -euo pipefail
protocol=${1:-caslock}
ops=${2:-4000}
cli=(node "$(dirname "$0")/../../apps/workload-driver/dist/main.js")
dir=$(mktemp -d)
trap '"${cli[@]}" cluster down --dir "$dir/c" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
echo "transport: $("${cli[@]}" transport --messages 8000 --json 2>/dev/null)"
for mode in mtls insecure; do
  flag=(); [ "$mode" = insecure ] && flag=(--insecure)
  "${cli[@]}" cluster up --dir "$dir/c" "${flag[@]}" >/dev/null 2>&1
  for clients in 1 32; do
    "${cli[@]}" bench --substrate live --cluster-dir "$dir/c" --protocol "$protocol" --clients "$clients" --locks 100000 -n "$ops" --json 2>/dev/null \
      | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(`'"$mode"' clients='"$clients"' tls=${r.tls} ops/s=${Math.round(r.throughput)} p50us=${r.latencyUs.p50.toFixed(1)} p99us=${r.latencyUs.p99.toFixed(1)} failures=${r.failures}`)})'
  done
  "${cli[@]}" cluster down --dir "$dir/c" >/dev/null 2>&1
done
