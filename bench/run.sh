#!/usr/bin/env bash
# Runs Narad's whole-system benchmarks: starts fresh nodes from BUILD_DIR on loopback (one, or a
# cluster of NODES joined one after another), drives them with `narad bench` through a fixed set of
# workloads (with several nodes, every node takes an equal share of the producer and consumer
# connections), stops them, and prints one markdown table (also written to
# BUILD_DIR/bench/results[-cluster<N>].md, with the raw JSON beside it).
#
#   bench/run.sh [BUILD_DIR] [NODES]   BUILD_DIR defaults to build/release, NODES to 1
set -euo pipefail

build_dir=${1:-build/release}
nodes=${2:-1}
narad="$build_dir/narad"
out_dir="$build_dir/bench"
[ -x "$narad" ] || { echo "bench: $narad not found; run 'make build' first" >&2; exit 1; }
mkdir -p "$out_dir"
data_dir=$(mktemp -d /tmp/narad-bench-XXXXXX)
base_port=${NARAD_BENCH_PORT:-19942}
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

pids=()
servers=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$data_dir"
}
trap cleanup EXIT

wait_ready() {  # server, log
    for _ in $(seq 1 600); do
        curl -fs "http://$1/readyz" >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "bench: node $1 did not start" >&2
    cat "$2" >&2
    exit 1
}

for i in $(seq 1 "$nodes"); do
    port=$((base_port + 10 * (i - 1)))
    server="127.0.0.1:$port"
    join=()
    [ "$i" -gt 1 ] && join=(--join "127.0.0.1:$((base_port + 1))")
    NARAD_SECURITY_ENABLED=false NARAD_CLUSTER_SECRET=$secret "$narad" serve --node-id "n$i" \
        --addr "$server" --cluster-port $((port + 1)) --etcd-client-port $((port + 2)) \
        --etcd-peer-port $((port + 3)) "${join[@]}" --data-dir "$data_dir/n$i" \
        --log-format text --log-level warn >"$data_dir/n$i.log" 2>&1 &
    pids+=($!)
    servers+=("$server")
    wait_ready "$server" "$data_dir/n$i.log"
    # etcd takes one learner at a time: the next node joins once this one's member is a voter.
    for _ in $(seq 1 600); do
        curl -fs "http://${servers[0]}/v1/cluster/status" | grep -q '"is_learner":true' || break
        sleep 0.05
    done
done
server=${servers[0]}
server_list=$(IFS=,; echo "${servers[*]}")
partitions=$((6 * nodes))
suffix=""
[ "$nodes" -gt 1 ] && suffix="-cluster$nodes"

# name | narad bench flags
workloads=(
    "batch-flow-256B|--count 500000 --size 256 --batch 100 --connections 6 --consumers 3 --consume"
    "batch-flow-256B-at-30k|--duration 10s --rate 30000 --size 256 --batch 100 --connections 6 --consumers 3 --consume"
    "batch-produce-1KiB|--count 300000 --size 1024 --batch 100 --connections 6"
    "single-flow-256B|--count 100000 --size 256 --batch 1 --connections 32 --consumers 32 --consume"
    "single-produce-256B|--count 150000 --size 256 --batch 1 --connections 64"
)

results="$out_dir/results$suffix.jsonl"
: >"$results"
for workload in "${workloads[@]}"; do
    name=${workload%%|*}
    flags=${workload#*|}
    echo "bench: $name: narad bench $name --create --partitions $partitions --servers $server_list $flags" >&2
    # shellcheck disable=SC2086
    json=$("$narad" -s "$server" bench "$name" --create --partitions "$partitions" \
        --servers "$server_list" $flags --json 2>/dev/null)
    printf '{"name":"%s","flags":"%s","result":%s}\n' "$name" "$flags" "$json" >>"$results"
done

python3 - "$results" "$out_dir/results$suffix.md" <<'PY'
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
