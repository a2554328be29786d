#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fails when the files of a source folder include each other in a circle.

Each unit is a stem: foo.c and foo.h are one unit, as a header declares what its
source defines. A unit depends on another when its .c or .h has an
`#include "…"` naming the other's header (a header of the folder; other includes
are ignored). Every circle of units (a strongly connected group) is reported with
the include lines that make it, and the exit status is 1; none: 0.

    tools/check-include-cycles.py [FOLDER]      (default: src/bus)
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_units(folder):
    """{unit: [(line, included header's unit), …]} for the .c and .h files of folder."""
    names = sorted(n for n in os.listdir(folder) if n.endswith((".c", ".h")))
    headers = {n[:-2] for n in names if n.endswith(".h")}
    units = {n[:-2]: [] for n in names}
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = os.path.basename(m.group(1))
                stem = target[:-2] if target.endswith(".h") else None
                if stem in headers and stem != name[:-2]:
                    units[name[:-2]].append((f"{name}:{number}: #include \"{m.group(1)}\"", stem))
    return units


def circles(units):
    """The strongly connected groups of more than one unit (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(u):
        index[u] = low[u] = len(index)
        stack.append(u)
        on_stack.add(u)
        for _, v in units[u]:
            if v not in index:
                visit(v)
                low[u] = min(low[u], low[v])
            elif v in on_stack:
                low[u] = min(low[u], index[v])
        if low[u] == index[u]:
            group = []
            while True:
                v = stack.pop()
                on_stack.discard(v)
                group.append(v)
                if v == u:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(1000, 10 * len(units)))
    for u in sorted(units):
        if u not in index:
            visit(u)
    return sorted(found)


def main(argv):
    folder = argv[1] if len(argv) > 1 else "src/bus"
    if not os.path.isdir(folder):
        print(f"{folder}: not a folder", file=sys.stderr)
        return 2
    units = read_units(folder)
    found = circles(units)
    for i, group in enumerate(found, 1):
        members = set(group)
        print(f"{folder}: circle {i} of {len(group)} units: {', '.join(group)}")
        for u in group:
            for line, v in units[u]:
                if v in members:
                    print(f"  {line}")
    if not found:
        print(f"{folder}: {len(units)} units, no include circle")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
