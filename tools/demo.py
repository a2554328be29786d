#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The main job, for real: a verified sandbox lifecycle through the bus.

Brings up a self-contained stack (a private system bus with the project's bus policy,
the real polkitd with the project's polkit files in a private mount namespace, the
build-tree daemon activated on demand) and, as the unprivileged user sbx-member,
drives xagent-sandboxctl: create a sandbox with a workspace volume, show it, verify it
as match and against a different spec as mismatch, run a command in it, copy a file
in and out, open a shell on a terminal, snapshot it, stop it, delete it. Every step is
printed and checked; the first step that fails stops the demo (exit status 1).
Everything it made is removed at the end; the host's D-Bus and polkit configuration
are never touched.

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


class StepFailed(Exception):
    pass


def on_terminal(stack, argv, keystrokes, timeout=60):
    """Runs argv as the member on a new pseudo-terminal, types keystrokes once it shows
    a prompt; returns (exit status, what the terminal showed)."""
    return stack.run_on_terminal(MEMBER, argv, keystrokes, timeout=timeout)


def main():
    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    ctl = os.path.join(build, "src", "ctl", "xagent-sandboxctl")
    stack = Stack(ROOT, build).start()
    pw = pwd.getpwnam(MEMBER)
    workspace = os.path.join(pw.pw_dir, "demo-workspace")
    outbox = os.path.join(pw.pw_dir, "demo-outbox")
    spec = ["--image", IMAGE, "--volume", f"{workspace}:/workspace:rw", "--port", "0:8080"]

    def step(title, *args, expect=0, want=(), terminal=None):
        """Runs one command, prints it and its output; raises StepFailed when its exit
        status is not expect or a line of want is missing from its output."""
        argv = [ctl, "--no-ask-password", *args]
        print(f"\n### {title}\n$ xagent-sandboxctl {shlex.join(args)}", flush=True)
        if terminal is None:
            r = stack.run_as(MEMBER, argv, timeout=120)
            status, out = r.returncode, r.stdout + r.stderr
        else:
            print(f"(typed on its terminal: {terminal!r})", flush=True)
            status, out = on_terminal(stack, argv, terminal.encode())
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
        if status != expect:
            raise StepFailed(f"{title}: exit status {status}, expected {expect}")
        # Lines as words: a table's columns widen with other users' names (Docker is shared).
        lines = {" ".join(line.split()) for line in out.splitlines()}
        missing = [w for w in want if w not in lines]
        if missing:
            raise StepFailed(f"{title}: the output lacks {missing}")
        return out

    failed = None
    try:
        print(f"A private system bus at {stack.address}, polkitd and the build-tree daemon;")
        print(f"the calls below run as the unprivileged user {MEMBER}. The sandbox: {NAME}")
        for d in (workspace, outbox):
            os.makedirs(d, exist_ok=True)
            os.chown(d, pw.pw_uid, pw.pw_gid)
        hello = os.path.join(workspace, "hello.txt")
        with open(hello, "w") as f:
            f.write("hello from the host\n")
        os.chown(hello, pw.pw_uid, pw.pw_gid)

        step("Create a sandbox with a workspace volume", "create", NAME, *spec)
        step("List my sandboxes", "list", want=[f"{NAME} running {MEMBER} match"])
        step("Show it", "inspect", NAME, want=["hardened: yes", "verdict: match"])
        step("Verify it against the spec it was made from", "verify", NAME, *spec,
             want=["verdict: match"])
        step("Verify it against a different spec (mismatch, exit status 1)", "verify", NAME, *spec,
             "--memory", "1024", expect=1, want=["verdict: mismatch", "mismatched_fields: memory"])
        step("Run a command in it, as me, on the workspace (exits with its status)", "exec", NAME, "--",
             "sh", "-c", "id -u; cat /workspace/hello.txt; exit 3", expect=3,
             want=[str(pw.pw_uid), "hello from the host"])
        step("Copy a file into it", "cp", hello, f"{NAME}:/tmp")
        step("Copy it back out", "cp", f"{NAME}:/tmp/hello.txt", outbox)
        with open(os.path.join(outbox, "hello.txt")) as f:
            print(f"({outbox}/hello.txt: {f.read().strip()!r})")
        step("Open a shell in it on this terminal", "shell", NAME, terminal="echo in $(pwd) as $(id -u); exit\r",
             want=[f"in /home as {pw.pw_uid}"])
        step("Snapshot it", "snapshot", NAME, SNAPSHOT)
        step("List my snapshots", "snapshots")
        step("Stop it", "stop", NAME, "--timeout", "1")
        step("Delete it", "delete", NAME)
        step("Delete the snapshot", "delete-snapshot", SNAPSHOT)
        out = step("None of it is left", "list")
        if NAME in out:
            raise StepFailed(f"None of it is left: {NAME} is still listed")
    except StepFailed as e:
        failed = e
    finally:
        # Whatever happened above: no sandbox, snapshot or directory stays behind.
        for args in (["delete", NAME], ["delete-snapshot", SNAPSHOT]):
            stack.run_as(MEMBER, [ctl, "--no-ask-password", *args], timeout=120)
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(outbox, ignore_errors=True)
        stack.stop()

    if failed:
        print(f"\n!!! {failed}\nDemo failed: it stopped at the first step that did not do what it should.")
        return 1
    print("\nDemo complete: a verified sandbox lifecycle through the bus.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
