# SPDX-License-Identifier: LGPL-2.1-or-later
"""A remote engine over mutual TLS (docs/engines.md): a private dockerd in its own network
namespace listening on TLS only (--tlsverify, certificates made here with certtool),
the service (entered into that namespace with nsenter) pointed at it by the host
policy's engine key, and the member using it through the real bus. Every bad
certificate is its own clear BackendUnavailable with nothing created; host volumes are
refused. The shared dockerd is not touched: the test image is imported into the
private one. Takes about a minute (dockerd starts, a handful of daemon restarts)."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

import privengine
import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fault"))

import privdocker  # noqa: E402

UNAVAILABLE = h.ERR + "BackendUnavailable"
PORT = 2376
NAME = "engine.sbx.test"


# ---- certificates ------------------------------------------------------------------------

def _certtool(*args):
    # Never skipped: tools/install-deps.sh installs gnutls-bin.
    assert shutil.which("certtool"), "certtool (gnutls-bin) is missing: run tools/install-deps.sh"
    subprocess.run(["certtool", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _template(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Certs:
    """A CA, the engine's certificate (NAME and 127.0.0.1), the service's client
    certificate, and the bad ones: another CA with its own client certificate, an expired
    and a not-yet-valid client certificate, an engine certificate for another name."""

    def __init__(self, d):
        self.d = d
        self.ca = self._ca("ca")
        self.rogue_ca = self._ca("rogue-ca")
        self.server = self._cert("server", "ca", ["tls_www_server", f'dns_name = "{NAME}"',
                                                  'ip_address = "127.0.0.1"'])
        self.other_name = self._cert("other-name", "ca", ["tls_www_server", 'dns_name = "elsewhere.test"'])
        self.client = self._cert("client", "ca", ["tls_www_client"])
        self.rogue_client = self._cert("rogue-client", "rogue-ca", ["tls_www_client"])
        self.expired = self._cert("expired", "ca", ["tls_www_client"],
                                  ['activation_date = "2020-01-01 00:00:00"',
                                   'expiration_date = "2020-02-01 00:00:00"'])
        self.future = self._cert("future", "ca", ["tls_www_client"],
                                 ['activation_date = "2099-01-01 00:00:00"',
                                  'expiration_date = "2099-02-01 00:00:00"'])

    def p(self, name):
        return os.path.join(self.d, name)

    def _ca(self, name):
        _certtool("--generate-privkey", "--key-type=ecdsa", "--outfile", self.p(name + ".key"))
        _template(self.p(name + ".tmpl"), [f'cn = "{name}"', "ca", "cert_signing_key", "expiration_days = 2"])
        _certtool("--generate-self-signed", "--load-privkey", self.p(name + ".key"),
                  "--template", self.p(name + ".tmpl"), "--outfile", self.p(name + ".pem"))
        return self.p(name + ".pem")

    def _cert(self, name, ca, usage, dates=("expiration_days = 2",)):
        _certtool("--generate-privkey", "--key-type=ecdsa", "--outfile", self.p(name + ".key"))
        os.chmod(self.p(name + ".key"), 0o600)
        _template(self.p(name + ".tmpl"), [f'cn = "{name}"', "signing_key", *usage, *dates])
        _certtool("--generate-certificate", "--load-privkey", self.p(name + ".key"),
                  "--load-ca-certificate", self.p(ca + ".pem"), "--load-ca-privkey", self.p(ca + ".key"),
                  "--template", self.p(name + ".tmpl"), "--outfile", self.p(name + ".pem"))
        return name

    def pair(self, name):
        return self.p(name + ".pem"), self.p(name + ".key")


class TlsDocker(privdocker.PrivateDocker):
    """The fault suite's private dockerd, also listening on TLS only, in a network
    namespace held by a process of this test's (so that a restarted dockerd, and the
    service nsentered there, find the same one)."""

    def __init__(self, tmp, certs, server="server"):
        super().__init__(tmp)
        self.certs, self.server = certs, server
        self.holder = privengine.NetnsHolder()

    def argv(self):
        cert, key = self.certs.pair(self.server)
        argv = super().argv()
        assert argv[:3] == ["/usr/bin/unshare", "--net", "--"]
        return self.holder.nsenter(argv[3:] + [
            "--host", f"tcp://127.0.0.1:{PORT}", "--tlsverify",
            "--tlscacert", self.certs.ca, "--tlscert", cert, "--tlskey", key])

    def teardown(self, remove_tmp=True):
        try:
            super().teardown(remove_tmp)
        finally:
            self.holder.close()


# ---- the world ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def world(stack):
    tmp = tempfile.mkdtemp(prefix="sbx-tls-")
    os.chmod(tmp, 0o711)
    certs = Certs(tmp)
    docker = TlsDocker(os.path.join(tmp, "docker"), certs)
    try:
        docker.start()
        yield docker
    finally:
        docker.teardown()
        shutil.rmtree(tmp, ignore_errors=True)


def engine(certs, client="client", ca=None, server_name=NAME, host=f"tcp://127.0.0.1:{PORT}"):
    cert, key = certs.pair(client)
    e = {"host": host, "tls_ca": ca or certs.ca, "tls_cert": cert, "tls_key": key}
    if server_name:
        e["server_name"] = server_name
    return e


def engine_fingerprint(certs):
    import hashlib
    import ssl
    with open(certs.p("server.pem")) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def spec(**kw):
    """The private dockerd's sandboxes have no network (its namespace has none to give)."""
    return h.spec(network_isolated=True, **kw)


