# SPDX-License-Identifier: LGPL-2.1-or-later
"""Podman as the engine (docs/engines.md): a private rootful Podman 4.3.1
service (privpodman.py: its own socket, storage, run dirs and network namespace), the
service pointed at it by the host policy's engine.host and nsentered into its network
namespace, the member using it through the real bus and polkitd. The shared dockerd is
not touched. Takes about 25 s (the service restarted twice, a 1 s wait for a restart)."""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile

import pytest

import privpodman
import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

MISMATCH = "mismatch"


@pytest.fixture(scope="module")
def podman(stack):
    assert shutil.which("podman"), "podman is missing: run tools/install-deps.sh"
    tmp = tempfile.mkdtemp(prefix="sbx-podman-")
    os.chmod(tmp, 0o711)
    p = privpodman.PrivatePodman(os.path.join(tmp, "podman"))
    try:
        p.start()
        stack.stop_daemon()
        h.write_config(stack, {"engine": {"host": p.host}})
        stack.set_daemon_command(p.nsenter(stack.default_daemon_argv()))
        yield p
    finally:
        stack.stop_daemon()
        stack.set_daemon_command(stack.default_daemon_argv())
        if os.path.exists(stack.config_path):
            os.unlink(stack.config_path)
        p.teardown()
        shutil.rmtree(tmp, ignore_errors=True)
    for path in privpodman.HOST_LEFTOVERS:
        assert path not in p.made or not os.path.exists(path), path


def owned_file(podman, name, data=None):
    path = os.path.join(podman.tmp, name)
    with open(path, "wb") as f:
        if data:
            f.write(data)
    os.chown(path, h.uid_of(MEMBER), h.gid_of(MEMBER))
    return path


def test_lifecycle_on_podman(stack, podman):
    bus = h.Sandboxd(stack)
    bridge, iso = h.unique("pmb"), h.unique("pmi")
    bridge_spec = h.spec(ports=[(18181, 8080)], env={"FOO": "bar"})
    iso_spec = h.spec(network_isolated=True)
    listener = h.Listener(stack, MEMBER)
    try:
        path, _ = bus.create(MEMBER, bridge, bridge_spec).result
        bus.create(MEMBER, iso, iso_spec).result
        assert bus.verify(MEMBER, bridge, bridge_spec).result[0] == "match"
        assert bus.verify(MEMBER, iso, iso_spec).result[0] == "match"
        inspected = podman.inspect(h.container_name(bridge, MEMBER))
        assert inspected["HostConfig"]["IpcMode"] == "shareable", inspected["HostConfig"]
        assert inspected["Config"]["Image"] == "localhost/" + h.TEST_IMAGE
        # Egress is enforced the same way in a Podman sandbox's namespace (docs/security.md):
        # the default, then an allow-list with a name, its resolver refusing any other name.
        e = bus.inspect(MEMBER, bridge).result[0]["egress"]
        assert e["effective"] == "public" and e["enforced"], e
        bus.call(MEMBER, "SetSandboxEgress", "sa{sv}", [bridge, {
            "mode": ["s", "allowlist"], "allow": ["as", ["203.0.113.7:443", "pypi.example.test:443"]]}]).result
        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [bridge, ["nslookup", "unlisted.example.test"], {}]).result
        assert "Address" not in bytes(r[1]).decode().partition("Name:")[2], bytes(r[1])
        e = bus.call(MEMBER, "RefreshSandbox", "s", [bridge]).result[0]["egress"]
        assert e["effective"] == "allowlist" and e["enforced"] and e["names_refused"] >= 1, e

        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}",
                     [bridge, ["sh", "-c", "cat; id -u; echo $FOO; echo err >&2"],
                      {"stdin": ["ay", list(b"in\n")]}]).result
        assert (r[0], bytes(r[1]).decode(), bytes(r[2]).decode()) == \
            (0, f"in\n{h.uid_of(MEMBER)}\nbar\n", "err\n")
        bus.call(OTHER, "Exec", "asa{sv}", [["true"], {}],
                 path=h.object_path(bridge, MEMBER), iface=h.SANDBOX).error(*h.DENIED)

        assert bus.call(MEMBER, "WriteFile", "ssaya{sv}", [bridge, "/tmp/f", list(b"on podman"), {}]).ok
        assert bytes(bus.call(MEMBER, "ReadFile", "ssa{sv}", [bridge, "/tmp/f", {}]).result[0]) == b"on podman"

        src, out = owned_file(podman, "in.tar"), owned_file(podman, "out.tar")
        with tarfile.open(src, "w") as t:
            import io
            data = b"copied on podman\n"
            info = tarfile.TarInfo("copied.txt")
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
        assert bus.call(MEMBER, "CopyToSandbox", "ssha{sv}", [bridge, "/tmp", "<" + src, {}]).ok
        assert bus.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [bridge, "/tmp/copied.txt", ">" + out, {}]).ok
        with tarfile.open(out) as t:
            assert t.extractfile("copied.txt").read() == b"copied on podman\n"

        # Killed behind the service's back: Podman's event is seen.
        podman.cli("kill", h.container_name(bridge, MEMBER))
        listener.wait_for(lambda sigs: any(s["member"] == "PropertiesChanged" and s["path"] == path and
                                           "stopped" in json.dumps(s["args"]) for s in sigs), timeout=15)
        assert bus.start(MEMBER, bridge).ok
        assert bus.verify(MEMBER, bridge, bridge_spec).result[0] == "match"
        assert bus.stop(MEMBER, bridge).ok
        assert bus.verify(MEMBER, bridge, bridge_spec).result[0] == "match"
        assert bus.delete(MEMBER, bridge).ok
        assert bus.delete(MEMBER, iso).ok
        assert podman.containers() == []
    finally:
        listener.close()
        for c in podman.containers():
            podman.remove(c["Id"])


