#!/usr/bin/env python3
"""One node's memory over a long run under steady load (bench/soak/run.sh).

    soak.py --narad BINARY --server HOST:PORT --pid PID --data-dir DIR
            [--minutes 30] [--rate 10000] [--backlog-rate 2000] [--interval 30]

Against a running node (PID is its process; its etcd member is found among its children), runs
two `narad bench` clients for MINUTES at once:

- a flow: RATE messages/s of 1 KiB produced in batches of 100 over 6 connections, consumed
  (max=100) and batch-acked by 3 consumer connections, which keep up;
- a backlog: BACKLOG_RATE messages/s of 1 KiB produced to another topic that nobody consumes, so
  the node holds an unconsumed backlog that grows for the whole run.

Every INTERVAL seconds it samples the resident memory of narad and of its etcd member and the
backlog's bytes on disk. Prints a markdown table on stdout (the samples, then whether the memory
stayed flat while the backlog grew); progress goes to stderr.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scale"))
from scale import etcd_pid, rss_kib  # noqa: E402


def progress(text):
    print(f"soak: {text}", file=sys.stderr, flush=True)


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass
    return total


def bench(args, topic, flags):
    command = [args.narad, "-s", args.server, "bench", topic, "--create", "--partitions", "6",
               "--duration", f"{args.minutes * 60}s", "--size", "1024", "--batch", "100",
               "--json"] + flags
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def mib(kib):
    return kib / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--narad", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=int, default=10000)
    parser.add_argument("--backlog-rate", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=30)
    args = parser.parse_args()
    etcd = etcd_pid(args.pid)
    backlog_dir = os.path.join(args.data_dir, "topics", "soak-backlog")

    def sample(elapsed):
        narad, member = rss_kib(args.pid), rss_kib(etcd) if etcd else 0
        return {"t": elapsed, "narad": narad, "etcd": member, "backlog": dir_bytes(backlog_dir)}

    samples = [sample(0.0)]
    progress(f"{args.minutes:g} min: flow {args.rate}/s, backlog {args.backlog_rate}/s, "
             f"1 KiB messages")
    flow = bench(args, "soak-flow", ["--rate", str(args.rate), "--connections", "6",
                                     "--consumers", "3", "--consume"])
    backlog = bench(args, "soak-backlog", ["--rate", str(args.backlog_rate),
                                           "--connections", "2"])
    start = time.monotonic()
    while flow.poll() is None or backlog.poll() is None:
        time.sleep(min(args.interval, 1.0))
        elapsed = time.monotonic() - start
        if elapsed - samples[-1]["t"] >= args.interval:
            samples.append(sample(elapsed))
            s = samples[-1]
            progress(f"{elapsed / 60:5.1f} min: narad {mib(s['narad']):.1f} MiB, etcd "
                     f"{mib(s['etcd']):.1f} MiB, backlog {s['backlog'] / 2**20:,.0f} MiB")
    if time.monotonic() - start - samples[-1]["t"] >= args.interval / 2:
        samples.append(sample(time.monotonic() - start))
    results = []
    for name, proc in (("flow", flow), ("backlog", backlog)):
        out = proc.stdout.read()
        if proc.returncode != 0:
            sys.exit(f"soak: the {name} client failed ({proc.returncode}): {out[:300]}")
        results.append(json.loads(out))
    flow_result, backlog_result = results

    def total(s):
        return mib(s["narad"] + s["etcd"])

    # The first minutes are warm-up (allocator arenas, the page of each open log); "flat" compares
    # the second half of the run with the end of its first.
    warm = [s for s in samples if s["t"] >= 60]
    half = args.minutes * 30
    first = [total(s) for s in warm if s["t"] <= half] or [total(warm[0])]
    second = [total(s) for s in warm if s["t"] > half] or [total(warm[-1])]
    print("| minute | narad RSS MiB | etcd RSS MiB | together MiB | backlog on disk MiB |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    step = max(1, len(samples) // 12)
    shown = samples[::step]
    if shown[-1] is not samples[-1]:
        shown.append(samples[-1])
    for s in shown:
        print(f"| {s['t'] / 60:.1f} | {mib(s['narad']):.1f} | {mib(s['etcd']):.1f} | "
              f"{total(s):.1f} | {s['backlog'] / 2**20:,.0f} |")
    print()
    print("| measure | value |\n| --- | --- |")
    produce, consume = flow_result["produce"], flow_result["consume"]
    p99 = (flow_result.get("end_to_end") or {}).get("p99_us", 0) / 1000
    print(f"| flow (1 KiB, batches of 100, 6 producers, 3 consumers) | produce "
          f"{produce['msgs_per_s']:,.0f} msg/s ({produce['messages_failed']:,} failed), "
          f"consume+ack {consume['msgs_per_s']:,.0f} msg/s, end-to-end p99 {p99:.1f} ms |")
    print(f"| backlog produced, never consumed | "
          f"{backlog_result['produce']['messages_ok']:,} messages "
          f"({backlog_result['produce']['messages_failed']:,} failed), "
          f"{samples[-1]['backlog'] / 2**20:,.0f} MiB on disk |")
    print(f"| narad + etcd RSS after the first minute: min / max | {min(first + second):.1f} / "
          f"{max(first + second):.1f} MiB |")
    print(f"| mean of the first half (after minute 1) / of the second half | "
          f"{statistics.mean(first):.1f} / {statistics.mean(second):.1f} MiB |")


if __name__ == "__main__":
    main()
