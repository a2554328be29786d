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

import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))

from privengine import (TEST_IMAGE, EngineError, PrivateEngine,  # noqa: E402
                        _alive, _ppid, _read_pid, _wait_gone, stop_process)


class DockerError(EngineError):
    pass


def docker_cli():
    """The docker CLI that talks to this dockerd (the first one on PATH may be newer; it
    negotiates down; Debian's is the fallback)."""
    for c in (shutil.which("docker"), "/usr/bin/docker"):
        if c and os.access(c, os.X_OK):
            return c
    raise DockerError("no docker CLI")


class PrivateDocker(PrivateEngine):
    NAME = "dockerd"
    Error = DockerError

    def __init__(self, tmp=None, log_name="dockerd.log"):
        super().__init__(tmp, "sbx-fault-docker-", "docker.sock", log_name)
        self.data_root = os.path.join(self.tmp, "data")
        self.exec_root = os.path.join(self.tmp, "exec")
        self.pidfile = os.path.join(self.tmp, "dockerd.pid")
        self.config_file = os.path.join(self.tmp, "daemon.json")
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

    def start(self, timeout=60, image=True):
        """Starts dockerd (again, after kill(): same data root) and waits for /_ping."""
        if self.running():
            raise DockerError("the private dockerd already runs")
        for d in (self.data_root, self.exec_root):
            os.makedirs(d, mode=0o711, exist_ok=True)
        if not os.path.exists(self.config_file):
            with open(self.config_file, "w") as f:
                f.write("{}\n")
        self._popen(self.argv())
        self.frozen = False
        self.wait_ping(timeout)
        if image:
            self.ensure_image()
        return self

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

    def cli(self, *args, input=None, timeout=120):
        return subprocess.run([docker_cli(), "-H", self.host] + list(args), input=input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, check=True)

    def _import(self, tar):
        self.cli("import", "-c", 'CMD ["/bin/sh"]', "-", TEST_IMAGE, input=tar)

    # ---- teardown ---------------------------------------------------------------------

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

    def teardown(self, remove_tmp=True):
        problems = []
        if self.running():
            if self.frozen:
                self.thaw()
            self.remove_all(problems, "removing containers")  # if broken: the pid files below
            stop_process(self.proc, 20)
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
