#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The test files of a pytest suite directory (tests/e2e): meson runs this
when it configures and makes each file a test of its own, so a new test_*.py needs no
line in meson.build.

    list-test-files.py DIR                  DIR's test_*.py, sorted, one a line, each
                                            with its seconds in DIR/README.md's table
                                            (tools/e2e-times.py; 0 when not measured)
    list-test-files.py --check DIR NAME...  fails when NAME... (what meson was configured
                                            with) is not DIR's test_*.py of now: a file
                                            added or removed since `meson setup`
"""

import os
import re
import sys

BEGIN = "<!-- test-times: begin -->"
END = "<!-- test-times: end -->"


def test_files(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith("test_") and n.endswith(".py"))


def read_times(readme):
    """file → seconds, from the generated table of a README (empty without one)."""
    try:
        with open(readme) as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    if BEGIN not in text or END not in text:
        return {}
    section = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^\| `(test_[A-Za-z0-9_]+\.py)` \| ([0-9]+) \|", section, re.M)}


def check(directory, configured):
    now = test_files(directory)
    for n in sorted(set(now) - set(configured)):
        print(f"{directory}/{n} is not a meson test yet: run `meson setup --reconfigure BUILD`")
    for n in sorted(set(configured) - set(now)):
        print(f"{directory}/{n} is a meson test but no longer a file: reconfigure")
    return 0 if now == sorted(configured) else 1


def main(argv):
    if argv[:1] == ["--check"]:
        return check(argv[1], argv[2:])
    times = read_times(os.path.join(argv[0], "README.md"))
    for name in test_files(argv[0]):
        print(name, times.get(name, 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
