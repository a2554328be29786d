#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Adds up the meson test logs of one tools/test-all.sh run into one closing line."""

import json
import sys

passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            result = json.loads(line).get("result")
            if result == "OK":
                passed += 1
            elif result not in ("SKIP", "EXPECTEDFAIL"):
                failed += 1
print(f"tests: {passed} passed, {failed} failed")
sys.exit(1 if failed or not passed else 0)
