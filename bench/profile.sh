#!/usr/bin/env bash
# Where a single node's time goes under one `narad bench` workload: starts a fresh node from
# BUILD_DIR on loopback (with its own etcd member), runs the workload against it, and prints the
# client's report, the node's CPU-seconds (narad and its etcd member, from /proc) and its fsync
# counts (WAL and partition logs, from /metrics). With PERF=1, `perf record` samples the node for
# a few seconds in the middle of the run (perf.data in BUILD_DIR/bench/); read it with
# `perf report -i BUILD_DIR/bench/perf.data --no-children --sort sym`. With THREADS=1 it also
# prints the node's CPU-seconds per thread name (the HTTP threads, the read pool, the WAL, the
# dispatcher...), to see which of them the workload's time goes to. With WAL_ONLY=1 the node
# sends every produce through its ingress WAL (the "wal.direct.decline" failpoint; a build with
# failpoints, such as build/test), to compare with the direct-to-log path it takes by default.
#
#   bench/profile.sh [BUILD_DIR] [narad bench flags...]
#   e.g. bench/profile.sh build/bench --count 500000 --size 256 --batch 100 --connections 6 \
#            --consumers 3 --consume
set -euo pipefail

build_dir=${1:-build/release}
shift || true
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--count 500000 --size 256 --batch 100 --connections 6 --consumers 3 --consume)
narad="$build_dir/narad"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
[ -x "$narad" ] || { echo "profile: $narad not found; run 'make build' first" >&2; exit 1; }
out_dir="$build_dir/bench"
mkdir -p "$out_dir"
port=${NARAD_BENCH_PORT:-19942}
server="127.0.0.1:$port"
data_dir=$(mktemp -d /tmp/narad-profile-XXXXXX)
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
node=""
perf_pid=""
cleanup() {
    [ -n "$perf_pid" ] && wait "$perf_pid" 2>/dev/null || true
    [ -n "$node" ] && kill "$node" 2>/dev/null && wait "$node" 2>/dev/null || true
    rm -rf "$data_dir"
}
trap cleanup EXIT

failpoints=""
[ "${WAL_ONLY:-0}" = 1 ] && failpoints="wal.direct.decline=error"
NARAD_FAILPOINTS=$failpoints NARAD_SECURITY_ENABLED=false NARAD_CLUSTER_SECRET=$secret "$narad" serve --node-id n1 \
    --addr "$server" --cluster-port $((port + 1)) --etcd-client-port $((port + 2)) \
    --etcd-peer-port $((port + 3)) --data-dir "$data_dir/n1" --log-format text \
    --log-level warn >"$data_dir/n1.log" 2>&1 &
node=$!
wait_ready "$server" "$data_dir/n1.log"

if [ "${PERF:-0}" = 1 ]; then
    (sleep 1; perf record -F 499 -g -p "$node" -o "$out_dir/perf.data" -- sleep 4 \
        >/dev/null 2>&1) &
    perf_pid=$!
fi
before=$(tree_ticks "$node")
threads_before=$(thread_ticks "$node")
"$narad" -s "$server" bench profile --create --partitions 6 --servers "$server" "${flags[@]}"
after=$(tree_ticks "$node")
threads_after=$(thread_ticks "$node")
hz=$(getconf CLK_TCK)
echo "node CPU (narad + etcd): $(python3 -c "print(f'{($after - $before) / $hz:.2f}')") s"
if [ "${THREADS:-0}" = 1 ]; then
    echo "narad CPU by thread name (s):"
    # Threads that started during the run count from zero.
    awk -v hz="$hz" 'NR == FNR { before[$1] = $2; next }
        { used = ($2 - before[$1]) / hz; if (used > 0) printf "  %-16s %6.2f\n", $1, used }' \
        <(echo "$threads_before") <(echo "$threads_after") | sort -k2 -rn
fi
metrics=$(curl -fs "http://$server/metrics")
echo "$metrics" | awk '
    /^narad_wal_fsync_duration_seconds_count/ { wal += $2 }
    /^narad_storage_fsync_duration_seconds_count/ { logs += $2 }
    /^narad_produce_direct_records_total\{outcome="committed"\}/ { direct += $2 }
    END { printf "fsyncs: ingress WAL %d, partition logs %d; records committed directly %d\n",
                 wal, logs, direct }'
# A build without failpoints (build/bench, build/release) ignores the decline: say so rather than
# report a direct-path run as a WAL-only one.
if [ "${WAL_ONLY:-0}" = 1 ] &&
    echo "$metrics" | grep -Eq '^narad_produce_direct_records_total\{outcome="committed"\} [1-9]'; then
    echo "profile: WAL_ONLY=1 needs failpoints compiled in (make test-build; use build/test)" >&2
    exit 1
fi