def nsenter_argv(stack, docker):
    return docker.holder.nsenter(stack.default_daemon_argv())


class Remote:
    """The daemon on an engine policy, in the engine's namespace, for the body."""

    def __init__(self, stack, docker, **kw):
        self.stack, self.docker, self.kw = stack, docker, kw

    def __enter__(self):
        self.stack.stop_daemon()
        h.write_config(self.stack, {"engine": engine(self.docker.certs, **self.kw)})
        self.stack.set_daemon_command(nsenter_argv(self.stack, self.docker))
        return self

    def __exit__(self, *exc):
        self.stack.stop_daemon()
        self.stack.set_daemon_command(self.stack.default_daemon_argv())
        os.unlink(self.stack.config_path)


# ---- the lifecycle over TLS --------------------------------------------------------------

def test_lifecycle_exec_copies_and_events_over_tls(stack, world):
    bus = h.Sandboxd(stack)
    name = h.unique("tls")
    with Remote(stack, world):
        listener = h.Listener(stack, MEMBER)
        mark = h.LogMark(stack)
        try:
            path, fingerprint = bus.create(MEMBER, name, spec()).result
            # Who the engine proved to be: its certificate's SHA-256, in GetPolicy and the audit.
            identity = "sha256:" + engine_fingerprint(world.certs)
            policy = bus.call(MEMBER, "GetPolicy").result[0]
            assert policy["engine"] == f"tcp://127.0.0.1:{PORT}" and policy["engine_identity"] == identity, policy
            assert f'verb=create sandbox="{name}" outcome=ok owner={h.uid_of(MEMBER)} engine={identity}' \
                in mark.new(), mark.new()
            assert [c["Names"][0] for c in world.containers()] == ["/" + h.container_name(name, MEMBER)]
            assert bus.verify(MEMBER, name, spec()).result[0] == "match"
            # The init program reached the engine as a volume made there (the engine's host has no
            # directory of ours to bind), by a helper container that never ran and is gone.
            mounts = world.inspect(h.container_name(name, MEMBER))["Mounts"]
            init = [m for m in mounts if m["Destination"] == "/.xagent-sandbox"]
            assert len(init) == 1 and init[0]["Name"].startswith("xagent-sandbox-init-remote-"), mounts
            assert not init[0]["RW"]
            assert world.ok("GET", "/volumes/" + init[0]["Name"])["Options"] in (None, {})
            assert [c["Names"] for c in world.containers(managed_only=False)] == \
                [["/" + h.container_name(name, MEMBER)]]

            r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}",
                         [name, ["sh", "-c", "cat; id -u; echo err >&2"], {"stdin": ["ay", list(b"in\n")]}]).result
            assert (r[0], bytes(r[1]).decode(), bytes(r[2]).decode()) == (0, f"in\n{h.uid_of(MEMBER)}\n", "err\n")
            # No channel carries commands on a remote engine (its pids are not this host's;
            # docs/lifecycle.md, "Commands"): the fallback, a Docker exec, whose first process
            # has its parent outside the sandbox (PPid 0; over a channel: its supervisor), and
            # a detached process's too.
            r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", "echo $PPID"], {}]).result
            assert (r[0], bytes(r[1])) == (0, b"0\n"), r

            assert bus.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/f", list(b"over tls"), {}]).ok
            assert bytes(bus.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/f", {}]).result[0]) == b"over tls"

            # Copies over TLS (the service's program in the sandbox, on a TLS stream).
            src, out = os.path.join(world.tmp, "in.tar"), os.path.join(world.tmp, "out.tar")
            with tarfile.open(src, "w") as t:
                data = b"copied over tls\n"
                info = tarfile.TarInfo("copied.txt")
                info.size, info.mode = len(data), 0o644
                import io
                t.addfile(info, io.BytesIO(data))
            os.chown(src, h.uid_of(MEMBER), h.gid_of(MEMBER))
            with open(out, "wb"):
                pass
            os.chown(out, h.uid_of(MEMBER), h.gid_of(MEMBER))
            assert bus.call(MEMBER, "CopyToSandbox", "ssha{sv}", [name, "/tmp", "<" + src, {}]).ok
            assert bus.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [name, "/tmp/copied.txt", ">" + out, {}]).ok
            with tarfile.open(out) as t:
                assert t.extractfile("copied.txt").read() == b"copied over tls\n"

            # Events over TLS: a stop made behind the service's back is seen.
            world.ok("POST", f"/containers/{h.container_name(name, MEMBER)}/stop?t=0")
            listener.wait_for(lambda sigs: any(s["member"] == "PropertiesChanged" and s["path"] == path and
                                               "stopped" in json.dumps(s["args"]) for s in sigs), timeout=15)

            assert bus.stop(MEMBER, name).ok
            assert bus.delete(MEMBER, name).ok
            assert world.containers() == []
        finally:
            listener.close()
            for c in world.containers():
                world.remove(c["Id"])


