# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private dockerd for the fault-injection suite: its own socket, data root, exec root
and pid file under one temp dir, in a network namespace of its own (its bridge, firewall
and sysctls stay there) — nothing it does touches the host's shared dockerd, docker0 or
the firewall, so the tests may kill, freeze and restart it at will.

    d = PrivateDocker(tmp).start()      # waits for /_ping, imports the test image
    d.api("GET", "/containers/json?all=1")
    d.kill()  /  d.freeze()  /  d.thaw()  /  d.restart()
    d.teardown()                        # removes its containers, stops dockerd and the
                                        # containerd it spawned, unmounts, removes tmp

Processes are found by the pid files under the temp dir only (dockerd's --pidfile,
containerd's pid file under the exec root, the containers' init.pid whose parent is the
shim), never by name, and each is checked to belong to this temp dir before a signal.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))

import sandbox_helpers as h  # noqa: E402

TEST_IMAGE = "xagent-sandbox-test:latest"
BUSYBOX = "/bin/busybox"


class DockerError(RuntimeError):
    pass


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


def docker_cli():
    """The docker CLI that talks to this dockerd (the first one on PATH may be newer; it
    negotiates down; Debian's is the fallback)."""
    for c in (shutil.which("docker"), "/usr/bin/docker"):
        if c and os.access(c, os.X_OK):
            return c
    raise DockerError("no docker CLI")


