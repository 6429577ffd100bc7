#!/usr/bin/env python3
"""Checks that every module of src/ includes only modules listed before it in src/CMakeLists.txt.

Usage: scripts/check-layers.py [SRC_DIR]

The order of the add_subdirectory() lines is the layering (innermost first). A file of module M
may #include "N/..." only when N comes before M. A test beside the code (a name with "_test" or
"test_" in it) may also include the modules its narad_module() lists under TEST_DEPS.
Prints each include that breaks it and exits 1, or prints a one-line summary and exits 0.
"""

import os
import re
import sys


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    with open(os.path.join(src, "CMakeLists.txt")) as file:
        order = re.findall(r"^add_subdirectory\((\w+)\)", file.read(), re.M)
    rank = {module: i for i, module in enumerate(order)}
    include = re.compile(r'^\s*#\s*include\s+"(\w+)/[^"]+"', re.M)
    broken = []
    files = 0
    for module in order:
        with open(os.path.join(src, module, "CMakeLists.txt")) as file:
            declared = re.search(r"TEST_DEPS([^)]*)", file.read())
        test_deps = set(re.findall(r"narad_(\w+)", declared.group(1))) if declared else set()
        for root, _, names in os.walk(os.path.join(src, module)):
            for name in sorted(names):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(root, name)
                files += 1
                with open(path) as file:
                    text = file.read()
                for match in include.finditer(text):
                    used = match.group(1)
                    is_test = "_test" in name or "test_" in name
                    if is_test and used in test_deps:
                        continue
                    if used in rank and used != module and rank[used] > rank[module]:
                        line = text.count("\n", 0, match.start()) + 1
                        broken.append(f"{path}:{line}: {module}/ includes {used}/, which is "
                                      f"listed after it in {src}/CMakeLists.txt")
    for message in broken:
        print(message)
    print(f"check-layers: {files} files, {len(order)} modules, {len(broken)} includes out of order")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
