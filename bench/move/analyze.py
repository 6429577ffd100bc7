#!/usr/bin/env python3
"""Helpers for bench/move/run.sh (standard library only).

  analyze.py copy SRC DST            durable copy of directory SRC to DST (4 MiB chunks, fsync of
                                     every file and of DST); prints {"bytes", "seconds", "files"}
  analyze.py sizes                   reads `narad topic info` JSON on stdin; prints the partition
                                     sizes as JSON {"total": N, "partitions": {index: size_bytes}}
  analyze.py count LOG TOPIC         prints how many moves of TOPIC the node log says are done
  analyze.py probe SERVER TOPIC PARTITION RATE SIZE STOP OUT
                                     single produces of SIZE bytes pinned to PARTITION, RATE a
                                     second, one at a time, until the file STOP exists; writes
                                     [[wall time, latency ms, status], ...] to OUT
  analyze.py report RAW_DIR OUT_MD   reads what run.sh left in RAW_DIR, prints the markdown table
                                     and writes it to OUT_MD (and the numbers to OUT_MD's .json)
"""
import datetime
import http.client
import json
import math
import os
import re
import sys
import time

CHUNK = 4 << 20
MIB = 1 << 20

# The destination's line when a move is done (src/move/worker.cc, MoveWorker::run).
DONE = re.compile(
    r"^(?P<ts>\S+) +info +move of '(?P<topic>[^']+)' partition (?P<partition>\d+) from "
    r"(?P<source>\S+) done in (?P<seconds>[\d.]+)s: (?P<bytes>\d+) bytes in (?P<passes>\d+) "
    r"passes, source frozen for (?P<freeze_ms>\d+) ms(?P<nc> \(non-converged cutover\))?")
START = re.compile(r"^(?P<ts>\S+) +info +move of '(?P<topic>[^']+)' partition (?P<partition>\d+) "
                   r"from (?P<source>\S+) starts")
FROZE = re.compile(r"^(?P<ts>\S+) +info +move: froze '(?P<topic>[^']+)' partition "
                   r"(?P<partition>\d+) for handoff")


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy(src, dst):
    started = time.monotonic()
    os.makedirs(dst)
    total = 0
    files = 0
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb", buffering=0) as fin, open(os.path.join(dst, name), "wb",
                                                        buffering=0) as fout:
            while True:
                chunk = fin.read(CHUNK)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[fout.write(view):]
                total += len(chunk)
            os.fsync(fout.fileno())
        files += 1
    fsync_dir(dst)
    fsync_dir(os.path.dirname(os.path.abspath(dst)))
    seconds = time.monotonic() - started
    print(json.dumps({"bytes": total, "seconds": seconds, "files": files}))


def sizes():
    info = json.load(sys.stdin)
    parts = {str(p["index"]): p["size_bytes"] for p in info["partition_stats"]}
    print(json.dumps({"total": sum(parts.values()), "partitions": parts}))


def done_lines(path, topic=None):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            m = DONE.match(line)
            if m and (topic is None or m["topic"] == topic):
                out.append(m)
    return out


def first_match(path, pattern, topic, partition):
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        for line in f:
            m = pattern.match(line)
            if m and m["topic"] == topic and m["partition"] == partition:
                return m
    return None


def probe(server, topic, partition, rate, size, stop, out):
    host, port = server.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    body = os.urandom(int(size))
    path = f"/v1/topics/{topic}/produce?partition={partition}"
    headers = {"Content-Type": "application/octet-stream"}
    interval = 1.0 / float(rate)
    samples = []
    due = time.monotonic()
    while not os.path.exists(stop):
        due += interval
        wall, t = time.time(), time.monotonic()
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            status = response.status
        except OSError:
            status = 0
            conn.close()
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
        samples.append([wall, (time.monotonic() - t) * 1000, status])
        time.sleep(max(0.0, due - time.monotonic()))
    with open(out, "w") as f:
        json.dump(samples, f)


def wall_seconds(ts):
    # A node log's time (UTC, 2026-11-30T22:54:28.450) as Unix time, to line up with probe().
    parsed = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%f")
    return parsed.replace(tzinfo=datetime.timezone.utc).timestamp()


def ts_seconds(ts):
    # 2026-11-30T22:54:28.450 (local time of one machine: only differences are used)
    day, clock = ts.split("T")
    h, m, s = clock.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def metric(path, name):
    with open(path) as f:
        for line in f:
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    return None


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def load(path):
    with open(path) as f:
        return json.load(f)