def test_changes_behind_the_back_are_mismatches(stack, podman):
    """podman update behind the service's back: Podman 4.3.1 sends no event and its
    inspect keeps the limits the container was created with; the kernel's cgroup
    limits are judged, so a changed limit is a mismatch once the last observation has
    aged out (observation_max_age, 2 s by default), never a match."""
    bus = h.Sandboxd(stack)
    name = h.unique("pmupd")
    sp = h.spec(network_isolated=True)
    try:
        bus.create(MEMBER, name, sp).result
        assert bus.verify(MEMBER, name, sp).result[0] == "match"
        cname = h.container_name(name, MEMBER)
        podman.cli("update", "--memory", "300m", "--memory-swap", "300m", cname)
        assert podman.inspect(cname)["HostConfig"]["Memory"] == 512 * 1024 * 1024    # what Podman says
        h.wait_until(lambda: bus.verify(MEMBER, name, sp).result == [MISMATCH, ["memory"]], 4, 0.2,
                     "the changed memory limit seen")
        podman.cli("update", "--memory", "512m", "--memory-swap", "512m", cname)
        h.wait_until(lambda: bus.verify(MEMBER, name, sp).result[0] == "match", 4, 0.2, "the limit restored")
        podman.cli("update", "--cpus", "2", cname)
        h.wait_until(lambda: bus.verify(MEMBER, name, sp).result == [MISMATCH, ["cpus"]], 4, 0.2,
                     "the changed CPU limit seen")
    finally:
        bus.delete(MEMBER, name)
    assert podman.containers() == []


def test_what_podman_cannot_prove_is_refused(stack, podman):
    """A host port 0 cannot be verified on Podman (it reports the port it chose in the
    place of the request): refused before anything is made, naming why."""
    bus = h.Sandboxd(stack)
    m = bus.create(MEMBER, h.unique("pmport0"), h.spec(ports=[(0, 8080)])).error(h.ERR + "PolicyViolation")
    assert "host port 0" in m and "Podman" in m, m
    assert podman.containers() == []


def test_snapshot_refused_on_podman(stack, podman):
    """Podman 4.3.1's commit ignores the labels the service gives a snapshot's image
    (it would keep the sandbox's owner and fingerprint): refused, typed, nothing made."""
    bus = h.Sandboxd(stack)
    name, sid = h.unique("pmsrc"), h.unique("pmsnap")
    try:
        bus.create(MEMBER, name, h.spec(network_isolated=True)).result
        images = podman.ok("GET", "/images/json")
        m = bus.snapshot(MEMBER, name, sid).error(h.ERR + "PolicyViolation")
        assert "Podman" in m and "labels" in m, m
        assert podman.ok("GET", "/images/json") == images
        assert sid not in bus.list_snapshots(MEMBER)
    finally:
        bus.delete(MEMBER, name)
    assert podman.containers() == []


def test_a_posture_weakened_behind_the_back(stack, podman):
    """Swap allowed behind the service's back (podman update --memory-swap): the
    verdict is the spec's (xagent's: memory is unchanged), the posture is judged apart
    and is no longer hardened — from the cgroups, as Podman's inspect does not change."""
    bus = h.Sandboxd(stack)
    name = h.unique("pmswap")
    sp = h.spec(network_isolated=True)
    try:
        bus.create(MEMBER, name, sp).result
        assert bus.inspect(MEMBER, name).result[0]["hardened"] is True
        cname = h.container_name(name, MEMBER)
        podman.cli("update", "--memory", "512m", "--memory-swap", "1g", cname)
        assert podman.inspect(cname)["HostConfig"]["MemorySwap"] == 512 * 1024 * 1024
        h.wait_until(lambda: bus.inspect(MEMBER, name).result[0]["hardened"] is False, 4, 0.2,
                     "the swap allowed seen")
        assert bus.verify(MEMBER, name, sp).result[0] == "match"
    finally:
        bus.delete(MEMBER, name)
    assert podman.containers() == []


