# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private rootful Podman for the tests (docs/engines.md): `podman system service
--time=0 unix://SOCKET` with its own storage, run directory, containers.conf and
storage.conf under one temp dir, in a network namespace of its own held by a process of
this module's (entered with `nsenter --net`, never `ip netns exec`: that remounts /sys,
and Podman then sees no cgroups and drops every limit silently), the test image imported
into it with `podman import` on the same storage (the compat import ignores `tag`).

    p = PrivatePodman(tmp).start()      # waits for /_ping, imports the test image
    p.api("GET", "/containers/json?all=1");  p.cli("kill", NAME)
    p.teardown()                        # its containers, the service by pid, the netns
                                        # holder, what rootful Podman leaves on the host

The containers' ulimits are the service process's own (Podman writes RLIMIT_NOFILE and
RLIMIT_NPROC into every OCI spec, and a container with every capability dropped cannot
raise them: its start fails `error setting rlimit`), so the service is started once, its
/proc/PID/limits read, containers.conf written with them, and started again.
Processes are signalled by pid only, each checked to be this temp dir's first.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

import sandbox_helpers as h

TEST_IMAGE = "xagent-sandbox-test:latest"
BUSYBOX = "/bin/busybox"
PODMAN = "/usr/bin/podman"
# What rootful Podman makes on the host whatever its storage configuration says
# (removed after the test where it made them: parents first in this list).
HOST_LEFTOVERS = ("/var/lib/containers", "/var/lib/containers/cache", "/run/containers",
                  "/run/containers/networks")


class PodmanError(RuntimeError):
    pass


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _limits(pid):
    """{"nofile": (soft, hard), "nproc": (soft, hard)} of a process."""
    out = {}
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            for key, title in (("nofile", "Max open files"), ("nproc", "Max processes")):
                if line.startswith(title):
                    soft, hard = line[len(title):].split()[:2]
                    out[key] = (soft, hard)
    return out


