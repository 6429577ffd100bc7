#!/usr/bin/env bash
# Benchmarks partition moves (docs/moves.md) on loopback with nodes from BUILD_DIR, and prints one
# markdown table (also written to BUILD_DIR/bench/moves.md, numbers in moves.json, node logs and
# raw inputs in moves-raw/):
#
#  1. Copy throughput: n1 alone with topic `mv` of 3 partitions (the least the API accepts) filled
#     with ~FILL_MIB MiB; a plain durable copy of one partition directory on the same disk is timed
#     (4 MiB chunks, fsync of every file and the directory); then n2 joins, the planner moves one
#     partition to it, and the move's time and bytes come from n2's "done" log line and /metrics.
#     Page cache: nothing is dropped; the baseline and the move's source both read freshly written,
#     cached files, and both write through the page cache and fsync.
#  2. Freeze under load: n1 alone with topic `fz` of 32 partitions, 8 MiB each; a producer writes
#     5 MiB/s of payload spread round-robin over all 32 partitions while n2 joins (16 partitions
#     move, at most 8 at a time) and then n3 joins (10 more move); every "source frozen for F ms"
#     line of n2 and n3 is a sample.
#  3. One large partition: n1 alone with topic `big` of 3 partitions, LARGE_GIB GiB written into
#     partition 2 (the one the planner moves first), timed against a plain durable copy of that
#     partition as in part 1; a probe writes one 16 KiB message at a time
#     to partition 2, 64 a second, from 10 s before n2 joins until the move is done; the move's
#     rate and freeze come from n2's log, the probe's latency is split at the move's start.
#
#   bench/move/run.sh [BUILD_DIR]    BUILD_DIR defaults to build/release
#   environment: NARAD_MOVE_BENCH_PORT (default 19842; uses PORT..PORT+23 and PORT+100..PORT+123),
#                FILL_MIB (default 512), LARGE_GIB (default 10; 0 skips part 3);
#                PERF=1 samples the whole machine (both nodes, both ends of the copy) with
#                `perf record -a` for 20 s of part 3's copy, into BUILD_DIR/bench/move-perf.data
#                (read it with `perf report -i ... --no-children --sort comm,sym`);
#                NARAD_BENCH_DOC=<markdown file> also writes the table
#                into that file's `moves` section (bench/doc_section.py); NARAD_BENCH_COMMIT names
#                the commit measured.
set -euo pipefail

build_dir=${1:-build/release}
narad="$build_dir/narad"
here=$(cd "$(dirname "$0")" && pwd)
analyze="$here/analyze.py"
out_dir="$build_dir/bench"
raw="$out_dir/moves-raw"
[ -x "$narad" ] || { echo "bench-move: $narad not found; run 'make build' first" >&2; exit 1; }
mkdir -p "$out_dir"
rm -rf "$raw"
mkdir -p "$raw"
data_dir=$(mktemp -d /tmp/narad-move-bench-XXXXXX)
base_port=${NARAD_MOVE_BENCH_PORT:-19842}
fill_mib=${FILL_MIB:-512}
large_gib=${LARGE_GIB:-10}
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
started=$(date -u +%Y-%m-%dT%H:%MZ)
load_start=$(cut -d' ' -f1 /proc/loadavg)
command="bench/move/run.sh $build_dir"
[ -n "${FILL_MIB:-}" ] && command="FILL_MIB=$fill_mib $command"
[ -n "${LARGE_GIB:-}" ] && command="LARGE_GIB=$large_gib $command"

