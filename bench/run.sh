#!/usr/bin/env bash
# Runs Narad's whole-system benchmarks: starts a fresh single node from BUILD_DIR on loopback, drives
# it with `narad bench` through a fixed set of workloads, stops it, and prints one markdown table
# (also written to BUILD_DIR/bench/results.md, with the raw JSON beside it).
#
#   bench/run.sh [BUILD_DIR]        BUILD_DIR defaults to build/release
set -euo pipefail

build_dir=${1:-build/release}
narad="$build_dir/narad"
out_dir="$build_dir/bench"
[ -x "$narad" ] || { echo "bench: $narad not found; run 'make build' first" >&2; exit 1; }
mkdir -p "$out_dir"
data_dir=$(mktemp -d /tmp/narad-bench-XXXXXX)
port=${NARAD_BENCH_PORT:-19942}
server="127.0.0.1:$port"

NARAD_SECURITY_ENABLED=false "$narad" serve --addr "$server" --cluster-port $((port + 1)) \
    --data-dir "$data_dir/data" --log-format text --log-level warn >"$data_dir/node.log" 2>&1 &
node_pid=$!
cleanup() {
    kill "$node_pid" 2>/dev/null || true
    wait "$node_pid" 2>/dev/null || true
    rm -rf "$data_dir"
}
trap cleanup EXIT

for _ in $(seq 1 200); do
    curl -fs "http://$server/readyz" >/dev/null 2>&1 && break
    sleep 0.05
done
curl -fs "http://$server/readyz" >/dev/null || { echo "bench: node did not start" >&2; cat "$data_dir/node.log" >&2; exit 1; }

# name | narad bench flags
workloads=(
    "batch-flow-256B|--count 500000 --size 256 --batch 100 --connections 4 --consumers 2 --consume"
    "batch-flow-256B-at-30k|--duration 10s --rate 30000 --size 256 --batch 100 --connections 4 --consumers 2 --consume"
    "batch-produce-1KiB|--count 300000 --size 1024 --batch 100 --connections 4"
    "single-flow-256B|--count 100000 --size 256 --batch 1 --connections 32 --consumers 32 --consume"
    "single-produce-256B|--count 150000 --size 256 --batch 1 --connections 64"
)

results="$out_dir/results.jsonl"
: >"$results"
for workload in "${workloads[@]}"; do
    name=${workload%%|*}
    flags=${workload#*|}
    echo "bench: $name: narad bench $name --create --partitions 6 $flags" >&2
    # shellcheck disable=SC2086
    json=$("$narad" -s "$server" bench "$name" --create --partitions 6 $flags --json 2>/dev/null)
    printf '{"name":"%s","flags":"%s","result":%s}\n' "$name" "$flags" "$json" >>"$results"
done

python3 - "$results" "$out_dir/results.md" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
out = []
out.append("| workload | produce msg/s | produce MB/s | produce p50 / p99 ms | consume+ack msg/s | end-to-end p50 / p99 ms |")
out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
for row in rows:
    r = row["result"]
    p = r["produce"]
    c = r.get("consume")
    e = r.get("end_to_end")
    produce_lat = f'{p["latency"]["p50_us"]/1000:.1f} / {p["latency"]["p99_us"]/1000:.1f}'
    consume = f'{c["msgs_per_s"]:,.0f}' if c else "–"
    e2e = f'{e["p50_us"]/1000:.1f} / {e["p99_us"]/1000:.1f}' if e and e.get("count") else "–"
    out.append(f'| {row["name"]} | {p["msgs_per_s"]:,.0f} | {p["mb_per_s"]:.1f} | {produce_lat} | {consume} | {e2e} |')
text = "\n".join(out) + "\n"
open(sys.argv[2], "w").write(text)
print(text)
PY