class PrivatePodman:
    def __init__(self, tmp=None):
        self.tmp = tmp or tempfile.mkdtemp(prefix="sbx-podman-")
        os.makedirs(self.tmp, mode=0o711, exist_ok=True)
        self.socket = os.path.join(self.tmp, "podman.sock")
        self.host = "unix://" + self.socket
        self.root = os.path.join(self.tmp, "root")
        self.runroot = os.path.join(self.tmp, "runroot")
        self.conf = os.path.join(self.tmp, "containers.conf")
        self.storage_conf = os.path.join(self.tmp, "storage.conf")
        self.log_path = os.path.join(self.tmp, "podman.log")
        self.proc = self.holder = None
        self.made = [p for p in HOST_LEFTOVERS if not os.path.exists(p)]
        self.var_tmp_before = self._api_load_files()

    # ---- configuration ---------------------------------------------------------------

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTAINERS_", "XDG_"))}
        env.update(CONTAINERS_CONF=self.conf, CONTAINERS_STORAGE_CONF=self.storage_conf,
                   TMPDIR=os.path.join(self.tmp, "tmp"))
        return env

    def _write_conf(self, ulimits=()):
        for d in ("root", "runroot", "tmp", "networks", "volumes"):
            os.makedirs(os.path.join(self.tmp, d), mode=0o711, exist_ok=True)
        with open(self.storage_conf, "w") as f:
            f.write(f'[storage]\ndriver = "overlay"\nrunroot = "{self.runroot}"\ngraphroot = "{self.root}"\n')
        lines = ["[containers]", "default_ulimits = [" + ", ".join(f'"{u}"' for u in ulimits) + "]",
                 "[network]", f'network_config_dir = "{self.tmp}/networks"',
                 "[engine]", 'cgroup_manager = "cgroupfs"', 'events_logger = "file"',
                 f'events_logfile_path = "{self.tmp}/events.log"',
                 f'image_copy_tmp_dir = "{self.tmp}/tmp"',
                 f'volume_path = "{self.tmp}/volumes"',
                 f'static_dir = "{self.root}/libpod"', f'tmp_dir = "{self.runroot}/libpod"']
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    # ---- the process -----------------------------------------------------------------

    def netns(self):
        return f"/proc/{self.holder.pid}/ns/net"

    def nsenter(self, argv):
        return ["/usr/bin/nsenter", f"--net={self.netns()}", "--"] + list(argv)

    def _spawn(self):
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.nsenter([PODMAN, "--root", self.root, "--runroot", self.runroot,
                          "system", "service", "--time=0", self.host]),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.tmp, env=self.env(),
            start_new_session=True)
        log.close()
        self.wait_ping(60)

    def _stop_service(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def start(self):
        self.holder = subprocess.Popen(["/usr/bin/unshare", "--net", "--", "/bin/sleep", "infinity"],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        h.wait_until(lambda: os.readlink(self.netns()) != os.readlink("/proc/self/ns/net"), 5, 0.02,
                     "the network namespace")
        subprocess.run(self.nsenter(["ip", "link", "set", "lo", "up"]), check=True)
        self._write_conf()
        self._spawn()
        # The containers' ulimits must be exactly the service process's own (see above).
        lim = _limits(self.proc.pid)
        self._stop_service()
        self.ulimits = [f"{k}={s}:{hd}" for k, (s, hd) in sorted(lim.items())]
        self._write_conf(self.ulimits)
        self._spawn()
        self.ensure_image()
        return self

    def wait_ping(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PodmanError(f"podman exited with {self.proc.returncode}: {self.log()}")
            try:
                if self.api("GET", "/_ping", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise PodmanError(f"podman did not answer /_ping within {timeout}s: {self.log()}")

    def log(self, tail=3000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    # ---- the API and the CLI on the same storage ---------------------------------------

    def api(self, method, path, body=None, timeout=60):
        return h.docker(method, path, body, timeout, socket_path=self.socket)

    def ok(self, method, path, body=None, timeout=60):
        status, data = self.api(method, path, body, timeout)
        if status // 100 != 2:
            raise PodmanError(f"{method} {path}: {status} {data}")
        return data

    def cli(self, *args, input=None, timeout=120):
        """The podman command on this storage, talking to the running service's state."""
        return subprocess.run(self.nsenter([PODMAN, "--root", self.root, "--runroot", self.runroot] +
                                           list(args)), input=input, env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=True)

    def containers(self, managed_only=True):
        from urllib.parse import quote
        import json
        path = "/containers/json?all=1"
        if managed_only:
            path += "&filters=" + quote(json.dumps({"label": ["xagent.managed=true"]}))
        return self.ok("GET", path)

    def inspect(self, cid):
        status, data = self.api("GET", f"/containers/{cid}/json")
        return data if status == 200 else None

    def remove(self, cid):
        status, data = self.api("DELETE", f"/containers/{cid}?force=1&v=1")
        if status not in (200, 204, 404):
            raise PodmanError(f"remove {cid}: {status} {data}")

    def ensure_image(self):
        """The test image, as tests/setup-docker.sh makes it, by `podman import` (stored
        as localhost/NAME: the compat route would ignore the tag)."""
        if self.api("GET", f"/images/{TEST_IMAGE}/json")[0] == 200:
            return
        rootfs = tempfile.mkdtemp(prefix="rootfs-", dir=self.tmp)
        try:
            for d in ("bin", "sbin", "usr/bin", "usr/sbin", "tmp", "home", "etc", "root",
                      "proc", "sys", "dev", "var/tmp"):
                os.makedirs(os.path.join(rootfs, d), exist_ok=True)
            for d in ("tmp", "var/tmp"):
                os.chmod(os.path.join(rootfs, d), 0o1777)
            shutil.copy(BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
            subprocess.run(["chroot", rootfs, "/bin/busybox", "--install", "-s"], check=True)
            with open(os.path.join(rootfs, "etc", "passwd"), "w") as f:
                f.write("root:x:0:0:root:/root:/bin/sh\n"
                        "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
            with open(os.path.join(rootfs, "etc", "group"), "w") as f:
                f.write("root:x:0:\nnogroup:x:65534:\n")
            tar = os.path.join(self.tmp, "rootfs.tar")
            subprocess.run(["tar", "-C", rootfs, "--numeric-owner", "-cf", tar, "."], check=True)
            self.cli("import", "--change", 'CMD ["/bin/sh"]', tar, TEST_IMAGE)
            os.unlink(tar)
        finally:
            shutil.rmtree(rootfs, ignore_errors=True)
        if self.api("GET", f"/images/{TEST_IMAGE}/json")[0] != 200:
            raise PodmanError(f"import of {TEST_IMAGE} failed")

    # ---- teardown ----------------------------------------------------------------------

    @staticmethod
    def _api_load_files():
        try:
            return {f for f in os.listdir("/var/tmp") if f.startswith("api_load.tar")}
        except OSError:
            return set()

    def _pids_of_this_tmp(self):
        """Live processes whose command line names a path under this temp dir."""
        mine, out = str(os.getpid()), []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == mine:
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if (self.tmp + "/").encode() in cmd and _alive(int(pid)):
                out.append(int(pid))
        return out

    def teardown(self, remove_tmp=True):
        problems = []
        if self.proc is not None and self.proc.poll() is None:
            try:
                for c in self.containers(managed_only=False):
                    self.remove(c["Id"])
            except Exception as e:
                problems.append(f"containers: {e}")
        self._stop_service()
        # conmon outlives the service: a finished exec's keeps its exit status for 300 s
        # (--exit-delay). Those of this storage only, by pid.
        for pid in self._pids_of_this_tmp():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
        # The overlay mounts of its storage, deepest first.
        with open("/proc/self/mountinfo") as f:
            mps = sorted({ln.split()[4] for ln in f if ln.split()[4].startswith(self.tmp + "/")},
                         key=len, reverse=True)
        for mp in mps:
            subprocess.run(["umount", "-l", mp], stderr=subprocess.DEVNULL)
        for f in self._api_load_files() - self.var_tmp_before:
            os.unlink(os.path.join("/var/tmp", f))
        for p in reversed(self.made):
            shutil.rmtree(p, ignore_errors=True)
        if remove_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if problems:
            raise PodmanError("; ".join(problems))
