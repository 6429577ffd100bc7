#!/usr/bin/env python3
"""What one node holds for many partitions and many idle connections (bench/scale/run.sh).

    scale.py --server HOST:PORT --pid PID [--topics 10 --partitions 100 --messages 3]
             [--connections 10000 --sources 10] [--evict-wait 200] [--maintenance-wait 61]

Against a running node (PID is its process; its etcd member is found among its children):

1. Partitions. Creates TOPICS topics of PARTITIONS partitions, writes MESSAGES messages of 256 B
   into every partition (batch produces pinned by `partition`), consumes and acks every one, then
   waits for the node to close the idle logs (storage.idle_log_eviction_ms) and reads one message
   back by offset from a closed log. Reports open files, resident memory (narad and its etcd) and
   the time of each step.
2. Connections. Opens CONNECTIONS keep-alive connections, spread over SOURCES loopback source
   addresses (127.0.1.1, 127.0.1.2, ...), sends one GET /healthz on each and leaves it open; then
   times requests on a new connection while they are held, and closes them. Reports the node's
   resident memory and open files per held connection, and its memory once closed and again
   after its next maintenance pass (which returns freed memory to the system).

Prints a markdown table on stdout; progress goes to stderr.
"""
import argparse
import base64
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time


def progress(text):
    print(f"scale: {text}", file=sys.stderr, flush=True)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_files(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def etcd_pid(pid):
    for child in children(pid):
        with open(f"/proc/{child}/comm") as f:
            if f.read().strip().startswith("etcd"):
                return child
    return None


class Node:
    def __init__(self, server, pid):
        self.host, port = server.rsplit(":", 1)
        self.port = int(port)
        self.pid = pid
        self.etcd = etcd_pid(pid)
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def call(self, method, path, body=None, expect=(200,)):
        headers = {"X-Narad-Client": "narad-bench-scale"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        text = response.read()
        if response.status not in expect:
            sys.exit(f"scale: {method} {path} answered {response.status}: {text[:300]!r}")
        return response.status, (json.loads(text) if text else None)

    def metric(self, name):
        self.conn.request("GET", "/metrics")
        response = self.conn.getresponse()
        total = 0.0
        for line in response.read().decode().splitlines():
            if line.startswith(name) and (len(line) == len(name) or line[len(name)] in " {"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def sample(self):
        etcd = rss_kib(self.etcd) if self.etcd else 0
        return {"files": open_files(self.pid), "rss": rss_kib(self.pid), "etcd_rss": etcd}


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def partitions_phase(node, args, rows):
    payload = base64.b64encode(os.urandom(192)).decode()  # 256 bytes of text
    total_partitions = args.topics * args.partitions
    total = total_partitions * args.messages
    before = node.sample()

    start = time.monotonic()
    for t in range(args.topics):
        node.call("POST", "/v1/topics", {"name": f"scale-{t}", "partitions": args.partitions},
                  expect=(201,))
    created_s = time.monotonic() - start
    progress(f"created {args.topics} topics in {created_s:.1f} s")

    start = time.monotonic()
    for t in range(args.topics):
        messages = [{"partition": p, "payload": payload}
                    for p in range(args.partitions) for _ in range(args.messages)]
        for i in range(0, len(messages), 1000):
            node.call("POST", f"/v1/topics/scale-{t}/produce/batch",
                      {"messages": messages[i:i + 1000]}, expect=(202,))
    produced_s = time.monotonic() - start
    progress(f"wrote {total} messages in {produced_s:.1f} s")

    start = time.monotonic()
    consumed = 0
    for t in range(args.topics):
        empty = 0
        while empty < 2:
            status, body = node.call("GET", f"/v1/topics/scale-{t}/consume?max=100&wait=200ms",
                                     expect=(200, 204))
            if status == 204:
                empty += 1
                continue
            handles = [m["receipt_handle"] for m in body["messages"]]
            node.call("POST", f"/v1/topics/scale-{t}/ack", {"receipt_handles": handles})
            consumed += len(handles)
    consumed_s = time.monotonic() - start
    used = node.sample()  # every log has been written and read
    open_logs = node.metric("narad_partitions_total")
    progress(f"consumed and acked {consumed} of {total} in {consumed_s:.1f} s")
    if consumed != total:
        sys.exit(f"scale: consumed {consumed} messages, wrote {total}")

    start = time.monotonic()
    evicted = node.metric("narad_idle_logs_evicted_total")
    while evicted < total_partitions and time.monotonic() - start < args.evict_wait:
        time.sleep(1)
        evicted = node.metric("narad_idle_logs_evicted_total")
    waited_s = time.monotonic() - start
    idle = node.sample()
    progress(f"{evicted:.0f} logs closed after {waited_s:.0f} s idle")
    start = time.monotonic()
    status, body = node.call("GET", "/v1/topics/scale-0/consume?partition=7&offset=0")
    reopen_ms = (time.monotonic() - start) * 1000
    if body.get("payload") != payload:
        sys.exit("scale: the message read back from a closed log differs")

    per = (used["files"] - before["files"]) / total_partitions
    closed = "a closed log (reopens it)" if evicted >= total_partitions else "a log still open"
    rows += [
        ("partitions", f"{args.topics} topics x {args.partitions} = {total_partitions:,}, "
                       f"{args.messages} messages of 256 B in each ({total:,})"),
        ("create every topic", f"{created_s:.1f} s"),
        ("write every message (batches of up to 1,000, pinned)", f"{produced_s:.1f} s"),
        ("consume and ack every message (max=100, batch ack)",
         f"{consumed_s:.1f} s, {consumed:,} of {total:,}"),
        ("open files: before / every log written and read / logs closed",
         f"{before['files']:,} / {used['files']:,} ({per:.1f} per partition; "
         f"narad_partitions_total {open_logs:.0f}) / {idle['files']:,}"),
        ("narad RSS: before / every log written and read / logs closed",
         f"{mib(before['rss'])} / {mib(used['rss'])} / {mib(idle['rss'])}"),
        ("etcd RSS: before / after", f"{mib(before['etcd_rss'])} / {mib(idle['etcd_rss'])}"),
        ("logs closed idle (narad_idle_logs_evicted_total)",
         f"{evicted:,.0f} of {total_partitions:,}, {waited_s:.0f} s after the last read"),
        (f"one message read by offset from {closed}", f"{reopen_ms:.1f} ms"),
    ]


def http_get(sock, path=b"/healthz"):
    sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: narad\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += sock.recv(4096)
    return int(head.split(b" ", 2)[1])


def connections_phase(node, args, rows):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 1024
    if soft < want:
        limit = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    before = node.sample()
    held = []
    refused = 0
    start = time.monotonic()
    for i in range(args.connections):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((f"127.0.1.{1 + i % args.sources}", 0))
        sock.connect((node.host, node.port))
        if http_get(sock) != 200:
            refused += 1
        held.append(sock)
    opened_s = time.monotonic() - start
    time.sleep(0.5)  # let the node's reads park before sampling
    holding = node.sample()
    progress(f"holding {len(held)} connections ({refused} refused)")

    latencies = []
    for _ in range(50):
        sock = socket.create_connection((node.host, node.port))
        t = time.monotonic()
        http_get(sock)
        latencies.append((time.monotonic() - t) * 1000)
        sock.close()
    for sock in held:
        sock.close()
    time.sleep(1)
    closed = node.sample()
    time.sleep(args.maintenance_wait)  # the node's next maintenance pass returns freed memory
    settled = node.sample()
    n = len(held)
    rows += [
        ("idle keep-alive connections held",
         f"{n:,} from {args.sources} source addresses, opened with one GET /healthz each in "
         f"{opened_s:.1f} s ({refused} not answered 200)"),
        (f"narad RSS: before / holding / closed / {args.maintenance_wait:.0f} s later",
         f"{mib(before['rss'])} / {mib(holding['rss'])} / {mib(closed['rss'])} / "
         f"{mib(settled['rss'])}"),
        ("memory per held connection",
         f"{(holding['rss'] - before['rss']) * 1024 / max(n, 1):,.0f} B"),
        ("open files per held connection", f"{(holding['files'] - before['files']) / max(n, 1):.2f}"),
        ("GET /healthz on a new connection while they are held",
         f"p50 {statistics.median(latencies):.2f} ms, max {max(latencies):.2f} ms (50 requests)"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--sources", type=int, default=10)
    parser.add_argument("--evict-wait", type=float, default=200)
    parser.add_argument("--maintenance-wait", type=float, default=61)
    args = parser.parse_args()
    node = Node(args.server, args.pid)
    rows = []
    partitions_phase(node, args, rows)
    connections_phase(node, args, rows)
    print("| measure | value |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
