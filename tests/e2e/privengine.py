# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the tests' private engines have in common (tests/fault/privdocker.py's dockerd,
privpodman.py's rootful Podman): one temp dir holding the socket and the log, /_ping,
the Engine API calls the tests make, the test image imported from the root file system
tests/make-test-rootfs.sh builds, the service stopped by its pid, the mounts under the
temp dir; a network namespace held by a sleeping process, entered with nsenter; the
/proc helpers every teardown uses (processes are signalled by pid only, each checked
against the temp dir first, never found by name).

A subclass names itself (NAME, for messages), its error class, its API timeout and the
statuses a removal may answer, and imports the image its own way (_import)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from urllib.parse import quote

import sandbox_helpers as h

TEST_IMAGE = "xagent-sandbox-test:latest"
MAKE_ROOTFS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "make-test-rootfs.sh")


class EngineError(RuntimeError):
    pass


# ---- /proc ---------------------------------------------------------------------------------

def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _wait_gone(pid, timeout):
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def stop_process(proc, timeout):
    """SIGTERM a Popen, SIGKILL it if it outlasts timeout; reaped either way."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def rootfs_tar(tmp):
    """The test image's root file system (tests/make-test-rootfs.sh, as
    tests/setup-docker.sh builds it) as a tar stream, built in a directory under tmp."""
    rootfs = tempfile.mkdtemp(prefix="rootfs-", dir=tmp)
    try:
        subprocess.run(["/bin/bash", MAKE_ROOTFS, rootfs], check=True)
        return subprocess.run(["tar", "-C", rootfs, "--numeric-owner", "-c", "."],
                              stdout=subprocess.PIPE, check=True).stdout
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)


# ---- a network namespace of the test's -----------------------------------------------------

class NetnsHolder:
    """A new network namespace held by `sleep infinity` (a restarted engine, and the service
    nsentered there, find the same one), its loopback up."""

    def __init__(self):
        self.proc = subprocess.Popen(["/usr/bin/unshare", "--net", "--", "/bin/sleep", "infinity"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        h.wait_until(lambda: os.readlink(self.netns()) != os.readlink("/proc/self/ns/net"), 5, 0.02,
                     "the network namespace")
        # A new network namespace's loopback is down.
        subprocess.run(self.nsenter(["ip", "link", "set", "lo", "up"]), check=True)

    def netns(self):
        return f"/proc/{self.proc.pid}/ns/net"

    def nsenter(self, argv):
        # Never `ip netns exec`: that remounts /sys (Podman then sees no cgroups).
        return ["/usr/bin/nsenter", f"--net={self.netns()}", "--"] + list(argv)

    def close(self):
        self.proc.kill()
        self.proc.wait()


# ---- the engine ----------------------------------------------------------------------------

class PrivateEngine:
    NAME = "engine"
    Error = EngineError
    API_TIMEOUT = 30
    REMOVED = (204, 404)

    def __init__(self, tmp, prefix, socket_name, log_name):
        self.tmp = tmp or tempfile.mkdtemp(prefix=prefix)
        os.makedirs(self.tmp, mode=0o711, exist_ok=True)
        self.socket = os.path.join(self.tmp, socket_name)
        self.host = "unix://" + self.socket
        self.log_path = os.path.join(self.tmp, log_name)
        self.proc = None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def _popen(self, argv, **kw):
        """Starts the service (a stale socket removed first), its output to the log."""
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         cwd=self.tmp, start_new_session=True, **kw)

    def wait_ping(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.Error(f"{self.NAME} exited with {self.proc.returncode}: {self.log()}")
            try:
                if self.api("GET", "/_ping", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise self.Error(f"{self.NAME} did not answer /_ping within {timeout}s: {self.log()}")

    def log(self, tail=3000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    # ---- the API ----------------------------------------------------------------------

    def api(self, method, path, body=None, timeout=None):
        """One Engine API request (unversioned path); (status, parsed JSON / text / None)."""
        return h.docker(method, path, body, timeout or self.API_TIMEOUT, socket_path=self.socket)

    def ok(self, method, path, body=None, timeout=None):
        status, data = self.api(method, path, body, timeout)
        if status // 100 != 2:
            raise self.Error(f"{method} {path}: {status} {data}")
        return data

    def containers(self, managed_only=True):
        """Every container (any state), [{Id, Names, Labels, State}…]."""
        path = "/containers/json?all=1"
        if managed_only:
            path += "&filters=" + quote(json.dumps({"label": ["xagent.managed=true"]}))
        return self.ok("GET", path)

    def inspect(self, cid):
        status, data = self.api("GET", f"/containers/{cid}/json")
        return data if status == 200 else None

    def remove(self, cid):
        status, data = self.api("DELETE", f"/containers/{cid}?force=1&v=1")
        if status not in self.REMOVED:
            raise self.Error(f"remove {cid}: {status} {data}")

    def remove_all(self, problems, what):
        """Removes every container; a failure (a broken engine) is added to problems."""
        try:
            for c in self.containers(managed_only=False):
                self.remove(c["Id"])
        except Exception as e:
            problems.append(f"{what}: {e}")

    def ensure_image(self):
        """The test image, unless the engine has it already (tests/make-test-rootfs.sh's
        root file system, imported by the subclass's _import)."""
        if self.api("GET", f"/images/{TEST_IMAGE}/json")[0] == 200:
            return
        self._import(rootfs_tar(self.tmp))
        if self.api("GET", f"/images/{TEST_IMAGE}/json")[0] != 200:
            raise self.Error(f"import of {TEST_IMAGE} failed")

    def _import(self, tar):
        raise NotImplementedError

    # ---- teardown ---------------------------------------------------------------------

    def _ours(self, pid):
        """pid is alive and started from this temp dir (a pid from a file may be stale)."""
        cmd = _cmdline(pid)
        return cmd is not None and self.tmp in cmd and _alive(pid)

    def mounts_below(self):
        """Mount points under the temp dir, deepest first."""
        out = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                mp = line.split()[4].encode().decode("unicode_escape")
                if mp == self.tmp or mp.startswith(self.tmp + "/"):
                    out.append(mp)
        return sorted(set(out), key=len, reverse=True)
