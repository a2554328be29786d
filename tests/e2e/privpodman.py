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

from privengine import TEST_IMAGE, EngineError, NetnsHolder, PrivateEngine, _alive, _cmdline, stop_process

PODMAN = "/usr/bin/podman"
# What rootful Podman makes on the host whatever its storage configuration says
# (removed after the test where it made them: parents first in this list).
HOST_LEFTOVERS = ("/var/lib/containers", "/var/lib/containers/cache", "/run/containers",
                  "/run/containers/networks")


class PodmanError(EngineError):
    pass


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


class PrivatePodman(PrivateEngine):
    NAME = "podman"
    Error = PodmanError
    API_TIMEOUT = 60
    REMOVED = (200, 204, 404)

    def __init__(self, tmp=None):
        super().__init__(tmp, "sbx-podman-", "podman.sock", "podman.log")
        self.root = os.path.join(self.tmp, "root")
        self.runroot = os.path.join(self.tmp, "runroot")
        self.conf = os.path.join(self.tmp, "containers.conf")
        self.storage_conf = os.path.join(self.tmp, "storage.conf")
        self.holder = None
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

    def nsenter(self, argv):
        return self.holder.nsenter(argv)

    def _spawn(self):
        self._popen(self.nsenter([PODMAN, "--root", self.root, "--runroot", self.runroot,
                                  "system", "service", "--time=0", self.host]), env=self.env())
        self.wait_ping(60)

    def _stop_service(self):
        stop_process(self.proc, 15)
        self.proc = None

    def start(self):
        self.holder = NetnsHolder()
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

    # ---- the API and the CLI on the same storage ---------------------------------------

    def cli(self, *args, input=None, timeout=120):
        """The podman command on this storage, talking to the running service's state."""
        return subprocess.run(self.nsenter([PODMAN, "--root", self.root, "--runroot", self.runroot] +
                                           list(args)), input=input, env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=True)

    def _import(self, tar):
        """`podman import` on the same storage (stored as localhost/NAME: the compat route
        would ignore the tag)."""
        path = os.path.join(self.tmp, "rootfs.tar")
        with open(path, "wb") as f:
            f.write(tar)
        self.cli("import", "--change", 'CMD ["/bin/sh"]', path, TEST_IMAGE)
        os.unlink(path)

    # ---- teardown ----------------------------------------------------------------------

    @staticmethod
    def _api_load_files():
        try:
            return {f for f in os.listdir("/var/tmp") if f.startswith("api_load.tar")}
        except OSError:
            return set()

    def _pids_of_this_tmp(self):
        """Live processes whose command line names a path under this temp dir."""
        mine = str(os.getpid())
        return [int(pid) for pid in os.listdir("/proc")
                if pid.isdigit() and pid != mine and (self.tmp + "/") in (_cmdline(pid) or "")
                and _alive(int(pid))]

    def teardown(self, remove_tmp=True):
        problems = []
        if self.running():
            self.remove_all(problems, "containers")
        self._stop_service()
        # conmon outlives the service: a finished exec's keeps its exit status for 300 s
        # (--exit-delay). Those of this storage only, by pid.
        for pid in self._pids_of_this_tmp():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.holder is not None:
            self.holder.close()
        # The overlay mounts of its storage, deepest first.
        for mp in self.mounts_below():
            subprocess.run(["umount", "-l", mp], stderr=subprocess.DEVNULL)
        for f in self._api_load_files() - self.var_tmp_before:
            os.unlink(os.path.join("/var/tmp", f))
        for p in reversed(self.made):
            shutil.rmtree(p, ignore_errors=True)
        if remove_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if problems:
            raise PodmanError("; ".join(problems))
