# SPDX-License-Identifier: LGPL-2.1-or-later
"""The end-to-end stack: a private system-type dbus-daemon, a real polkitd in a private
mount namespace with the project's polkit files, and unprivileged test users.

Runs as root. Nothing on the host is changed except the test users and their group
(created idempotently and left in place). See README.md next to this file.

    stack = Stack(source_root, build_root)
    stack.start()
    stack.busctl("sbx-member", "list")
    stack.client("sbx-other", "check-self", "org.xagent.sandbox1.create")
    stack.stop()

Run directly (`/usr/bin/python3 tests/e2e/stack.py`) it starts the stack, prints the bus
address and waits for Ctrl-C, for poking at it by hand.
"""

import fcntl
import grp
import json
import os
import pty
import pwd
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

MEMBER = "sbx-member"           # in the group, granted by 50-xagent-sandbox.rules
OTHER = "sbx-other"             # not in the group: only the .policy defaults apply
GROUP = "xagent-sandbox"

BUS_NAME = "org.xagent.Sandbox1"
POLKIT_NAME = "org.freedesktop.PolicyKit1"
ACTIONS = (
    "org.xagent.sandbox1.inspect",
    "org.xagent.sandbox1.create",
    "org.xagent.sandbox1.manage",
    "org.xagent.sandbox1.manage-others",
    "org.xagent.sandbox1.exec",
    "org.xagent.sandbox1.exec-others",
    "org.xagent.sandbox1.pull",
)

POLKITD = "/usr/lib/polkit-1/polkitd"
POLKIT_ACTIONS_DIR = "/usr/share/polkit-1/actions"
POLKIT_ETC_RULES_DIR = "/etc/polkit-1/rules.d"          # the admin's: empty in tests
POLKIT_RULES_DIR = "/usr/share/polkit-1/rules.d"        # where meson installs ours
POLKIT_RULES_DIRS = (POLKIT_ETC_RULES_DIR, POLKIT_RULES_DIR)
DEBIAN_SYSTEM_D = "/usr/share/dbus-1/system.d"
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

HERE = os.path.dirname(os.path.abspath(__file__))


class StackError(RuntimeError):
    pass


def _run(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, **kw)


def _wait_gone(pid, timeout):
    """True once pid has exited (a zombie counts as gone) within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


USERS_LOCK = "/run/lock/xagent-sandbox-test-users.lock"


def ensure_users():
    """Creates the group and both users if missing; fixes group membership if wrong.
    One process at a time (the files of a suite run in parallel, each checking and
    creating the same users): under an exclusive lock on USERS_LOCK."""
    os.makedirs(os.path.dirname(USERS_LOCK), exist_ok=True)
    with open(USERS_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _ensure_users()


def _ensure_users():
    _run(["groupadd", "-f", GROUP])
    for user, member in ((MEMBER, True), (OTHER, False)):
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            argv = ["useradd", "--create-home", "--shell", "/bin/bash", "--user-group"]
            if member:
                argv += ["--groups", GROUP]
            _run(argv + [user])
            pw = pwd.getpwnam(user)
        in_group = user in grp.getgrnam(GROUP).gr_mem
        if member and not in_group:
            _run(["gpasswd", "--add", user, GROUP])
        elif not member and in_group:
            _run(["gpasswd", "--delete", user, GROUP])
        if not os.path.isdir(pw.pw_dir):
            os.makedirs(pw.pw_dir, mode=0o750)
            os.chown(pw.pw_dir, pw.pw_uid, pw.pw_gid)


def _snapshot_dir(path):
    """Name → bytes of every file in a host directory, to prove it is left untouched."""
    out = {}
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), "rb") as f:
            out[name] = f.read()
    return out


def host_polkit_snapshot():
    return {d: _snapshot_dir(d) for d in (POLKIT_ACTIONS_DIR,) + POLKIT_RULES_DIRS}


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Private system-type bus for xagent-sandboxd's end-to-end tests. No <user>: the bus
     stays root so that activated services run as root, as with the real system bus's
     setuid launch helper (which only knows the host's own config, so it is not used). -->
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path={socket}</listen>
  <servicedir>{servicedir}</servicedir>

  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>

  <!-- polkitd's own policy (owning org.freedesktop.PolicyKit1 as user polkitd). -->
  <includedir>{debian_system_d}</includedir>
  <!-- The project's policy under test: dbus/org.xagent.Sandbox1.conf. -->
  <includedir>{project_dbus}</includedir>
</busconfig>
"""


class _UserProcess(subprocess.Popen):
    """A process started as another user through runuser, in a group of its own."""

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        super().kill()


