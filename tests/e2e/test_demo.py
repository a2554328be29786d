# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's first command runs here, so it cannot rot: tools/demo.sh is
install-deps + build + setup-docker + the Python image + the MCP SDK (done before this
suite runs, or by the fixture: the image by tools/make-python-image.sh, the SDK from
tests/mcp/node_modules) and then tools/demo.py, the main job, which this runs for real.
It checks every step's output and stops at the first step that fails: two runs with a
sabotaged client show that."""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
STEPS = ("Create a sandbox from the Python image", "Run Python in it", "Write a file into it", "Read it back",
         "List the workspace", "Start a background process", "Read its output", "Hold a lease on it",
         "Another connection's stop is refused", "The Python client", "One MCP tool call",
         "A second sandbox that stops itself", "Wait for its idle stop", "Stop the first one", "Delete it",
         "Delete the second", "None of it is left")
PYTHON_IMAGE = "xagent-sandbox-python:latest"


@pytest.fixture(scope="module", autouse=True)
def demo_needs():
    """What tools/demo.sh brings before tools/demo.py: the Python image and the SDK."""
    import sandbox_helpers as h
    if not h.docker_image_exists(PYTHON_IMAGE):
        subprocess.run([os.path.join(ROOT, "tools", "make-python-image.sh")], check=True, timeout=3600)
    assert any(os.path.isdir(os.path.join(ROOT, d, "node_modules", "@modelcontextprotocol", "sdk"))
               for d in ("tools/demo-mcp", "tests/mcp")), "no MCP SDK: tools/install-deps.sh installs it"


def run_demo(build=BUILD):
    env = dict(os.environ, SBX_BUILD_ROOT=build)
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "demo.py")], env=env,
                       capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout)
    return r


def steps_run(out):
    return [s for s in STEPS if f"### {s}" in out]


def test_readme_names_the_demo():
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "tools/demo.sh" in readme
    demo_sh = open(os.path.join(ROOT, "tools", "demo.sh")).read()
    assert "tools/demo.py" in demo_sh


def section(out, title):
    return out.split("### " + title, 1)[1].split("\n### ")[0]


def test_demo_runs_an_agents_day():
    r = run_demo()
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert steps_run(out) == list(STEPS)
    uid = str(pwd.getpwnam("sbx-member").pw_uid)
    assert f"42 {uid}" in section(out, "Run Python in it")
    assert "tick 2" in section(out, "Read its output")
    assert "SandboxBusy" in section(out, "Another connection's stop")
    assert f"printed 'hello from uid {uid}\\n'" in section(out, "The Python client")
    assert f"hello from uid {uid}" in section(out, "One MCP tool call")
    assert out.rstrip().endswith("Demo complete: an agent's day with a sandbox, through the bus.")
    name = out.split("The sandbox: ", 1)[1].split()[0]
    assert name in section(out, "Create a sandbox")
    assert name not in section(out, "None of it is left")


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
        for part in ("daemon", "init", "mcp"):
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
    assert steps_run(r.stdout) == list(STEPS[:1])
    assert "!!! Create a sandbox from the Python image, with a workspace: exit status 1, expected 0" in r.stdout
    assert "Demo failed" in r.stdout and "Demo complete" not in r.stdout


def test_demo_busy_step_needs_a_real_refusal(sabotaged_build):
    """A stop that fails as another call fails (exit 1 too) is no lease's refusal: the
    step fails."""
    r = run_demo(sabotaged_build("stop"))
    assert r.returncode == 1, r.stdout
    assert steps_run(r.stdout) == list(STEPS[:9])
    assert "!!! Another connection's stop is refused while the lease is held (exit status 1): the output lacks " \
           "[\"xagent-sandboxctl: org.xagent.Sandbox1.Error.SandboxBusy" in r.stdout
    assert "Demo complete" not in r.stdout
