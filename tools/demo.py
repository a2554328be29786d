#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The main job, for real: an agent's day with a sandbox, through the bus.

Brings up a self-contained stack (a private system bus with the project's bus policy,
the real polkitd with the project's polkit files in a private mount namespace, the
build-tree daemon activated on demand) and, as the unprivileged user sbx-member:
creates a sandbox from the Python image (xagent-sandbox-python:latest, Debian's python3)
with a workspace, runs Python in it, writes a file into it and reads it back, starts a
background process and reads its output, holds a lease so that another connection's
stop is refused, uses the Python client in a few lines, makes one MCP tool call
through the official SDK client, watches a second sandbox be stopped for idling, and
removes it all. Every step is printed and checked; the first step that fails stops the
demo (exit status 1). Everything it made is removed at the end; the host's D-Bus and
polkit configuration are never touched.

Needs root, a Docker daemon, the Python image, the build's daemon, client, init and MCP
server, and the MCP SDK in tools/demo-mcp/node_modules (or tests/mcp/node_modules):
tools/demo.sh sees to all of them.
"""

import os
import pwd
import shlex
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER, Stack  # noqa: E402

IMAGE = "xagent-sandbox-python:latest"
# Unique per run: Docker is shared with whatever else runs on the machine.
NAME = f"demo-{os.getpid()}"
IDLE = f"{NAME}-idle"
NODE_MODULES = [os.path.join(ROOT, "tools", "demo-mcp", "node_modules"),
                os.path.join(ROOT, "tests", "mcp", "node_modules")]

PYTHON_CLIENT = f"""\
from xagent_sandbox import Sandbox

with Sandbox("{NAME}") as sb:
    r = sb.run(["python3", "/workspace/hello.py"], timeout=30)
    print("exit code", r.exit_code, "printed", repr(r.stdout))
    sb.files.write("/workspace/from-python.txt", "written by the Python client\\n")
    print(sb.files.read("/workspace/from-python.txt").decode(), end="")
"""

MCP_CLIENT = """\
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const client = new Client({ name: "xagent-demo", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: process.argv[1], args: [], env: process.env }));
const r = await client.callTool({ name: "run", arguments: { sandbox: process.argv[2],
                                                             command: "python3 /workspace/hello.py" } });
