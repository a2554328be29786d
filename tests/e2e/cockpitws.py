# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cockpit for tests/e2e/test_cockpit.py: Debian's cockpit-ws on 127.0.0.1 without TLS,
in a private mount namespace where the stack's private bus is the system bus, with the
package of cockpit/ installed; real logins with a password set for the test only; a
headless Chromium driven by tests/cockpit/driver.mjs (playwright-core).

Nothing on the host is changed but the test users' password fields, restored after. In
cockpit-ws's namespace (cockpit-session and every cockpit-bridge it starts inherit it):
- /usr/local/share is a temporary directory holding cockpit/xagent-sandbox/ (the files
  of cockpit/ and the build's manifest.json) and the file the manifest's condition
  names (the D-Bus activation file, at the path meson configured);
- /usr/local/bin holds xagent-sandboxctl (the build's), which the page's terminal runs;
- /run/dbus/system_bus_socket is the stack's private bus;
- /etc/sudoers, when the test gives one (CockpitWs(admins=[USER])), lets those users
  use sudo with their password: Cockpit's administrative access (its "superuser"
  bridge, root's) for a session that asks for it at login. Nowhere else.
"""

import json
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time

from privengine import stop_process

COCKPIT_WS = "/usr/lib/cockpit/cockpit-ws"
CHROMIUM = "/usr/bin/chromium"
PACKAGE = "xagent-sandbox"
PACKAGE_FILES = ("index.html", "xagent-sandbox.js", "common.js", "details.js", "create.js", "texts.js",
                 "xagent-sandbox.css")
OVERLAID_SHARE = "/usr/local/share"
OVERLAID_BIN = "/usr/local/bin"


class CockpitError(RuntimeError):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _shadow_field(user):
    with open("/etc/shadow") as f:
        for line in f:
            fields = line.rstrip("\n").split(":")
            if fields[0] == user:
                return fields[1]
    raise CockpitError(f"{user} is not in /etc/shadow")


class Passwords:
    """Passwords for the test users, set now and the former hash put back by restore()."""

    def __init__(self):
        self.saved = {}
        self.passwords = {}

    def set(self, user):
        if user not in self.saved:
            self.saved[user] = _shadow_field(user)
        password = secrets.token_urlsafe(18)
        subprocess.run(["chpasswd"], input=f"{user}:{password}\n", text=True, check=True)
        self.passwords[user] = password
        return password

    def restore(self):
        for user, field in self.saved.items():
            subprocess.run(["usermod", "-p", field, user], check=True)
        self.saved.clear()
        self.passwords.clear()


class CockpitWs:
    def __init__(self, stack, source_root, build_root, admins=()):
        self.stack = stack
        self.admins = list(admins)
        self.source_root = source_root
        self.build_root = build_root
        self.tmp = None
        self.proc = None
        self.port = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def manifest(self):
        with open(os.path.join(self.build_root, "cockpit", "manifest.json")) as f:
            return json.load(f)

    def condition_paths(self):
        return [c["path-exists"] for c in self.manifest().get("conditions", [])
                if "path-exists" in c]

    def _install(self):
        share = os.path.join(self.tmp, "share")
        pkg = os.path.join(share, "cockpit", PACKAGE)
        os.makedirs(pkg)
        for name in PACKAGE_FILES:
            shutil.copy(os.path.join(self.source_root, "cockpit", name), pkg)
        shutil.copy(os.path.join(self.build_root, "cockpit", "manifest.json"), pkg)
        for path in self.condition_paths():
            if os.path.exists(path):
                continue
            if not path.startswith(OVERLAID_SHARE + "/"):
                raise CockpitError(f"the manifest's condition {path} is outside "
                                   f"{OVERLAID_SHARE}: build with the default prefix")
            self.condition_file = os.path.join(share, os.path.relpath(path, OVERLAID_SHARE))
            os.makedirs(os.path.dirname(self.condition_file), exist_ok=True)
            shutil.copy(self.stack._path("services", "org.xagent.Sandbox1.service"),
                        self.condition_file)
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        os.symlink(os.path.join(self.build_root, "src", "ctl", "xagent-sandboxctl"),
                   os.path.join(bindir, "xagent-sandboxctl"))
        rundbus = os.path.join(self.tmp, "run-dbus")
        os.makedirs(rundbus)
        os.symlink(self.stack.socket, os.path.join(rundbus, "system_bus_socket"))
        mounts = [(share, OVERLAID_SHARE), (bindir, OVERLAID_BIN), (rundbus, "/run/dbus")]
        if self.admins:
            sudoers = os.path.join(self.tmp, "sudoers")
            with open(sudoers, "w") as f:
                f.write("Defaults env_reset\nroot ALL=(ALL:ALL) ALL\n"
                        + "".join(f"{u} ALL=(ALL:ALL) ALL\n" for u in self.admins))
            mounts.append((sudoers, "/etc/sudoers"))
        for root, dirs, files in os.walk(self.tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                if not os.path.islink(os.path.join(root, f)):   # chmod follows a link
                    os.chmod(os.path.join(root, f), 0o644)
        if self.admins:
            os.chmod(sudoers, 0o440)           # sudo refuses a writable sudoers
        return mounts

    def start(self, timeout=20):
        self.tmp = tempfile.mkdtemp(prefix="xagent-cockpit-")
        os.chmod(self.tmp, 0o755)
        self.port = free_port()
        mounts = "; ".join(f"mount --bind {shlex.quote(src)} {dst}" for src, dst in self._install())
        # Loopback only: --address 127.0.0.1, never a wildcard.
        script = (f"set -e; mount --make-rprivate /; {mounts}; exec {COCKPIT_WS} --no-tls "
                  f"--address 127.0.0.1 --port {self.port}")
        self.log_path = os.path.join(self.tmp, "cockpit-ws.log")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/",
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
            start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CockpitError(f"cockpit-ws exited {self.proc.returncode}: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        raise CockpitError(f"cockpit-ws does not listen on {self.port}: {self.log()}")

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-6000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None:
            # Its sessions (cockpit-session, the bridges) are in its process group.
            try:
                os.killpg(self.proc.pid, 15)
            except ProcessLookupError:
                pass
            stop_process(self.proc, 10)
            self.proc = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


class Browser:
    """tests/cockpit/driver.mjs: one JSON command a line, one JSON answer a line."""

    def __init__(self, source_root):
        driver = os.path.join(source_root, "tests", "cockpit", "driver.mjs")
        if not os.path.isdir(os.path.join(source_root, "tests", "cockpit", "node_modules",
                                          "playwright-core")):
            raise CockpitError("playwright-core missing: run tools/install-deps.sh "
                               "(npm ci --prefix tests/cockpit)")
        self.proc = subprocess.Popen(["node", driver], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=os.path.dirname(driver),
                                     start_new_session=True)
        self.version = self.call("launch", executable=CHROMIUM)

    def call(self, cmd, **args):
        self.proc.stdin.write(json.dumps(dict(cmd=cmd, **args)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise CockpitError(f"the browser driver ended: {self.proc.stderr.read()[-4000:]}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise CockpitError(f"{cmd} {args}: {answer['error']}")
        return answer["value"]

    def try_call(self, cmd, **args):
        """(True, value) or (False, error text)."""
        try:
            return True, self.call(cmd, **args)
        except CockpitError as e:
            return False, str(e)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.call("close")
            except (CockpitError, OSError, ValueError):
                pass
        stop_process(self.proc, 10)