def test_the_rest_of_the_surface_over_tls(stack, world):
    """Ensure, usage, a streamed exec, a detached process, pause and resume, and a
    snapshot with a sandbox made from it: all over the engine's TLS, as the member."""
    bus = h.Sandboxd(stack)
    name, child, sid = h.unique("tlsr"), h.unique("tlsc"), h.unique("tlss")
    exec_iface = "org.xagent.Sandbox1.Exec"
    with Remote(stack, world):
        try:
            bus.create(MEMBER, name, spec()).result
            r = bus.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, spec(), {}]).result
            assert r[0] == h.object_path(name, MEMBER), r
            usage = bus.call(MEMBER, "GetSandboxUsage", "s", [name]).result[0]
            assert usage["memory_bytes"] > 0, usage
            out = os.path.join(world.tmp, "streamed.txt")
            with open(out, "wb"):
                pass
            os.chown(out, h.uid_of(MEMBER), h.gid_of(MEMBER))
            path = bus.call(MEMBER, "StartExec", "sasa{sv}hhh",
                            [name, ["sh", "-c", "echo streamed"], {}, "</dev/null", ">" + out, ">/dev/null"]).result[0]
            h.wait_until(lambda: open(out, "rb").read() == b"streamed\n", 15, what="the streamed output")
            detached = bus.call(MEMBER, "StartExec", "sasa{sv}hhh",
                                [name, ["sh", "-c", "echo kept; sleep 600"], {"detach": ["b", True]},
                                 "</dev/null", ">/dev/null", ">/dev/null"]).result[0]
            h.wait_until(lambda: bytes(bus.call(MEMBER, "ReadOutput", "t", [0], path=detached,
                                                iface=exec_iface).result[0]) == b"kept\n", 15, what="kept")
            # The outsider is refused on a remote engine's sandbox as on a local one's.
            bus.call(OTHER, "Exec", "asa{sv}", [["true"], {}],
                     path=h.object_path(name, MEMBER), iface=h.SANDBOX).error(*h.DENIED)
            assert "another user" in bus.call(OTHER, "ReadOutput", "t", [0], path=detached,
                                              iface=exec_iface).error(h.ACCESS_DENIED)
            assert bus.call(MEMBER, "PauseSandbox", "s", [name]).ok
            assert bus.inspect(MEMBER, name).result[0]["state"] == "paused"
            assert bus.call(MEMBER, "ResumeSandbox", "s", [name]).ok
            assert bus.call(MEMBER, "Kill", "s", ["KILL"], path=detached, iface=exec_iface).ok
            bus.snapshot(MEMBER, name, sid).result
            bus.create(MEMBER, child, spec(image=None, snapshot=sid)).result
            assert bus.verify(MEMBER, child, spec(image=None, snapshot=sid)).result[0] == "match"
            assert path.startswith("/org/xagent/Sandbox1/exec/"), path
        finally:
            for n in (child, name):
                bus.delete(MEMBER, n)
            bus.delete_snapshot(MEMBER, sid)
            for c in world.containers():
                world.remove(c["Id"])
    assert world.containers() == []