# ---- engines a user administers ----------------------------------------------------------

FAKE_ROOTLESS = r"""
import http.server, json, os, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, body, extra=()):
        data = json.dumps(body).encode() if body is not None else b"OK"
        self.send_response(200)
        self.send_header("Api-Version", "1.41")
        self.send_header("Libpod-Api-Version", "4.3.1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        p = self.path.split("?")[0]
        if p.endswith("/_ping"):
            return self.answer(None)
        if p.endswith("/version"):
            return self.answer({"Components": [{"Name": "Podman Engine", "Version": "4.3.1"}],
                                "Version": "4.3.1", "ApiVersion": "1.41"})
        if p.endswith("/libpod/info"):
            return self.answer({"host": {"security": {"rootless": True, "capabilities": "CAP_CHOWN"}}})
        self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
path = sys.argv[1]
s = S(path, H)
os.chmod(path, 0o666)
print("ready", flush=True)
s.serve_forever()
"""


class FakeEngine:
    """A unix socket answering like a rootless Podman (reference §7), run by this test."""

    def __init__(self, tmp, name):
        self.socket = os.path.join(tmp, name)
        self.proc = subprocess.Popen(["/usr/bin/python3", "-c", FAKE_ROOTLESS, self.socket],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout.readline().strip() == b"ready"

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.mark.parametrize("case", ["rootless", "socket-owner"])
def test_an_engine_a_user_administers_is_refused(stack, podman, case):
    bus = h.Sandboxd(stack)
    tmp = tempfile.mkdtemp(prefix="sbx-fake-podman-")
    os.chmod(tmp, 0o755)
    fake = None
    try:
        if case == "rootless":
            fake = FakeEngine(tmp, "podman.sock")
            host, reason = "unix://" + fake.socket, "rootless Podman"
        else:
            # The private rootful Podman itself, its socket handed to the outsider.
            os.chown(podman.socket, h.uid_of(OTHER), h.gid_of(OTHER))
            host, reason = podman.host, f"owned by uid {h.uid_of(OTHER)}, not root"
        stack.stop_daemon()
        h.write_config(stack, {"engine": {"host": host}})
        m = bus.create(MEMBER, h.unique("pmuser"), h.spec(network_isolated=True)).error(h.ERR + "BackendUnavailable")
        assert reason in m and "administered by" in m, m
        # At load, too: the policy's check names the same reason.
        r = subprocess.run([stack.daemon_binary, "--check-config", stack.config_path], capture_output=True, text=True)
        assert r.returncode != 0 and reason in r.stderr, (r.returncode, r.stdout, r.stderr)
    finally:
        stack.stop_daemon()
        os.chown(podman.socket, 0, 0)
        h.write_config(stack, {"engine": {"host": podman.host}})
        if fake:
            fake.close()
        shutil.rmtree(tmp, ignore_errors=True)
    # The rootful Podman, its socket root's again, passes.
    r = subprocess.run([stack.daemon_binary, "--check-config", stack.config_path], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.endswith(": ok\n"), (r.stdout, r.stderr)
    assert podman.containers() == []


def test_a_lost_row_is_adopted_on_podman(stack, podman):
    """A sandbox whose store row was lost is proven by its fingerprint label and
    recorded again, as on Docker: the variables Podman adds to Config.Env (PATH, TERM,
    container, HOME, HOSTNAME) are read as maybe the spec's, like the image's."""
    import sqlite3
    bus = h.Sandboxd(stack)
    name = h.unique("pmlost")
    sp = h.spec(network_isolated=True, env={"FOO": "bar", "TERM": "dumb"})
    try:
        bus.create(MEMBER, name, sp).result
        cid = podman.inspect(h.container_name(name, MEMBER))["Id"]
        with sqlite3.connect(os.path.join(stack.state_dir, "sandboxd.db")) as db:
            assert db.execute("DELETE FROM sandboxes WHERE name = ?", (h.qualified(name, MEMBER),)).rowcount == 1
        # The reconciliation of a daemon started again finds it without a row.
        stack.stop_daemon()
        bus.call(MEMBER, "ListSandboxes").result

        def recorded():
            with sqlite3.connect(os.path.join(stack.state_dir, "sandboxd.db")) as db:
                return db.execute("SELECT container_id FROM sandboxes WHERE name = ?",
                                  (h.qualified(name, MEMBER),)).fetchone()
        h.wait_until(lambda: recorded() or podman.inspect(cid) is None, 10, 0.1, "the reconciliation")
        assert recorded() == (cid,), podman.inspect(cid) is None
        assert bus.verify(MEMBER, name, sp).result[0] == "match"
    finally:
        bus.delete(MEMBER, name)
    assert podman.containers() == []