console.log(r.content.map(c => c.text).join(""));
await client.close();
"""


class StepFailed(Exception):
    pass


def main():
    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    ctl = os.path.join(build, "src", "ctl", "xagent-sandboxctl")
    mcp_server = os.path.join(build, "src", "mcp", "xagent-sandbox-mcp")
    node_modules = next((d for d in NODE_MODULES if os.path.isdir(d)), NODE_MODULES[0])
    stack = Stack(ROOT, build).start()
    pw = pwd.getpwnam(MEMBER)
    workspace = os.path.join(pw.pw_dir, "demo-workspace")
    local = os.path.join(pw.pw_dir, "demo-hello.py")
    scratch = os.path.join(stack.tmp, "demo")
    lease_holder = None

    def show(title, cmd):
        print(f"\n### {title}\n$ {cmd}", flush=True)

    def check(title, status, out, expect, want):
        """Raises StepFailed when status is not expect or a line of want is missing."""
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
        if status != expect:
            raise StepFailed(f"{title}: exit status {status}, expected {expect}")
        # Lines as words: a table's columns widen with other users' names (Docker is shared).
        lines = {" ".join(line.split()) for line in out.splitlines()}
        missing = [w for w in want if w not in lines]
        if missing:
            raise StepFailed(f"{title}: the output lacks {missing}")
        return out

    def step(title, *args, expect=0, want=()):
        """One xagent-sandboxctl command as the member, printed and checked."""
        show(title, "xagent-sandboxctl " + shlex.join(args))
        r = stack.run_as(MEMBER, [ctl, "--no-ask-password", *args], timeout=180)
        return check(title, r.returncode, r.stdout + r.stderr, expect, want)

    def run(title, shown, argv, want=()):
        """Another program as the member, printed (as shown) and checked."""
        show(title, shown)
        r = stack.run_as(MEMBER, argv, timeout=180)
        return check(title, r.returncode, r.stdout + r.stderr, 0, want)

    def state_of(name):
        r = stack.run_as(MEMBER, [ctl, "--no-ask-password", "list", "--no-legend"], timeout=60)
        return next((line.split()[1] for line in r.stdout.splitlines() if line.split()[:1] == [name]), None)

    failed = None
    try:
        print(f"A private system bus at {stack.address}, polkitd and the build-tree daemon;")
        print(f"the calls below run as the unprivileged user {MEMBER}. The sandbox: {NAME}")
        os.makedirs(workspace, exist_ok=True)
        os.chown(workspace, pw.pw_uid, pw.pw_gid)
        with open(local, "w") as f:
            f.write('import os\nprint("hello from uid", os.getuid())\n')
        os.chown(local, pw.pw_uid, pw.pw_gid)
        os.makedirs(scratch, exist_ok=True)
        shutil.copytree(os.path.join(ROOT, "python", "xagent_sandbox"), os.path.join(scratch, "xagent_sandbox"))
        for dirpath, _, _ in os.walk(scratch):
            os.chmod(dirpath, 0o755)

        step("Create a sandbox from the Python image, with a workspace", "create", NAME, "--image", IMAGE,
             "--volume", f"{workspace}:/workspace")
        step("Run Python in it, as me", "exec", NAME, "--", "python3", "-c",
             "import os, sys; print(sys.version.split()[0]); print(6 * 7, os.getuid())",
             want=[f"42 {pw.pw_uid}"])
        step("Write a file into it", "put", local, f"{NAME}:/workspace/hello.py")
        step("Read it back", "cat", f"{NAME}:/workspace/hello.py", want=['print("hello from uid", os.getuid())'])
        step("List the workspace", "ls", f"{NAME}:/workspace", want=["file 0644 47 hello.py"])
        out = step("Start a background process (detached: it outlives this command)", "exec", "--detach", NAME,
                   "--", "python3", "-u", "-c",
                   "import time\nfor i in range(3):\n    print('tick', i)\n    time.sleep(0.5)")
        exec_id = out.split()[-1]
        step("Read its output until it ends", "output", "--follow", exec_id, want=["tick 0", "tick 1", "tick 2"])

        show("Hold a lease on it from another program", f"xagent-sandboxctl acquire {NAME} -- sleep 120 &")
        lease_holder = stack.spawn_as(MEMBER, [ctl, "--no-ask-password", "acquire", NAME, "--", "sleep", "120"])
        deadline = time.monotonic() + 30
        while "leases: 1" not in stack.run_as(MEMBER, [ctl, "--no-ask-password", "inspect", "--fresh", NAME],
                                              timeout=60).stdout:
            if lease_holder.poll() is not None or time.monotonic() > deadline:
                raise StepFailed("Hold a lease on it from another program: the lease was not taken")
            time.sleep(0.2)
        print("(inspect: leases: 1)")
        step("Another connection's stop is refused while the lease is held (exit status 1)", "stop", NAME,
             expect=1, want=[f"xagent-sandboxctl: org.xagent.Sandbox1.Error.SandboxBusy: Sandbox '{NAME}' is busy: "
                             "1 lease held by another connection (option force revokes them)"])
        lease_holder.kill()
        lease_holder.wait(30)
        lease_holder = None
        print("(the lease holder ended: the lease is gone with its connection)")

        run("The Python client, in a few lines", "python3 <<'EOF'\n" + PYTHON_CLIENT + "EOF",
            ["/usr/bin/env", f"PYTHONPATH={scratch}", "/usr/bin/python3", "-c", PYTHON_CLIENT],
            want=[f"exit code 0 printed 'hello from uid {pw.pw_uid}\\n'", "written by the Python client"])
        mcp_dir = os.path.join(scratch, "mcp")
        shutil.copytree(node_modules, os.path.join(mcp_dir, "node_modules"), symlinks=True)
        for dirpath, _, _ in os.walk(mcp_dir):
            os.chmod(dirpath, 0o755)
        run("One MCP tool call (run) through the official SDK client",
            f"node --input-type=module -e \"$SCRIPT\" xagent-sandbox-mcp {NAME}   # SCRIPT (@modelcontextprotocol/sdk):\n"
            + MCP_CLIENT,
            ["/bin/sh", "-c", 'cd "$1" && exec node --input-type=module -e "$2" "$3" "$4"', "sh", mcp_dir, MCP_CLIENT,
             mcp_server, NAME],
            want=[f"hello from uid {pw.pw_uid}"])

        step("A second sandbox that stops itself after 2 s without use", "create", IDLE, "--image", IMAGE,
             "--idle-timeout", "2")
        show("Wait for its idle stop", f"xagent-sandboxctl list   # until {IDLE} is stopped")
        deadline = time.monotonic() + 60
        while state_of(IDLE) != "stopped":
            if time.monotonic() > deadline:
                raise StepFailed(f"Wait for its idle stop: {IDLE} is still {state_of(IDLE)} after 60 s")
            time.sleep(0.5)
        print(f"{IDLE} stopped")

        step("Stop the first one", "stop", NAME, "--timeout", "1")
        step("Delete it", "delete", NAME)
        step("Delete the second", "delete", IDLE)
        out = step("None of it is left", "list")
        if NAME in out:
            raise StepFailed(f"None of it is left: {NAME} is still listed")
    except StepFailed as e:
        failed = e
    finally:
        # Whatever happened above: no sandbox, lease, file or directory stays behind.
        if lease_holder is not None:
            lease_holder.kill()
            lease_holder.wait()
        for name in (NAME, IDLE):
            stack.run_as(MEMBER, [ctl, "--no-ask-password", "delete", name], timeout=120)
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        if os.path.exists(local):
            os.unlink(local)
        stack.stop()

    if failed:
        print(f"\n!!! {failed}\nDemo failed: it stopped at the first step that did not do what it should.")
        return 1
    print("\nDemo complete: an agent's day with a sandbox, through the bus.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
