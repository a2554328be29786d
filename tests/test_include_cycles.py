# SPDX-License-Identifier: LGPL-2.1-or-later
"""tools/check-include-cycles.py on two fixture folders: top.c and middle.c include
each other's headers (a circle of two units, state.h outside it) and the same tree
with middle.c's include of top.h taken out (no circle)."""

import os
import subprocess
import sys

ROOT = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), ".."))
SCRIPT = os.path.join(ROOT, "tools", "check-include-cycles.py")
FIXTURES = os.path.join(ROOT, "tests", "include-cycles")


def check(folder):
    return subprocess.run([sys.executable, SCRIPT, os.path.join(FIXTURES, folder)], capture_output=True, text=True)


def test_a_circle_is_reported_with_its_files_and_lines():
    r = check("circle")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "circle 1 of 2 units: middle, top" in r.stdout
    assert 'middle.c:2: #include "top.h"' in r.stdout
    assert 'top.c:2: #include "middle.h"' in r.stdout
    assert "state" not in r.stdout.split("units:")[1].splitlines()[0]


def test_a_clean_tree_passes():
    r = check("clean")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no include circle" in r.stdout