def report(raw, out_md):
    env = load(os.path.join(raw, "run.json"))
    base = load(os.path.join(raw, "plain-copy.json"))
    # Part 1: the one move of topic mv.
    moves = done_lines(os.path.join(raw, "p1-n2.log"), "mv")
    if len(moves) != 1:
        sys.exit(f"report: expected 1 move of 'mv' on n2, found {len(moves)}")
    move = moves[0]
    moved_bytes = int(move["bytes"])
    move_seconds = float(move["seconds"])
    m_path = os.path.join(raw, "p1-n2.metrics")
    m_bytes = metric(m_path, "narad_moves_bytes_total")
    m_seconds = metric(m_path, "narad_moves_duration_seconds_sum")
    started = first_match(os.path.join(raw, "p1-n2.log"), START, "mv", move["partition"])
    froze = first_match(os.path.join(raw, "p1-n1.log"), FROZE, "mv", move["partition"])
    precopy_s = (ts_seconds(froze["ts"]) - ts_seconds(started["ts"])) if started and froze else None
    plain_mibs = base["bytes"] / MIB / base["seconds"]
    move_mibs = moved_bytes / MIB / move_seconds
    metric_mibs = m_bytes / MIB / m_seconds if m_bytes and m_seconds else None
    precopy_mibs = moved_bytes / MIB / precopy_s if precopy_s and precopy_s > 0 else None
    sizes1 = load(os.path.join(raw, "p1-sizes.json"))

    # Part 2: every move of topic fz onto n2 and n3.
    samples = []
    for node in ("n2", "n3"):
        for m in done_lines(os.path.join(raw, f"p2-{node}.log"), "fz"):
            samples.append({"node": node, "partition": int(m["partition"]),
                            "source": m["source"], "freeze_ms": int(m["freeze_ms"]),
                            "seconds": float(m["seconds"]), "bytes": int(m["bytes"]),
                            "passes": int(m["passes"]), "non_converged": bool(m["nc"])})
    freezes = [s["freeze_ms"] for s in samples]
    load2 = load(os.path.join(raw, "p2-load.json"))
    load_s = load2["t1"] - load2["t0"]
    grown = load2["size1"] - load2["size0"]
    achieved = grown / MIB / load_s if load_s > 0 else 0.0

    def f1(x):
        return "–" if x is None else f"{x:.1f}"

    freeze_text = "–"
    if freezes:
        freeze_text = (f"{nearest_rank(freezes, 0.5)} / {nearest_rank(freezes, 0.99)} / "
                       f"{max(freezes)}")
    rows = [
        ("date", env["date"] + (f", commit {env['commit']}" if env.get("commit") else "")),
        ("bytes moved (one partition of 3, topic filled with "
         f"{sizes1['total'] / MIB:.0f} MiB)", f"{moved_bytes:,} ({moved_bytes / MIB:.1f} MiB)"),
        ("plain durable copy, same disk (4 MiB chunks, fsync per file + dir)",
         f"{plain_mibs:.1f} MiB/s ({base['bytes'] / MIB:.1f} MiB in {base['seconds']:.3f} s)"),
        ("move, from the destination's log line (start → flip)",
         f"{move_mibs:.1f} MiB/s ({move_seconds:.3f} s, {move['passes']} passes, "
         f"frozen {move['freeze_ms']} ms)"),
        ("move, from n2's /metrics (bytes_total / duration_seconds_sum)",
         f"{f1(metric_mibs)} MiB/s"),
        ("move pre-copy only (start → source frozen, from the two logs)",
         f"{f1(precopy_mibs)} MiB/s" + (f" ({precopy_s:.3f} s)" if precopy_s else "")),
        ("**ratio move / plain copy** (goal ≥ 0.9)", f"**{move_mibs / plain_mibs:.2f}**"),
        ("freeze p50 / p99 / max ms under load (goal p50 < 30, p99 < 100; p99 = max below 100 "
         "samples)", freeze_text),
        ("freeze samples (moves onto n2 + n3)",
         f"{len(samples)} ({sum(s['node'] == 'n2' for s in samples)} + "
         f"{sum(s['node'] == 'n3' for s in samples)})"),
        ("non-converged cutovers", str(sum(s["non_converged"] for s in samples))),
        ("write load during the freeze runs",
         f"target {load2['target_mib_s']:.1f} MiB/s of payload over all 32 partitions "
         f"({load2['flags']}); achieved {achieved:.1f} MiB/s of log growth over {load_s:.0f} s"),
        ("machine load (1-min load average at start / end, all users)",
         f"{env.get('load_start', '?')} / {env.get('load_end', '?')} on "
         f"{env.get('cores', '?')} cores"),
        ("command", f"`{env['command']}`"),
    ]
    large = large_rows(raw, plain_mibs)
    rows[-2:-2] = large["rows"]
    lines = ["| measure | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    text = "\n".join(lines) + "\n"
    with open(out_md, "w") as f:
        f.write(text)
    numbers = {
        "date": env["date"], "command": env["command"],
        "copy": {"bytes_moved": moved_bytes, "move_seconds": move_seconds,
                 "move_mib_s": move_mibs, "metrics_mib_s": metric_mibs,
                 "precopy_seconds": precopy_s, "precopy_mib_s": precopy_mibs,
                 "plain_copy": base, "plain_mib_s": plain_mibs,
                 "ratio": move_mibs / plain_mibs, "freeze_ms": int(move["freeze_ms"]),
                 "passes": int(move["passes"]), "partition_sizes": sizes1},
        "freeze": {"samples": samples, "load": load2, "achieved_mib_s": achieved},
        "large": large["numbers"],
    }
    with open(os.path.splitext(out_md)[0] + ".json", "w") as f:
        json.dump(numbers, f, indent=1)
    print(text)


def large_rows(raw, plain_mibs):  # plain_mibs: part 1's plain copy
    """Part 3, when it ran: one large partition moved while a probe writes to it."""
    log = os.path.join(raw, "p3-n2.log")
    moves = done_lines(log, "big")
    if not moves:
        return {"rows": [], "numbers": None}
    move = moves[0]
    started = first_match(log, START, "big", move["partition"])
    begin, end = wall_seconds(started["ts"]), wall_seconds(move["ts"])
    samples = load(os.path.join(raw, "p3-probe.json"))
    probe_flags = load(os.path.join(raw, "p3-probe-flags.json"))
    before = [ms for wall, ms, status in samples if wall < begin]
    during = [ms for wall, ms, status in samples if begin <= wall <= end]
    failed = [s for s in samples if s[2] != 202]
    moved = int(move["bytes"])
    mibs = moved / MIB / float(move["seconds"])
    base = load(os.path.join(raw, "p3-plain-copy.json"))
    base_mibs = base["bytes"] / MIB / base["seconds"]

    def spread(values):
        if not values:
            return "–"
        return (f"p50 {nearest_rank(values, 0.5):.1f} / p99 {nearest_rank(values, 0.99):.1f} / "
                f"max {max(values):.1f} ms ({len(values)} writes)")

    rows = [
        ("large move: plain durable copy of the partition, same disk",
         f"{base_mibs:.1f} MiB/s ({base['bytes'] / MIB:,.0f} MiB in {base['seconds']:.1f} s)"),
        (f"large move: one partition of {moved / (1 << 30):.2f} GiB ({moved:,} bytes)",
         f"{mibs:.1f} MiB/s start → flip ({float(move['seconds']):.1f} s, {move['passes']} "
         f"passes), **{mibs / base_mibs:.2f}×** its plain copy ({mibs / plain_mibs:.2f}× part "
         f"1's); frozen {move['freeze_ms']} ms"),
        ("large move: produce latency on the moving partition "
         f"({probe_flags['rate']}/s single produces of {probe_flags['size'] // 1024} KiB, "
         "one at a time), before the move / during the copy",
         f"{spread(before)} / {spread(during)}; {len(failed)} not answered 202"),
    ]
    numbers = {"bytes": moved, "seconds": float(move["seconds"]), "mib_s": mibs,
               "plain_copy": base, "plain_mib_s": base_mibs, "ratio": mibs / base_mibs, "freeze_ms": int(move["freeze_ms"]),
               "probe_before_ms": before, "probe_during_ms": during, "probe_failed": len(failed)}
    return {"rows": rows, "numbers": numbers}


def main(argv):
    if len(argv) >= 3 and argv[0] == "copy":
        copy(argv[1], argv[2])
    elif argv[:1] == ["sizes"]:
        sizes()
    elif len(argv) == 8 and argv[0] == "probe":
        probe(*argv[1:])
    elif len(argv) == 3 and argv[0] == "count":
        print(len(done_lines(argv[1], argv[2])))
    elif len(argv) == 3 and argv[0] == "report":
        report(argv[1], argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
