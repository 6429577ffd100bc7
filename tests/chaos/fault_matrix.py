#!/usr/bin/env python3
"""Runs the chaos suite once per nemesis and writes the fault matrix of docs/reliability.md.

Each row is one run of the faults leg limited to one fault kind (NARAD_CHAOS_FAULTS), with the
join and the decommission that every faults run has, plus one row for the strict leg. The
figures come from the run's own report line and from the checker's verdict of its history.

    python3 tests/chaos/fault_matrix.py --binary build/test/tests/chaos_test \\
        --duration 90s --seed 7 --write docs/reliability.md

`make chaos-matrix` runs exactly that. The table is written between the markers
<!-- fault-matrix:begin --> and <!-- fault-matrix:end --> of the file given to --write.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

KINDS = ["kill", "power_cut", "clock_step", "pause", "pause_past_freeze_ttl", "isolate",
         "cut_one_way", "etcd_pause", "disk_full", "abort", "kill_move_side", "kill_at_move_phase",
         "topic_recreate", "pause_past_force_promote"]
# Extra environment of single rows: the force-promote row shortens move.force_promote_after, and
# one row per named move phase crashes a node at that phase only.
PHASES = ["move.after_catch_up_pass", "move.source.before_final_listing", "move.finalize_pass",
          "move.before_fence", "move.before_flip", "move.install"]
ROW_ENV = {"pause_past_force_promote": {"NARAD_CHAOS_FORCE_PROMOTE_AFTER": "10s"}}
for _phase in PHASES:
    KINDS.append(f"kill_at_move_phase:{_phase}")
    ROW_ENV[f"kill_at_move_phase:{_phase}"] = {"NARAD_CHAOS_MOVE_PHASE": _phase}
BEGIN, END = "<!-- fault-matrix:begin -->", "<!-- fault-matrix:end -->"
REPORT = re.compile(r"^chaos (strict|faults) seed=\d+: .*$", re.MULTILINE)


def run_leg(binary, test, env, out_dir):
    """Runs one gtest of the chaos binary; returns (passed, report line, verdict dict)."""
    env = dict(os.environ, NARAD_CHAOS_OUT=out_dir, **env)
    run = subprocess.run([binary, f"--gtest_filter=ChaosTest.{test}"], env=env, cwd=out_dir,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         check=False)
    match = REPORT.search(run.stdout)
    verdicts = sorted((os.path.join(out_dir, name) for name in os.listdir(out_dir)
                       if name.endswith(".verdict.json")), key=os.path.getmtime)
    verdict = {}
    if verdicts:
        with open(verdicts[-1], encoding="utf-8") as file:
            verdict = json.load(file)
        os.remove(verdicts[-1])
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-4000:])
    return run.returncode == 0, match.group(0) if match else "", verdict


def figure(report, pattern):
    """One number out of a report line ('-' when absent)."""
    match = re.search(pattern, report)
    return match.group(1) if match else "-"


def row(name, command, passed, report, verdict):
    """One markdown row."""
    counts = verdict.get("counts", {})
    # The nemesis' own counts name more than the history's kinds (the phase of a move crash).
    faults = figure(report, r"faults: (.*?); moves")
    moves = "/".join(figure(report, pattern) for pattern in
                     (r"moves completed (\d+)", r"aborted (\d+)", r"force-promoted (\d+)",
                      r"quarantined copies (\d+)"))
    p50 = figure(report, r"p50 <= (-?\d+) ms")
    p99 = figure(report, r"p99 <= (-?\d+) ms")
    freeze = f"{p50} / {p99}"
    cells = [name, verdict.get("verdict", "none") + ("" if passed else " (test failed)"),
             str(counts.get("produced_ok", "-")), faults, str(counts.get("lost", "-")),
             str(counts.get("corrupted", "-")),
             f"{counts.get('stranded', '-')} / {counts.get('diverged_offsets', '-')}",
             f"{counts.get('duplicates_explained', '-')} / "
             f"{counts.get('duplicates_unexplained', '-')}",
             moves, freeze, f"`{command}`"]
    return "| " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="build/test/tests/chaos_test")
    parser.add_argument("--duration", default="90s")
    parser.add_argument("--seed", default="7")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--write", help="file whose fault-matrix section is replaced")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    header = ("| nemesis | verdict | accepted | faults injected | lost | corrupted | "
              "stranded / diverged offsets | duplicates explained / not | moves completed / "
              "aborted / force-promoted / quarantined | freeze p50 / p99 (ms, bucket bound) | "
              "command |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    all_passed = True
    with tempfile.TemporaryDirectory() as out_dir:
        base = f"NARAD_CHAOS_SEED={args.seed}"
        passed, report, verdict = run_leg(binary, "StrictLegJoinAndDecommissionWithoutFaults",
                                          {"NARAD_CHAOS_SEED": args.seed}, out_dir)
        all_passed &= passed
        rows.append(row("none (strict leg: join + decommission)",
                        f"{base} {args.binary} --gtest_filter=ChaosTest.Strict*", passed, report,
                        verdict))
        print(rows[-1], flush=True)
        for kind in args.kinds.split(","):
            fault = kind.split(":")[0]  # kill_at_move_phase:<phase> is that fault, one phase
            env = {"NARAD_CHAOS_SEED": args.seed, "NARAD_CHAOS_FAULTS": fault,
                   "NARAD_CHAOS_DURATION": args.duration, **ROW_ENV.get(kind, {})}
            extra = "".join(f"{name}={value} " for name, value in ROW_ENV.get(kind, {}).items())
            passed, report, verdict = run_leg(binary, "FaultsLegKillsPausesAndMoves", env,
                                              out_dir)
            all_passed &= passed
            command = (f"{base} NARAD_CHAOS_FAULTS={fault} {extra}"
                       f"NARAD_CHAOS_DURATION={args.duration} "
                       f"{args.binary} --gtest_filter=ChaosTest.Faults*")
            rows.append(row(kind, command, passed, report, verdict))
            print(rows[-1], flush=True)
    table = header + "\n" + "\n".join(rows)
    if args.write:
        with open(args.write, encoding="utf-8") as file:
            text = file.read()
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        with open(args.write, "w", encoding="utf-8") as file:
            file.write(text[:start] + "\n" + table + "\n" + text[end:])
    else:
        print(table)
    return 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