class PrivateDocker:
    def __init__(self, tmp=None, log_name="dockerd.log"):
        self.tmp = tmp or tempfile.mkdtemp(prefix="sbx-fault-docker-")
        os.makedirs(self.tmp, mode=0o711, exist_ok=True)
        self.socket = os.path.join(self.tmp, "docker.sock")
        self.host = "unix://" + self.socket
        self.data_root = os.path.join(self.tmp, "data")
        self.exec_root = os.path.join(self.tmp, "exec")
        self.pidfile = os.path.join(self.tmp, "dockerd.pid")
        self.config_file = os.path.join(self.tmp, "daemon.json")
        self.log_path = os.path.join(self.tmp, log_name)
        self.proc = None
        self.frozen = False

    # ---- the process ----------------------------------------------------------------

    def argv(self):
        # Its own network namespace (unshare execs, so the pid is dockerd's): the
        # default bridge it makes there is not the host's docker0 (with --bridge=none
        # this dockerd version would delete the host's docker0 instead), and its
        # firewall rules and sysctls stay in that namespace too. Sandboxes here are
        # network_isolated.
        return ["/usr/bin/unshare", "--net", "--", "dockerd",
                "--host", self.host,
                "--data-root", self.data_root,
                "--exec-root", self.exec_root,
                "--pidfile", self.pidfile,
                # its own (empty) configuration, not /etc/docker/daemon.json
                "--config-file", self.config_file,
                "--iptables=false", "--ip6tables=false", "--ip-masq=false"]

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout=60, image=True):
        """Starts dockerd (again, after kill(): same data root) and waits for /_ping."""
        if self.running():
            raise DockerError("the private dockerd already runs")
        for d in (self.data_root, self.exec_root):
            os.makedirs(d, mode=0o711, exist_ok=True)
        if not os.path.exists(self.config_file):
            with open(self.config_file, "w") as f:
                f.write("{}\n")
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=log, cwd=self.tmp, start_new_session=True)
        log.close()
        self.frozen = False
        self.wait_ping(timeout)
        if image:
            self.ensure_image()
        return self

    def wait_ping(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DockerError(f"dockerd exited with {self.proc.returncode}: {self.log()}")
            try:
                status, body = self.api("GET", "/_ping", timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise DockerError(f"dockerd did not answer /_ping within {timeout}s: {self.log()}")

    def log(self, tail=3000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    def signal(self, sig):
        if not self.running():
            raise DockerError("the private dockerd does not run")
        os.kill(self.proc.pid, sig)

    def kill(self):
        """SIGKILL dockerd (its containerd dies with it: parent-death signal; the shims
        and containers stay, as after a real crash)."""
        if self.frozen:
            self.thaw()
        containerd = self.containerd_pid()
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        if containerd is not None:
            _wait_gone(containerd, 10)
            # Dead but not yet reaped (a zombie still answers kill(pid, 0)): the next
            # dockerd would take it for a live containerd and wait for its socket.
            deadline = time.monotonic() + 2
            while os.path.exists(f"/proc/{containerd}") and time.monotonic() < deadline:
                time.sleep(0.02)
            try:
                os.unlink(os.path.join(self.exec_root, "containerd", "containerd.pid"))
            except FileNotFoundError:
                pass

    def freeze(self):
        """SIGSTOP: the socket still accepts, nothing answers."""
        self.signal(signal.SIGSTOP)
        self.frozen = True

    def thaw(self):
        self.signal(signal.SIGCONT)
        self.frozen = False

    def restart(self, timeout=60):
        """SIGKILL, then start on the same data root."""
        self.kill()
        return self.start(timeout=timeout, image=False)

    # ---- the API ----------------------------------------------------------------------

    def api(self, method, path, body=None, timeout=30):
        """One Engine API request (unversioned path); (status, parsed JSON / text / None)."""
        return h.docker(method, path, body, timeout, socket_path=self.socket)

    def ok(self, method, path, body=None, timeout=30):
        status, data = self.api(method, path, body, timeout)
        if status // 100 != 2:
            raise DockerError(f"{method} {path}: {status} {data}")
        return data

    def containers(self, managed_only=True):
        """Every container (any state), [{Id, Names, Labels, State}…]."""
        from urllib.parse import quote
        path = "/containers/json?all=1"
        if managed_only:
            path += "&filters=" + quote(json.dumps({"label": ["xagent.managed=true"]}))
        return self.ok("GET", path)

    def inspect(self, cid):
        status, data = self.api("GET", f"/containers/{cid}/json")
        return data if status == 200 else None

    def remove(self, cid):
        status, data = self.api("DELETE", f"/containers/{cid}?force=1&v=1")
        if status not in (204, 404):
            raise DockerError(f"remove {cid}: {status} {data}")

    def cli(self, *args, input=None, timeout=120):
        return subprocess.run([docker_cli(), "-H", self.host] + list(args), input=input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, check=True)

    def ensure_image(self):
        """The test image, made as tests/setup-docker.sh makes it: a busybox-static root
        file system, imported with the docker CLI."""
        status, _ = self.api("GET", f"/images/{TEST_IMAGE}/json")
        if status == 200:
            return
        rootfs = tempfile.mkdtemp(prefix="rootfs-", dir=self.tmp)
        try:
            for d in ("bin", "sbin", "usr/bin", "usr/sbin", "tmp", "home", "etc", "root",
                      "proc", "sys", "dev", "var/tmp"):
                os.makedirs(os.path.join(rootfs, d), exist_ok=True)
            for d in ("tmp", "var/tmp"):
                os.chmod(os.path.join(rootfs, d), 0o1777)
            os.chmod(os.path.join(rootfs, "home"), 0o755)
            shutil.copy(BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
            subprocess.run(["chroot", rootfs, "/bin/busybox", "--install", "-s"], check=True)
            with open(os.path.join(rootfs, "etc", "passwd"), "w") as f:
                f.write("root:x:0:0:root:/root:/bin/sh\n"
                        "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
            with open(os.path.join(rootfs, "etc", "group"), "w") as f:
                f.write("root:x:0:\nnogroup:x:65534:\n")
            tar = subprocess.run(["tar", "-C", rootfs, "--numeric-owner", "-c", "."],
                                 stdout=subprocess.PIPE, check=True).stdout
            self.cli("import", "-c", 'CMD ["/bin/sh"]', "-", TEST_IMAGE, input=tar)
        finally:
            shutil.rmtree(rootfs, ignore_errors=True)
        status, _ = self.api("GET", f"/images/{TEST_IMAGE}/json")
        if status != 200:
            raise DockerError(f"import of {TEST_IMAGE} failed")

    # ---- teardown ---------------------------------------------------------------------

    def _ours(self, pid):
        """pid is alive and started from this temp dir (a pid from a file may be stale)."""
        cmd = _cmdline(pid)
        return cmd is not None and self.tmp in cmd and _alive(pid)

    def containerd_pid(self):
        pid = _read_pid(os.path.join(self.exec_root, "containerd", "containerd.pid"))
        return pid if pid is not None and self._ours(pid) else None

    def shim_pids(self):
        """(init pid, shim pid) of every container task containerd recorded here."""
        out = []
        tasks = os.path.join(self.exec_root, "containerd", "daemon", "io.containerd.runtime.v2.task")
        if not os.path.isdir(tasks):
            return out
        for ns in os.listdir(tasks):
            for cid in os.listdir(os.path.join(tasks, ns)):
                init = _read_pid(os.path.join(tasks, ns, cid, "init.pid"))
                if init is None or not _alive(init):
                    continue
                shim = _ppid(init)
                out.append((init, shim if shim and self._ours(shim) else None))
        return out

    def _stop_pid(self, pid, timeout=10):
        try:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if not _wait_gone(pid, timeout):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _wait_gone(pid, 5)

    def mounts_below(self):
        """Mount points under the temp dir, deepest first."""
        out = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                mp = line.split()[4].encode().decode("unicode_escape")
                if mp == self.tmp or mp.startswith(self.tmp + "/"):
                    out.append(mp)
        return sorted(set(out), key=len, reverse=True)

    def teardown(self, remove_tmp=True):
        problems = []
        if self.running():
            if self.frozen:
                self.thaw()
            try:
                for c in self.containers(managed_only=False):
                    self.remove(c["Id"])
            except Exception as e:          # a broken dockerd: the pid files below
                problems.append(f"removing containers: {e}")
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        containerd = self.containerd_pid()
        if containerd is not None:
            self._stop_pid(containerd)
        for init, shim in self.shim_pids():
            for pid in (init, shim):
                if pid is not None:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            if shim is not None:
                _wait_gone(shim, 5)
        for mp in self.mounts_below():
            if subprocess.run(["umount", mp], stderr=subprocess.DEVNULL).returncode != 0:
                subprocess.run(["umount", "-l", mp], stderr=subprocess.DEVNULL)
        left = self.mounts_below()
        if left:
            problems.append(f"still mounted: {left}")
        if remove_tmp and not left:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return problems