def test_host_volumes_are_refused_on_a_remote_engine(stack, world):
    bus = h.Sandboxd(stack)
    with Remote(stack, world):
        r = bus.create(MEMBER, h.unique("tlsvol"), spec(volumes=[(h.home_of(MEMBER), "/work", "ro")]))
        m = r.error(h.ERR + "PolicyViolation")
        assert "remote engine" in m and "own host" in m, m
    assert world.containers() == []


def test_egress_is_refused_on_a_remote_engine(stack, world):
    """Its sandboxes' network namespaces are not on this host: a bridge sandbox's egress
    (the policy's default public, an allow-list, a name) cannot be enforced, so it is
    refused naming why (docs/security.md, "Egress"); nothing is made."""
    bus = h.Sandboxd(stack)
    with Remote(stack, world):
        for options in ({}, {"egress": ["a{sv}", {"mode": ["s", "allowlist"], "allow": ["as", ["203.0.113.7:443"]]}]},
                        {"egress": ["a{sv}", {"mode": ["s", "allowlist"], "allow": ["as", ["pypi.org:443"]]}]}):
            m = bus.create(MEMBER, h.unique("tlsegress"), h.spec(), options).error(h.ERR + "PolicyViolation")
            assert "egress" in m and "remote" in m and "cannot be enforced" in m, m
    assert world.containers() == []


