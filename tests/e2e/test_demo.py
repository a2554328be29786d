# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's first command runs here, so it cannot rot: tools/demo.sh is
install-deps + build + setup-docker (all done before this suite runs) and then
tools/demo.py, the main job, which this runs for real. It checks every step's
output and stops at the first step that fails: two runs with a sabotaged client
show that."""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
STEPS = ("Create a sandbox", "List my sandboxes", "Show it", "Verify it against the spec",
         "Verify it against a different spec", "Run a command in it", "Copy a file into it",
         "Copy it back out", "Open a shell in it", "Snapshot it", "List my snapshots", "Stop it",
         "Delete it", "Delete the snapshot", "None of it is left")


def run_demo(build=BUILD):
    env = dict(os.environ, SBX_BUILD_ROOT=build)
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "demo.py")], env=env,
                       capture_output=True, text=True, timeout=300)
    sys.stdout.write(r.stdout)
    return r


def steps_run(out):
    return [s for s in STEPS if f"### {s}" in out]


def test_readme_names_the_demo():
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "tools/demo.sh" in readme
    demo_sh = open(os.path.join(ROOT, "tools", "demo.sh")).read()
    assert "tools/demo.py" in demo_sh


def test_demo_runs_a_verified_lifecycle():
    r = run_demo()
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert steps_run(out) == list(STEPS)
    assert "hardened: yes" in out
    assert "verdict: match" in out
    assert "verdict: mismatch" in out and "mismatched_fields: memory" in out
    assert "hello from the host" in out.split("### Run a command", 1)[1].split("###")[0]
    assert "'hello from the host'" in out.split("### Copy it back out", 1)[1].split("###")[0]
    assert "in /home as " in out.split("### Open a shell", 1)[1].split("###")[0]
    assert out.rstrip().endswith("Demo complete: a verified sandbox lifecycle through the bus.")
    name = out.split("The sandbox: ", 1)[1].split()[0]
    assert name in out.split("### Create a sandbox", 1)[1].split("### Show it")[0]
    assert name not in out.split("### None of it is left", 1)[1]


# A client that fails one command as a failed call fails (exit 1, an error on stderr)
# and passes everything else to the real one.
SABOTAGE = """#!/bin/sh
case " $* " in
*" %s "*) echo "xagent-sandboxctl: org.xagent.Sandbox1.Error.BackendUnavailable: sabotaged" >&2; exit 1 ;;
esac
exec %s "$@"
"""


@pytest.fixture
def sabotaged_build():
    """A build tree whose daemon and init are the real ones and whose client fails the
    command containing the given word."""
    d = tempfile.mkdtemp(prefix="xagent-demo-", dir="/tmp")
    os.chmod(d, 0o755)

    def make(word):
        for part in ("daemon", "init"):
            os.makedirs(os.path.join(d, "src"), exist_ok=True)
            os.symlink(os.path.join(BUILD, "src", part), os.path.join(d, "src", part))
        os.makedirs(os.path.join(d, "src", "ctl"))
        path = os.path.join(d, "src", "ctl", "xagent-sandboxctl")
        with open(path, "w") as f:
            f.write(SABOTAGE % (word, os.path.join(BUILD, "src", "ctl", "xagent-sandboxctl")))
        os.chmod(path, 0o755)
        return d
    yield make
    shutil.rmtree(d)


def test_demo_stops_at_the_first_failed_step(sabotaged_build):
    r = run_demo(sabotaged_build("create"))
    assert r.returncode == 1, r.stdout
    assert steps_run(r.stdout) == ["Create a sandbox"]
    assert "!!! Create a sandbox with a workspace volume: exit status 1, expected 0" in r.stdout
    assert "Demo failed" in r.stdout and "Demo complete" not in r.stdout


def test_demo_mismatch_step_needs_a_real_mismatch(sabotaged_build):
    """A verify that fails as a call (exit 1 too) is no mismatch: the step fails."""
    r = run_demo(sabotaged_build("--memory"))
    assert r.returncode == 1, r.stdout
    assert steps_run(r.stdout) == list(STEPS[:5])
    assert "!!! Verify it against a different spec (mismatch, exit status 1): the output lacks " \
           "['verdict: mismatch', 'mismatched_fields: memory']" in r.stdout
    assert "Demo complete" not in r.stdout
