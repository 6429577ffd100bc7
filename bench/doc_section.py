#!/usr/bin/env python3
"""Replaces one generated section of a markdown document with the text on stdin.

    doc_section.py DOC NAME < text

The section is everything between the lines `<!-- NAME:begin -->` and `<!-- NAME:end -->`; the
markers stay. A document without both markers is left alone and the call fails, so a renamed or
deleted section is noticed instead of silently not updated.
"""
import sys


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    path, name = argv
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    with open(path) as f:
        doc = f.read()
    start, stop = doc.find(begin), doc.find(end)
    if start < 0 or stop < start:
        sys.exit(f"doc_section: {path} has no {begin} ... {end} section")
    body = sys.stdin.read().strip("\n")
    doc = doc[: start + len(begin)] + "\n" + body + "\n" + doc[stop:]
    with open(path, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main(sys.argv[1:])
