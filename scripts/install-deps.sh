#!/usr/bin/env bash
# Installs every Debian package that building, testing, running and benchmarking Narad needs.
# Idempotent: it asks apt only for what is missing, and runs `apt-get update` only then.
set -euo pipefail

packages=(
    # toolchain
    build-essential cmake ccache clang-format clang-tidy git pkg-config
    # clang's thread-safety analysis (scripts/thread-safety.py, run by `make test`)
    clang
    # libraries (DESIGN.md "Decisions")
    libboost-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libxxhash-dev libzstd-dev
    libsimdjson-dev rapidjson-dev libsodium-dev zlib1g-dev
    # TLS on the API and cluster ports (Boost.Beast's ssl_stream), and the openssl tool the TLS
    # tests make their certificates with
    libssl-dev openssl
    # the metastore: a local etcd member per node (DESIGN.md "Metastore")
    etcd-server
    # tests and micro-benchmarks
    googletest libgtest-dev libgmock-dev libbenchmark-dev
    # tooling used by tests and `make run`
    curl python3 procps
    # the completion tests run the generated scripts in real shells
    fish zsh
    # the chaos suite's clock steps (tests/chaos, docs/reliability.md)
    faketime
    # `make bench`: the peer systems and their client libraries, workload files, profiling
    nats-server redis-server libnats-dev libhiredis-dev libyaml-cpp-dev linux-perf
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