def test_engine_restarted_mid_stream(stack, world):
    """dockerd killed and started again under a running exec: the exec ends with an
    error (never hangs), the event stream reconnects over TLS, nothing is orphaned."""
    import threading
    bus = h.Sandboxd(stack)
    name = h.unique("tlsrestart")
    with Remote(stack, world):
        listener = h.Listener(stack, MEMBER)
        try:
            path, _ = bus.create(MEMBER, name, spec()).result
            box = {}
            t = threading.Thread(target=lambda: box.setdefault("r", bus.call(
                MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", "echo started; sleep 60"], {}])))
            t.start()
            time.sleep(1.5)
            started = time.monotonic()
            world.restart()
            t.join(timeout=40)
            assert not t.is_alive(), "the exec did not end when the engine went away"
            r = box["r"]
            assert not r.ok or r.result[0] != 0, r
            assert time.monotonic() - started < 40

            # Events again, over a new TLS connection: the stop the restart made (or one made
            # behind the service's back), then a start behind its back.
            def seen(state, since):
                listener.wait_for(lambda sigs: any(s["member"] == "PropertiesChanged" and s["path"] == path and
                                                   state in json.dumps(s["args"]) for s in sigs[since:]),
                                  timeout=30)
            cid = h.container_name(name, MEMBER)
            n = len(listener.signals)
            if world.inspect(cid)["State"]["Running"]:
                world.ok("POST", f"/containers/{cid}/stop?t=0")
            seen("stopped", n)
            n = len(listener.signals)
            world.ok("POST", f"/containers/{cid}/start")
            seen("running", n)
            assert bus.delete(MEMBER, name).ok
            assert world.containers(managed_only=False) == []
        finally:
            listener.close()
            for c in world.containers(managed_only=False):
                world.remove(c["Id"])


# ---- what is refused ---------------------------------------------------------------------

BAD = {
    "expired": (dict(client="expired"), "expired"),
    "not_yet_valid": (dict(client="future"), "not valid yet"),
    "unknown_ca": (dict(ca="rogue-ca"), "certificate is refused"),
    "wrong_name": (dict(server_name="elsewhere.test"), "certificate is refused"),
    "cert_the_engine_does_not_accept": (dict(client="rogue-client"), "refused the handshake"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_certificates_are_named(stack, world, case):
    kw, words = BAD[case]
    if "ca" in kw:
        kw = dict(kw, ca=world.certs.p(kw["ca"] + ".pem"))
    bus = h.Sandboxd(stack)
    with Remote(stack, world, **kw):
        mark = h.LogMark(stack)
        for _ in range(2):
            r = bus.create(MEMBER, h.unique("tlsbad"), spec())
            m = r.error(UNAVAILABLE)
            assert "TLS" in m or "certificate" in m, m
            assert words in m, m
        # Logged once per state change, not per call (the event stream retries too).
        warnings = [line for line in mark.new().splitlines() if f"Engine tcp://127.0.0.1:{PORT}: " in line]
        assert len(warnings) == 1 and words in warnings[0], mark.new()
    assert world.containers() == []


def test_plain_http_on_the_port_is_named(stack, world):
    """A server on the port that does not speak TLS: never a fallback to plain text."""
    script = ("import http.server as s\n"
              "s.HTTPServer(('127.0.0.1', 2377), s.BaseHTTPRequestHandler).serve_forever()\n")
    plain = subprocess.Popen(world.holder.nsenter(["/usr/bin/python3", "-c", script]))
    try:
        time.sleep(0.5)
        bus = h.Sandboxd(stack)
        with Remote(stack, world, host="tcp://127.0.0.1:2377"):
            r = bus.create(MEMBER, h.unique("tlsplain"), spec())
            m = r.error(UNAVAILABLE)
            assert "does not speak TLS" in m, m
    finally:
        plain.kill()
        plain.wait()
    assert world.containers() == []


def test_plain_tcp_and_bad_key_files_are_refused_at_load(stack, world):
    certs = world.certs
    cfg = os.path.join(certs.d, "plain.json")
    with open(cfg, "w") as f:
        json.dump({"engine": {"host": f"tcp://127.0.0.1:{PORT}"}}, f)
    r = subprocess.run([stack.daemon_binary, "--check-config", cfg], capture_output=True, text=True)
    assert r.returncode != 0 and "plain TCP is refused" in r.stderr, r.stderr

    cert, key = certs.pair("client")
    os.chmod(key, 0o644)
    try:
        with open(cfg, "w") as f:
            json.dump({"engine": engine(certs)}, f)
        r = subprocess.run([stack.daemon_binary, "--check-config", cfg], capture_output=True, text=True)
        assert r.returncode != 0 and "tls_key" in r.stderr and "root only" in r.stderr, r.stderr
    finally:
        os.chmod(key, 0o600)
    r = subprocess.run([stack.daemon_binary, "--check-config", cfg], capture_output=True, text=True)
    assert r.returncode == 0 and "mutual TLS" in r.stdout, r.stderr