pids=()     # nodes of the current part, in start order
producer="" # the rate-limited producer of part 2
stop_pids() {  # pids: TERM all at once (a node alone loses etcd quorum and waits out its
    # timeouts), up to 20 s, then KILL what is left and its children (its etcd member)
    local pid children alive
    [ $# -gt 0 ] || return 0
    kill "$@" 2>/dev/null || true
    for _ in $(seq 1 200); do
        alive=0
        for pid in "$@"; do
            if kill -0 "$pid" 2>/dev/null; then alive=1; fi
        done
        if [ "$alive" -eq 0 ]; then break; fi
        sleep 0.1
    done
    for pid in "$@"; do
        if kill -0 "$pid" 2>/dev/null; then
            children=$(pgrep -P "$pid" || true)
            # shellcheck disable=SC2086
            kill -9 "$pid" $children 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
}
stop_nodes() {
    stop_pids "${pids[@]}"
    pids=()
}
cleanup() {
    if [ -n "$producer" ]; then stop_pids "$producer"; fi
    stop_nodes
    rm -rf "$data_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_of() { echo $(($1 + 10 * ($2 - 1))); }  # base, node number

# shellcheck source=bench/lib.sh
. "$here/../lib.sh"

start_node() {  # base, node number, log
    local base=$1 i=$2 log=$3 port join=()
    port=$(port_of "$base" "$i")
    [ "$i" -gt 1 ] && join=(--join "127.0.0.1:$((base + 1))")
    NARAD_SECURITY_ENABLED=false NARAD_CLUSTER_SECRET=$secret NARAD_CLUSTER_LEASE_TTL=2s \
        NARAD_CLUSTER_DEAD_AFTER=3s NARAD_CLUSTER_CONTROLLER_TICK=500ms "$narad" serve \
        --node-id "n$i" --data-dir "$data_dir/n$i" --addr "127.0.0.1:$port" \
        --cluster-port $((port + 1)) --etcd-client-port $((port + 2)) \
        --etcd-peer-port $((port + 3)) "${join[@]}" --log-format text --log-level info \
        >"$log" 2>&1 &
    pids+=($!)
    wait_ready "127.0.0.1:$port" "$log"
    # etcd takes one learner at a time: the next node joins once this one's member is a voter.
    for _ in $(seq 1 600); do
        curl -fs "http://127.0.0.1:$base/v1/cluster/status" | grep -q '"is_learner":true' || break
        sleep 0.05
    done
}

# Waits until LOG says COUNT moves of TOPIC are done and no move is in flight.
wait_moves() {  # server, log, topic, count, timeout_s
    local deadline=$((SECONDS + $5)) done_count
    while [ "$SECONDS" -lt "$deadline" ]; do
        done_count=$(python3 "$analyze" count "$2" "$3")
        if [ "$done_count" -ge "$4" ] &&
            curl -fs "http://$1/v1/cluster/moves" | grep -q '"moves":\[\]'; then
            return 0
        fi
        sleep 0.2
    done
    echo "bench-move: only $(python3 "$analyze" count "$2" "$3") of $4 moves of '$3' done" \
        "after $5 s" >&2
    tail -20 "$2" >&2
    exit 1
}

sizes() {  # server, topic
    "$narad" -s "http://$1" topic info "$2" | python3 "$analyze" sizes
}

# ---- 1. copy throughput ----------------------------------------------------------------------
s1="127.0.0.1:$base_port"
start_node "$base_port" 1 "$raw/p1-n1.log"
"$narad" -s "http://$s1" topic add mv --partitions 3 >/dev/null
# 64 KiB values, 12 per batch (a request body is at most 1 MiB), round-robin over the partitions.
fill_count=$((fill_mib * 16))
echo "bench-move: filling 'mv' with $fill_mib MiB" >&2
"$narad" -s "http://$s1" bench mv --count "$fill_count" --size 65536 --batch 12 \
    --connections 2 --json >"$raw/p1-fill.json" 2>/dev/null
sizes "$s1" mv >"$raw/p1-sizes.json"
echo "bench-move: partition sizes $(cat "$raw/p1-sizes.json")" >&2
echo "bench-move: plain durable copy of p00000" >&2
python3 "$analyze" copy "$data_dir/n1/topics/mv/p00000" "$data_dir/plain-copy" \
    >"$raw/plain-copy.json"
rm -rf "$data_dir/plain-copy"
echo "bench-move: n2 joins; one partition moves" >&2
start_node "$base_port" 2 "$raw/p1-n2.log"
wait_moves "$s1" "$raw/p1-n2.log" mv 1 120
curl -fs "http://127.0.0.1:$(port_of "$base_port" 2)/metrics" >"$raw/p1-n2.metrics"
stop_nodes
rm -rf "${data_dir:?}"/n*

# ---- 2. freeze durations under a steady write load --------------------------------------------
base2=$((base_port + 100))
s1="127.0.0.1:$base2"
start_node "$base2" 1 "$raw/p2-n1.log"
"$narad" -s "http://$s1" topic add fz --partitions 32 >/dev/null
echo "bench-move: filling 'fz' with 32 x 8 MiB" >&2
"$narad" -s "http://$s1" bench fz --count 4096 --size 65536 --batch 12 --connections 2 \
    --json >"$raw/p2-fill.json" 2>/dev/null
# 5 MiB/s of payload: 320 messages/s of 16 KiB, 4 per request, round-robin over 32 partitions.
load_flags="--rate 320 --size 16384 --batch 4 --connections 2"
size0=$(sizes "$s1" fz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
t0=$(date +%s.%N)
# shellcheck disable=SC2086
"$narad" -s "http://$s1" bench fz --duration 600s $load_flags >"$raw/p2-load.out" 2>&1 &
producer=$!
sleep 3
echo "bench-move: n2 joins under load; 16 partitions move" >&2
start_node "$base2" 2 "$raw/p2-n2.log"
wait_moves "$s1" "$raw/p2-n2.log" fz 16 150
echo "bench-move: n3 joins under load; 10 partitions move" >&2
start_node "$base2" 3 "$raw/p2-n3.log"
wait_moves "$s1" "$raw/p2-n3.log" fz 10 150
stop_pids "$producer"
producer=""
t1=$(date +%s.%N)
size1=$(sizes "$s1" fz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
cat >"$raw/p2-load.json" <<EOF
{"t0": $t0, "t1": $t1, "size0": $size0, "size1": $size1, "target_mib_s": 5.0,
 "flags": "narad bench fz $load_flags"}
EOF
stop_nodes
rm -rf "${data_dir:?}"/n*

# ---- 3. one large partition moves while it is written to --------------------------------------
if [ "$large_gib" -gt 0 ]; then
    base3=$((base_port + 200))
    s1="127.0.0.1:$base3"
    start_node "$base3" 1 "$raw/p3-n1.log"
    "$narad" -s "http://$s1" topic add big --partitions 3 >/dev/null
    echo "bench-move: filling partition 2 of 'big' with $large_gib GiB" >&2
    "$narad" -s "http://$s1" bench big --partition 2 --count $((large_gib * 16384)) \
        --size 65536 --batch 12 --connections 2 --json >"$raw/p3-fill.json" 2>/dev/null
    echo "bench-move: plain durable copy of 'big' p00002" >&2
    sync
    python3 "$analyze" copy "$data_dir/n1/topics/big/p00002" "$data_dir/plain-copy" \
        >"$raw/p3-plain-copy.json"
    rm -rf "$data_dir/plain-copy"
    sync
    echo '{"rate": 64, "size": 16384}' >"$raw/p3-probe-flags.json"
    python3 "$analyze" probe "$s1" big 2 64 16384 "$raw/p3-stop" "$raw/p3-probe.json" &
    producer=$!
    sleep 10
    echo "bench-move: n2 joins; partition 2 of 'big' moves while it is written to" >&2
    start_node "$base3" 2 "$raw/p3-n2.log"
    perf_pid=""
    if [ "${PERF:-0}" = 1 ]; then
        # The copy starts a few seconds after the join (the controller's next tick).
        (sleep 8; perf record -a -g -F 299 -o "$out_dir/move-perf.data" -- sleep 20 \
            >/dev/null 2>&1) &
        perf_pid=$!
    fi
    wait_moves "$s1" "$raw/p3-n2.log" big 1 $((large_gib * 60 + 120))
    [ -n "$perf_pid" ] && wait "$perf_pid"
    touch "$raw/p3-stop"
    wait "$producer"
    producer=""
fi
printf '{"date": "%s", "command": "%s", "commit": "%s", "load_start": %s, "load_end": %s, "cores": %s}\n' \
    "$started" "$command" "${NARAD_BENCH_COMMIT:-}" "$load_start" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(nproc)" >"$raw/run.json"
stop_nodes
python3 "$analyze" report "$raw" "$out_dir/moves.md"
if [ -n "${NARAD_BENCH_DOC:-}" ]; then
    python3 "$here/../doc_section.py" "$NARAD_BENCH_DOC" moves <"$out_dir/moves.md"
fi
