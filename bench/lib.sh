# Shell helpers the benchmark scripts share (sourced, not run).

# Waits up to 30 s for the node at SERVER (host:port) to answer /readyz; otherwise prints its log
# and ends the script.
wait_ready() {  # server, log
    for _ in $(seq 1 600); do
        curl -fs "http://$1/readyz" >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "$(basename "$0"): node $1 did not start" >&2
    cat "$2" >&2
    exit 1
}

# CPU ticks (user + system, of CLK_TCK) of each given process and every process under it (a node's
# etcd member), summed.
tree_ticks() {  # pid...
    local total=0 pid
    for pid in "$@" $(for p in "$@"; do pgrep -P "$p" || true; done); do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    echo "$total"
}

# CPU ticks (user + system) of each thread of process PID, one "name ticks" line per thread name
# (/proc/PID/task/*/comm: pools and workers name their threads narad-<role>), summed by name.
thread_ticks() {  # pid
    local task
    for task in /proc/"$1"/task/*; do
        [ -r "$task/stat" ] || continue
        printf '%s %s\n' "$(cat "$task/comm" 2>/dev/null)" \
            "$(sed 's/.*) //' "$task/stat" | awk '{print $12 + $13}')"
    done | awk '{ ticks[$1] += $2 } END { for (name in ticks) print name, ticks[name] }'
}

# One node, n1, of NARAD at 127.0.0.1:PORT (its cluster and etcd ports PORT+1 to PORT+3), security
# off, its data in DIR/n1 and its log in DIR/n1.log; further arguments go to `narad serve`. Sets
# node_pid and returns once the node is ready.
node_pid=""
start_single_node() {  # narad, port, dir, serve args...
    local narad=$1 port=$2 dir=$3
    shift 3
    NARAD_SECURITY_ENABLED=false "$narad" serve "$@" --node-id n1 --addr "127.0.0.1:$port" \
        --cluster-port $((port + 1)) --etcd-client-port $((port + 2)) \
        --etcd-peer-port $((port + 3)) --data-dir "$dir/n1" --log-format text --log-level warn \
        >"$dir/n1.log" 2>&1 &
    node_pid=$!
    wait_ready "127.0.0.1:$port" "$dir/n1.log"
}

# Stops the node start_single_node started, then removes DIR (for an EXIT trap).
stop_single_node() {  # dir
    if [ -n "$node_pid" ]; then
        kill "$node_pid" 2>/dev/null || true
        wait "$node_pid" 2>/dev/null || true
    fi
    rm -rf "$1"
}

# The commit a table is stamped with: NARAD_BENCH_COMMIT, else the checkout's HEAD.
bench_commit() {
    echo "${NARAD_BENCH_COMMIT:-$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --short HEAD \
        2>/dev/null || echo unknown)}"
}

# Prints TEXT and, with NARAD_BENCH_DOC set, also writes it into that file's NAME section
# (bench/doc_section.py).
publish_section() {  # name, text
    printf '%s\n' "$2"
    if [ -n "${NARAD_BENCH_DOC:-}" ]; then
        printf '%s\n' "$2" | python3 "$(dirname "${BASH_SOURCE[0]}")/doc_section.py" \
            "$NARAD_BENCH_DOC" "$1"
    fi
}
