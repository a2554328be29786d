#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The test files of a pytest suite directory (tests/e2e, tests/fault), one per line,
sorted: meson runs this when it configures and makes each file a test of its own, so a
new test_*.py needs no line in meson.build.

    list-test-files.py DIR                  prints DIR's test_*.py
    list-test-files.py --check DIR NAME...  fails when NAME... (what meson was configured
                                            with) is not DIR's test_*.py of now: a file
                                            added or removed since `meson setup`
"""

import os
import sys


def test_files(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith("test_") and n.endswith(".py"))


def main(argv):
    if argv[:1] == ["--check"]:
        directory, configured = argv[1], sorted(argv[2:])
        now = test_files(directory)
        if now == configured:
            return 0
        for n in sorted(set(now) - set(configured)):
            print(f"{directory}/{n} is not a meson test yet: run `meson setup --reconfigure BUILD`")
        for n in sorted(set(configured) - set(now)):
            print(f"{directory}/{n} is a meson test but no longer a file: reconfigure")
        return 1
    print("\n".join(test_files(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
