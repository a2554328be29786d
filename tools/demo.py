#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The main job, for real: a verified sandbox lifecycle through the bus.

Brings up a self-contained stack (a private system bus with the project's bus policy,
the real polkitd with the project's polkit files in a private mount namespace, the
build-tree daemon activated on demand) and, as the unprivileged user sbx-member,
drives xagent-sandboxctl: create a sandbox with a workspace volume, show it, verify it
as match, snapshot it, stop it, delete it. Every step is printed. Everything it made is
removed at the end; the host's D-Bus and polkit configuration are never touched.

Needs root, a Docker daemon and the test image (tools/demo.sh sees to both).
"""

import os
import pwd
import shlex
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER, Stack  # noqa: E402

IMAGE = "xagent-sandbox-test:latest"
# Unique per run: Docker is shared with whatever else runs on the machine.
NAME = f"demo-{os.getpid()}"
SNAPSHOT = f"{NAME}-snapshot"


def main():
    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    ctl = os.path.join(build, "src", "ctl", "xagent-sandboxctl")
    stack = Stack(ROOT, build).start()
    home = pwd.getpwnam(MEMBER).pw_dir
    workspace = os.path.join(home, "demo-workspace")
    failed = False

    def step(title, *args, expect=0):
        nonlocal failed
        argv = [ctl, "--no-ask-password", *args]
        print(f"\n### {title}\n$ xagent-sandboxctl {shlex.join(args)}", flush=True)
        r = stack.run_as(MEMBER, argv, timeout=120)
        sys.stdout.write(r.stdout)
        sys.stdout.write(r.stderr)
        if r.returncode != expect:
            print(f"!!! exit status {r.returncode}, expected {expect}", flush=True)
            failed = True
        return r

    try:
        print(f"A private system bus at {stack.address}, polkitd and the build-tree daemon;")
        print(f"the calls below run as the unprivileged user {MEMBER}. The sandbox: {NAME}")
        os.makedirs(workspace, exist_ok=True)
        with open(os.path.join(workspace, "hello.txt"), "w") as f:
            f.write("hello from the host\n")
        pw = pwd.getpwnam(MEMBER)
        for p in (workspace, os.path.join(workspace, "hello.txt")):
            os.chown(p, pw.pw_uid, pw.pw_gid)

        step("Create a sandbox with a workspace volume", "create", NAME, "--image", IMAGE,
             "--volume", f"{workspace}:/workspace:rw", "--port", "0:8080")
        step("List my sandboxes", "list")
        step("Show it", "inspect", NAME)
        step("Verify it against the spec it was made from", "verify", NAME, "--image", IMAGE,
             "--volume", f"{workspace}:/workspace:rw", "--port", "0:8080")
        step("Verify it against a different spec (mismatch, exit status 1)", "verify", NAME,
             "--image", IMAGE, "--volume", f"{workspace}:/workspace:rw", "--port", "0:8080",
             "--memory", "1024", expect=1)
        step("Snapshot it", "snapshot", NAME, SNAPSHOT)
        step("List my snapshots", "snapshots")
        step("Stop it", "stop", NAME, "--timeout", "1")
        step("Delete it", "delete", NAME)
        step("Delete the snapshot", "delete-snapshot", SNAPSHOT)
        step("None of it is left", "list")
    finally:
        # Whatever happened above: no sandbox, snapshot or workspace stays behind.
        for args in (["delete", NAME], ["delete-snapshot", SNAPSHOT]):
            stack.run_as(MEMBER, [ctl, "--no-ask-password", *args], timeout=120)
        shutil.rmtree(workspace, ignore_errors=True)
        stack.stop()

    print("\nDemo failed." if failed else "\nDemo complete: a verified sandbox lifecycle through the bus.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
