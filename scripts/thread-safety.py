#!/usr/bin/env python3
"""Runs clang's thread-safety analysis over every translation unit of a build.

Usage: scripts/thread-safety.py [--build DIR] [--jobs N] [PATH_FRAGMENT...]

Reads DIR/compile_commands.json (the test build, build/test, by default: it compiles every source
and test), and parses each file with clang++ -fsyntax-only -Wthread-safety -Werror: the analysis
runs in the front end, so nothing is generated or linked. Precompiled-header flags are dropped
(the PCH is GCC's). With PATH_FRAGMENTs, only files whose path contains one are checked. Exits 1
and prints clang's diagnostics if any file has a finding.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

FLAGS = [
    "-fsyntax-only", "-ferror-limit=0", "-Wthread-safety", "-Werror=thread-safety",
    "-Werror=ignored-attributes",  # an annotation the analysis would silently drop
    "-Wno-unknown-warning-option",
]


def find_clang():
    for name in ("clang++", "clang++-16", "clang++-15", "clang++-14"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("thread-safety: clang++ not found (scripts/install-deps.sh installs it)")


def clang_command(clang, entry):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = [clang] + FLAGS
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-include") or arg == "-c":
            skip = arg != "-c"
            continue
        if arg.startswith("-W"):  # the build's own warnings are GCC's business
            continue
        out.append(arg)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/test")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("paths", nargs="*")
    options = parser.parse_args()

    database = os.path.join(options.build, "compile_commands.json")
    if not os.path.exists(database):
        sys.exit(f"thread-safety: {database} is missing; run `make test-build` first")
    with open(database) as file:
        entries = json.load(file)
    entries = [e for e in entries if "cmake_pch" not in e["file"]]
    if options.paths:
        entries = [e for e in entries if any(p in e["file"] for p in options.paths)]
    clang = find_clang()

    def check(entry):
        result = subprocess.run(clang_command(clang, entry), cwd=entry["directory"], capture_output=True,
                                text=True)
        return entry["file"], result.returncode, result.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        for path, code, diagnostics in pool.map(check, entries):
            if code != 0 or diagnostics:
                failed += code != 0
                sys.stdout.write(diagnostics)
    print(f"thread-safety: {len(entries)} files checked, {failed} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
