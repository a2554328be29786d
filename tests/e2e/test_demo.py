# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's first command runs here, so it cannot rot: tools/demo.sh is
install-deps + build + setup-docker (all done before this suite runs) and then
tools/demo.py, the main job, which this runs for real."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_names_the_demo():
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "tools/demo.sh" in readme
    demo_sh = open(os.path.join(ROOT, "tools", "demo.sh")).read()
    assert "tools/demo.py" in demo_sh


def test_demo_runs_a_verified_lifecycle():
    env = dict(os.environ, SBX_BUILD_ROOT=os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build")))
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "demo.py")], env=env,
                       capture_output=True, text=True, timeout=300)
    sys.stdout.write(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for step in ("Create a sandbox", "Show it", "Verify it against the spec", "Snapshot it",
                 "Stop it", "Delete it", "None of it is left"):
        assert f"### {step}" in out
    assert "hardened: yes" in out
    assert "verdict: match" in out
    assert "verdict: mismatch" in out and "mismatched_fields: memory" in out
    assert out.rstrip().endswith("Demo complete: a verified sandbox lifecycle through the bus.")
    name = out.split("The sandbox: ", 1)[1].split()[0]
    assert name in out.split("### Create a sandbox", 1)[1].split("### Show it")[0]
    assert name not in out.split("### None of it is left", 1)[1]