class Stack:
    def __init__(self, source_root, build_root, daemon_argv=None, keep_tmp=False):
        self.source_root = os.path.abspath(source_root)
        self.build_root = os.path.abspath(build_root)
        self.keep_tmp = keep_tmp
        self.tmp = None
        self.address = None
        self.bus_proc = None
        self.polkit_proc = None
        self._daemon_argv = daemon_argv
        self.host_before = None

    # ---- layout -------------------------------------------------------------------

    def _path(self, *parts):
        return os.path.join(self.tmp, *parts)

    @property
    def state_dir(self):
        return self._path("state")

    @property
    def config_path(self):
        """The daemon's --config; absent unless a test writes it (= built-in defaults)."""
        return self._path("sandboxd.json")

    @property
    def daemon_binary(self):
        return os.path.join(self.build_root, "src", "daemon", "xagent-sandboxd")

    def default_daemon_argv(self):
        """The daemon's command line; $SBX_E2E_DAEMON_WRAPPER (e.g. "valgrind
        --log-file=/tmp/vg.%p") is put in front of it."""
        wrapper = shlex.split(os.environ.get("SBX_E2E_DAEMON_WRAPPER", ""))
        return wrapper + [self.daemon_binary, "--state-dir", self.state_dir,
                          "--config", self.config_path, "--idle-timeout", "0",
                          "--init-dir", os.path.join(self.build_root, "src", "init")]

    def _mkdir(self, *parts, mode=0o755):
        p = self._path(*parts)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        return p

    def _write(self, rel, text, mode=0o644):
        p = self._path(rel)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        return p

    # ---- life ---------------------------------------------------------------------

    def start(self):
        if os.geteuid() != 0:
            raise StackError("the e2e stack must run as root (it starts polkitd, "
                             "creates users and a mount namespace)")
        for tool in (POLKITD, "/usr/bin/dbus-daemon", "/usr/bin/unshare", "/usr/sbin/runuser"):
            if not os.access(tool, os.X_OK):
                raise StackError(f"{tool} missing")
        ensure_users()
        self.host_before = host_polkit_snapshot()
        self.tmp = tempfile.mkdtemp(prefix="xagent-e2e-")
        # mkdtemp gives 0700; the test users must reach the socket and the client script.
        os.chmod(self.tmp, 0o755)
        try:
            self._prepare()
            self._start_bus()
            self._start_polkitd()
        except BaseException:
            self.stop()
            raise
        return self

    def _prepare(self):
        self._mkdir("bus")
        self._mkdir("services")
        self._mkdir("state", mode=0o700)
        actions = self._mkdir("polkit", "actions")
        rules = self._mkdir("polkit", "rules.d")
        self._mkdir("polkit", "etc-rules.d")
        src = os.path.join(self.source_root, "polkit")
        shutil.copy(os.path.join(src, "org.xagent.sandbox1.policy"), actions)
        shutil.copy(os.path.join(src, "50-xagent-sandbox.rules"), rules)
        for d in (actions, rules):
            for name in os.listdir(d):
                os.chmod(os.path.join(d, name), 0o644)
        shutil.copy(os.path.join(HERE, "client.py"), self._path("client.py"))
        os.chmod(self._path("client.py"), 0o644)
        self.socket = self._path("bus", "system_bus_socket")
        self.address = "unix:path=" + self.socket
        self._write_service()
        self._write("bus.conf", BUS_CONFIG.format(
            socket=self.socket, servicedir=self._path("services"),
            debian_system_d=DEBIAN_SYSTEM_D,
            project_dbus=os.path.join(self.source_root, "dbus")))

    def _write_service(self):
        argv = self._daemon_argv or self.default_daemon_argv()
        self._write("services/org.xagent.Sandbox1.service",
                    "[D-BUS Service]\nName=%s\nExec=%s\nUser=root\n"
                    % (BUS_NAME, " ".join(shlex.quote(a) for a in argv)))

    def _base_env(self):
        return {"PATH": SAFE_PATH, "LANG": "C.UTF-8",
                "DBUS_SYSTEM_BUS_ADDRESS": self.address}

    def _start_bus(self):
        rfd, wfd = os.pipe()
        log = open(self._path("dbus-daemon.log"), "ab")
        env = self._base_env()
        # Activated services inherit this environment (plus DBUS_STARTER_*).
        self.bus_proc = subprocess.Popen(
            ["/usr/bin/dbus-daemon", "--config-file=" + self._path("bus.conf"),
             "--nofork", "--nopidfile", "--print-address=%d" % wfd],
            pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env=env, cwd="/", start_new_session=True)
        os.close(wfd)
        log.close()
        with os.fdopen(rfd) as r:
            line = r.readline().strip()
        if not line:
            raise StackError("dbus-daemon did not start: " + self.log("dbus-daemon"))
        # It prints its own form (with a guid); our fixed path form is what clients use.
        if self.socket not in line:
            raise StackError(f"dbus-daemon listens on {line}, expected {self.socket}")
        st = os.stat(self.socket)
        if st.st_mode & 0o777 != 0o777:
            raise StackError("bus socket mode %o: test users cannot connect" % st.st_mode)

    def _start_polkitd(self):
        actions = self._path("polkit", "actions")
        rules = self._path("polkit", "rules.d")
        etc_rules = self._path("polkit", "etc-rules.d")
        mounts = [f"mount --bind {shlex.quote(src)} {dst}" for src, dst in (
            (actions, POLKIT_ACTIONS_DIR), (rules, POLKIT_RULES_DIR),
            (etc_rules, POLKIT_ETC_RULES_DIR))]
        script = ("set -e; mount --make-rprivate /; " + "; ".join(mounts)
                  + f"; exec {POLKITD}")
        log = open(self._path("polkitd.log"), "ab")
        # unshare(1) execs (no --fork), so this pid is polkitd's: killing it ends the
        # namespace and with it the bind mounts.
        self.polkit_proc = subprocess.Popen(
            ["/usr/bin/unshare", "--mount", "--propagation", "private",
             "/bin/sh", "-c", script],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self._base_env(),
            cwd="/", start_new_session=True)
        log.close()
        self.wait_for_name(POLKIT_NAME, timeout=20, proc=self.polkit_proc, what="polkitd")

    def _bus_call(self, method, *args, sig=""):
        """A call to org.freedesktop.DBus as root, from this process."""
        import dbus
        conn = dbus.bus.BusConnection(self.address)
        try:
            return conn.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus", method, sig, args)
        finally:
            conn.close()

    def name_has_owner(self, name):
        return bool(self._bus_call("NameHasOwner", name, sig="s"))

    def name_owner_pid(self, name):
        return int(self._bus_call("GetConnectionUnixProcessID", name, sig="s"))

    def wait_for_name(self, name, timeout=20, proc=None, what=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise StackError(f"{what} exited with {proc.returncode}: "
                                 + self.log(what))
            if self.name_has_owner(name):
                return
            time.sleep(0.05)
        raise StackError(f"{name} did not appear within {timeout}s: "
                         + (self.log(what) if what else ""))

    def set_daemon_command(self, argv):
        """Replaces the activation file's Exec= line (takes effect on next activation)."""
        self._daemon_argv = list(argv)
        self._write_service()
        self._bus_call("ReloadConfig")

    def log(self, what, tail=4000):
        """The end of TMP/WHAT.log (all of it with tail=None)."""
        try:
            with open(self._path(what + ".log"), errors="replace") as f:
                text = f.read()
                return text[-tail:] if tail else text
        except (OSError, TypeError):
            return ""

    def _kill(self, proc):
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def daemon_pid(self):
        """The pid of whoever owns org.xagent.Sandbox1 now, or None."""
        try:
            return self.name_owner_pid(BUS_NAME)
        except Exception:   # NameHasNoOwner
            return None

    def stop_daemon(self, sig=signal.SIGTERM, timeout=10):
        """Stops the running daemon, if any, by its pid on the bus (it is dbus-daemon's
        child, not ours); waits until the process is gone and the name has no owner,
        SIGKILL after timeout. Returns the pid it stopped, or None. The next call to
        the name activates a fresh one."""
        pid = self.daemon_pid()
        if pid is None:
            return None
        os.kill(pid, sig)
        if not _wait_gone(pid, timeout):
            os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 5)
        self.wait_for_no_owner(BUS_NAME, timeout=5)
        return pid

    def wait_for_no_owner(self, name, timeout=10):
        deadline = time.monotonic() + timeout
        while self.name_has_owner(name):
            if time.monotonic() > deadline:
                raise StackError(f"{name} still has an owner after {timeout}s")
            time.sleep(0.05)

    def stop_polkit(self):
        """Stops polkitd (and with it its mount namespace); the name disappears."""
        self._kill(self.polkit_proc)
        self.polkit_proc = None
        self.wait_for_no_owner(POLKIT_NAME)

    def start_polkit(self):
        """Starts polkitd again after stop_polkit() (no-op when it is running)."""
        if self.polkit_proc is None or self.polkit_proc.poll() is not None:
            self._start_polkitd()

    def stop(self):
        # An activated daemon is our child's child: stop it by its pid on the bus first.
        if self.bus_proc is not None and self.bus_proc.poll() is None:
            try:
                self.stop_daemon()
            except Exception:
                pass
        self._kill(self.polkit_proc)
        self._kill(self.bus_proc)
        self.polkit_proc = self.bus_proc = None
        if self.tmp and not self.keep_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def host_untouched(self):
        """True when the host's polkit directories are as they were before start()."""
        return self.host_before == host_polkit_snapshot()

    # ---- clients ------------------------------------------------------------------

    def user_env(self, user):
        pw = pwd.getpwnam(user)
        env = self._base_env()
        env.update(HOME=pw.pw_dir, USER=user, LOGNAME=user, SYSTEMD_PAGER="cat",
                   PAGER="cat", SYSTEMD_COLORS="0", NO_COLOR="1")
        return env

    def _as_user(self, user, argv):
        env = self.user_env(user)
        return (["/usr/sbin/runuser", "-u", user, "--", "/usr/bin/env", "-i"]
                + [f"{k}={v}" for k, v in sorted(env.items())] + list(argv))

    def run_as(self, user, argv, timeout=60, check=False, input=None):
        """Runs argv as user with a clean environment that points at the private bus.

        Returns CompletedProcess (text). The working directory is the stack's temp dir,
        which every test user can enter."""
        cmd = self._as_user(user, argv)
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout, check=check, input=input,
                              cwd=self.tmp, env={"PATH": SAFE_PATH})

    def spawn_as(self, user, argv):
        """Starts argv as user (stdin/stdout pipes, text); the caller waits for it.
        runuser forks argv as its child, so it runs in a session of its own, and kill()
        ends the whole group: a killed runuser leaves no orphan behind."""
        return _UserProcess(self._as_user(user, argv), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=self.tmp, env={"PATH": SAFE_PATH}, start_new_session=True)

    def run_on_terminal(self, user, argv, keys, size=(24, 80), prompts=(b"$ ", b"# "), timeout=60,
                        path=SAFE_PATH, controlling=False, send_after=None):
        """Runs argv as user on a new pseudo-terminal of size (rows, columns), types keys
        once it shows one of the prompts; returns (exit status, what the terminal showed
        as text: no escape sequences, no carriage returns). controlling: the terminal is
        its controlling one, as a person's shell has it (pkttyagent opens /dev/tty).
        send_after: seconds after which keys are typed even with no prompt shown."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        p = subprocess.Popen(self._as_user(user, argv), stdin=slave, stdout=slave, stderr=slave,
                             cwd=self.tmp, env={"PATH": path},
                             preexec_fn=controlling_terminal if controlling else None)
        os.close(slave)
        start = time.monotonic()
        out, sent, deadline = b"", False, start + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            if not sent and (any(m in out for m in prompts) or
                             (send_after is not None and time.monotonic() > start + send_after)):
                os.write(master, keys)
                sent = True
            if p.poll() is not None and not ready:
                break
        os.close(master)
        try:
            status = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            status = p.wait()
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode(errors="replace"))
        return status, text.replace("\r\n", "\n").replace("\r", "")

    def client_argv(self, *args):
        return ["/usr/bin/python3", self._path("client.py")] + list(args)

    def busctl(self, user, *args, **kw):
        return self.run_as(user, ["busctl", "--system", "--no-pager"] + list(args), **kw)

    def gdbus(self, user, *args, **kw):
        return self.run_as(user, ["gdbus"] + list(args), **kw)

    def client(self, user, *args, timeout=60):
        """Runs tests/e2e/client.py (python3-dbus) as user; returns its parsed JSON."""
        r = self.run_as(user, self.client_argv(*args), timeout=timeout)
        if r.returncode != 0:
            raise StackError(f"client.py as {user} failed ({r.returncode}): {r.stderr}")
        return json.loads(r.stdout)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--source-root", default=root)
    ap.add_argument("--build-root", default=os.environ.get("SBX_BUILD_ROOT",
                                                           os.path.join(root, "build")))
    ap.add_argument("--keep-tmp", action="store_true")
    a = ap.parse_args()
    stack = Stack(a.source_root, a.build_root, keep_tmp=a.keep_tmp).start()
    print(f"DBUS_SYSTEM_BUS_ADDRESS={stack.address}")
    print(f"temp dir: {stack.tmp} (logs: dbus-daemon.log, polkitd.log)")
    print(f"polkitd pid {stack.polkit_proc.pid}; Ctrl-C to tear down", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


if __name__ == "__main__":
    sys.exit(main())
