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
