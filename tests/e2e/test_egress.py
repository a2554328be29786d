# SPDX-License-Identifier: LGPL-2.1-or-later
"""Egress (docs/security.md, "Egress"): what a bridge sandbox may reach, enforced in its own
network namespace, as a member sees it through the bus.

The world is the test's own: a private dockerd in a network namespace of its own (its
bridge 172.17.0.1/16 there, no NAT, no firewall of its own), and an "outside" namespace
joined to it by a veth pair, holding the addresses a sandbox might try: public-looking
ones (TEST-NET 203.0.113.10 and 198.51.100.10, routed only between these two namespaces), a
private one (10.99.0.2) and, in the engine's namespace, the gateway 172.17.0.1 (where a
host service on 0.0.0.0 would answer). Each listens on ports 80 and 8080 with a tiny HTTP
server that answers its own address and port. No packet leaves these namespaces."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

import privengine
import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fault"))
import privdocker  # noqa: E402

PUBLIC, PUBLIC2, PRIVATE, GATEWAY = "203.0.113.10", "198.51.100.10", "10.99.0.2", "172.17.0.1"
SERVER = r"""
import http.server, socketserver, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("%s:%d" % self.server.server_address).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
for a in sys.argv[1:]:
    host, port = a.rsplit(":", 1)
    s = S((host, int(port)), H)
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""


# A small DNS server: answers A queries from its table (TTL 300; AAAA: no records; other
# names: NXDOMAIN) and logs every query it receives, with the address it came in on.
DNS = {"served.example.test": PUBLIC, "other.example.test": PUBLIC2, "a.wild.example.test": PUBLIC2,
       "unlisted.example.test": PUBLIC}
DNS_SERVER = r"""
import socket, struct, sys, threading
table = dict(a.split("=") for a in sys.argv[2].split(","))
log = open(sys.argv[1], "a", buffering=1)
def serve(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    while True:
        q, peer = s.recvfrom(4096)
        pos, labels = 12, []
        while q[pos]:
            labels.append(q[pos + 1:pos + 1 + q[pos]].decode()); pos += 1 + q[pos]
        qtype = struct.unpack(">H", q[pos + 1:pos + 3])[0]
        name = ".".join(labels).lower()
        log.write("%s %s %d\n" % (addr, name, qtype))
        question = q[12:pos + 5]
        known = name in table
        answers = b""
        if known and qtype == 1:
            answers = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + socket.inet_aton(table[name])
        flags = 0x8180 | (0 if known else 3)
        s.sendto(q[:2] + struct.pack(">HHHHH", flags, 1, 1 if answers else 0, 0, 0) + question + answers, peer)
for a in sys.argv[3:]:
    threading.Thread(target=serve, args=(a,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""
MAX_NAME_TTL = 5


def sh(argv):
    subprocess.run(argv, check=True, capture_output=True)


class EgressDocker(privdocker.PrivateDocker):
    """The private dockerd in a namespace held by the test (NetnsHolder), with a bridge
    its sandboxes really use."""

    def __init__(self, tmp):
        super().__init__(tmp)
        self.holder = privengine.NetnsHolder()

    def argv(self):
        argv = super().argv()
        assert argv[:3] == ["/usr/bin/unshare", "--net", "--"]
        return self.holder.nsenter(argv[3:])

    def teardown(self, remove_tmp=True):
        try:
            super().teardown(remove_tmp)
        finally:
            self.holder.close()


class World:
    def __init__(self, stack, tmp):
        self.stack = stack
        self.docker = EgressDocker(os.path.join(tmp, "docker"))
        self.outside = privengine.NetnsHolder()
        self.servers = []
        self.tmp = tmp

    def start(self):
        d, o = self.docker, self.outside
        d.start()
        # veth between the engine's namespace and the outside one
        sh(["ip", "link", "add", "sbxeg-e", "type", "veth", "peer", "name", "sbxeg-o"])
        sh(["ip", "link", "set", "sbxeg-e", "netns", d.holder.netns()])
        sh(["ip", "link", "set", "sbxeg-o", "netns", o.netns()])
        for argv in (["ip", "addr", "add", "10.99.0.1/24", "dev", "sbxeg-e"], ["ip", "link", "set", "sbxeg-e", "up"],
                     ["ip", "route", "add", "203.0.113.0/24", "via", PRIVATE],
                     ["ip", "route", "add", "198.51.100.0/24", "via", PRIVATE],
                     ["sysctl", "-qw", "net.ipv4.ip_forward=1"]):
            sh(d.holder.nsenter(argv))
        for argv in (["ip", "addr", "add", PRIVATE + "/24", "dev", "sbxeg-o"], ["ip", "link", "set", "sbxeg-o", "up"],
                     ["ip", "addr", "add", PUBLIC + "/32", "dev", "lo"],
                     ["ip", "addr", "add", PUBLIC2 + "/32", "dev", "lo"],
                     ["ip", "route", "add", "172.17.0.0/16", "via", "10.99.0.1"]):
            sh(o.nsenter(argv))
        self.serve(o, [f"{a}:{p}" for a in (PUBLIC, PUBLIC2, PRIVATE) for p in (80, 8080)])
        self.serve(d.holder, [f"{GATEWAY}:80"])
        self.dns_log = os.path.join(self.tmp, "dns.log")
        p = subprocess.Popen(o.nsenter(["/usr/bin/python3", "-c", DNS_SERVER, self.dns_log,
                                        ",".join(f"{k}={v}" for k, v in DNS.items()), PRIVATE, PUBLIC2]),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.servers.append(p)
        assert p.stdout.readline().strip() == "ready"
        return self

    def dns_queries(self):
        """(address it came in on, name) of every query the outside DNS server saw."""
        try:
            with open(self.dns_log) as f:
                return [tuple(line.split()[:2]) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def serve(self, holder, addrs):
        p = subprocess.Popen(holder.nsenter(["/usr/bin/python3", "-c", SERVER] + addrs),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.servers.append(p)
        assert p.stdout.readline().strip() == "ready"

    def close(self):
        for p in self.servers:
            p.kill()
            p.wait()
        self.outside.close()
        self.docker.teardown()


@pytest.fixture(scope="module")
def world(stack):
    tmp = tempfile.mkdtemp(prefix="sbx-egress-")
    os.chmod(tmp, 0o711)
    w = World(stack, tmp)
    try:
        w.start()
        stack.stop_daemon()
        # Listed names are looked up at the outside DNS server (the daemon runs in the
        # engine's namespace, which routes to it).
        h.write_config(stack, {"engine": {"host": w.docker.host},
                               "egress": {"resolvers": [f"{PRIVATE}:53"], "max_name_ttl": MAX_NAME_TTL}})
        stack.set_daemon_command(w.docker.holder.nsenter(stack.default_daemon_argv()))
        yield w
    finally:
        stack.stop_daemon()
        stack.set_daemon_command(stack.default_daemon_argv())
        if os.path.exists(stack.config_path):
            os.unlink(stack.config_path)
        w.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def bus(stack, world):
    return h.Sandboxd(stack)


@pytest.fixture
def made(bus):
    """Sandboxes made by a test, deleted after (as root, through the daemon)."""
    names = []
    yield names
    for n in names:
        bus.delete(h.ROOT, n, owner=MEMBER)


def egress(mode, *allow):
    return {"egress": ["a{sv}", {"mode": ["s", mode], "allow": ["as", list(allow)]}]}


def create(bus, made, options=None, user=MEMBER):
    name = h.unique("egress")
    made.append(name)
    r = bus.create(user, name, h.spec(), options or {})
    return name, r


def fetch(bus, name, addr, port=80, user=MEMBER):
    """(served, seconds): an HTTP GET from inside the sandbox, as its owner (busybox's nc:
    its wget crashes in the test image)."""
    script = ('read t0 x < /proc/uptime; printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 5 "$0" "$1"; '
              'read t1 x < /proc/uptime; echo; echo "took $t0 $t1"')
    r = bus.call(user, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script, addr, str(port)], {}],
                 timeout=60).result
    out = bytes(r[1]).decode(errors="replace")
    body, _, took = out.rpartition("\ntook ")
    t0, t1 = (float(x) for x in took.split())
    served = body.endswith(f"\r\n\r\n{addr}:{port}")
    return served, t1 - t0


def refused_at_once(bus, name, addr, port=80):
    served, took = fetch(bus, name, addr, port)
    assert not served, f"{addr}:{port} was served"
    # Timed inside the sandbox: a drop would hang for nc's 5 s.
    assert took < 2, f"{addr}:{port} refused only after {took:.1f} s"


def inspected_egress(bus, name, user=MEMBER):
    return bus.inspect(user, name).result[0]["egress"]


def test_the_default_reaches_public_addresses_only(bus, made):
    name, r = create(bus, made)
    r.result
    e = inspected_egress(bus, name)
    assert e["mode"] == "default" and e["effective"] == "public" and e["enforced"] is True, e
    assert fetch(bus, name, PUBLIC)[0] and fetch(bus, name, PUBLIC2, 8080)[0]
    refused_at_once(bus, name, PRIVATE)
    refused_at_once(bus, name, GATEWAY)
    policy = bus.call(MEMBER, "GetPolicy").result[0]["egress"]
    assert policy["default"] == "public" and "10.0.0.0/8" in policy["always_deny"], policy


def test_an_allow_list(bus, made):
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:8080/tcp"))
    r.result
    e = inspected_egress(bus, name)
    assert e["allow"] == [f"{PUBLIC}:8080/tcp"] and e["effective"] == "allowlist" and e["enforced"], e
    assert fetch(bus, name, PUBLIC, 8080)[0]
    refused_at_once(bus, name, PUBLIC, 80)          # another port
    refused_at_once(bus, name, PUBLIC2, 8080)       # another host
    refused_at_once(bus, name, GATEWAY)


def test_set_egress_both_ways_and_who_may(stack, bus, made):
    name, r = create(bus, made, egress("none"))
    r.result
    mark = h.LogMark(stack)
    refused_at_once(bus, name, PUBLIC)
    bus.call(MEMBER, "SetSandboxEgress", "sa{sv}", [name, {"mode": ["s", "allowlist"],
                                                          "allow": ["as", [PUBLIC2]]}]).result
    assert fetch(bus, name, PUBLIC2)[0] and fetch(bus, name, PUBLIC2, 8080)[0]
    refused_at_once(bus, name, PUBLIC)
    # and back, through the object
    bus.call(MEMBER, "SetEgress", "a{sv}", [{"mode": ["s", "none"]}], path=h.object_path(name, MEMBER),
             iface=h.SANDBOX).result
    refused_at_once(bus, name, PUBLIC2)
    assert inspected_egress(bus, name)["mode"] == "none"
    # The outsider may not change it (manage-others), nor find it by name in its own namespace.
    bus.call(OTHER, "SetEgress", "a{sv}", [{"mode": ["s", "default"]}], path=h.object_path(name, MEMBER),
             iface=h.SANDBOX).error("org.freedesktop.DBus.Error.AccessDenied",
                                    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
    bus.call(OTHER, "SetSandboxEgress", "sa{sv}", [name, {"mode": ["s", "default"]}]).error(
        h.ERR + "NoSuchSandbox", "org.freedesktop.DBus.Error.AccessDenied",
        "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
    refused_at_once(bus, name, PUBLIC)
    # Every change is an audit record, the refused ones too (docs/api.md, "Audit").
    log = mark.new()
    member = h.uid_of(MEMBER)
    line = f'AUDIT uid={member} verb=set-egress sandbox="{name}" outcome=ok owner={member}'
    assert log.count(line) == 2, log
    assert f'AUDIT uid={h.uid_of(OTHER)} verb=set-egress sandbox="{name}" outcome=org.freedesktop.DBus.Error.' \
        in log, log


def test_bad_input(bus, made):
    name, r = create(bus, made)
    r.result
    def set_(v):
        return bus.call(MEMBER, "SetSandboxEgress", "sa{sv}", [name, v])
    m = set_({"mode": ["s", "allowlist"], "allow": ["as", ["203.0.113.1:99999"]]}).error(
        "org.freedesktop.DBus.Error.InvalidArgs")
    assert "203.0.113.1:99999" in m
    m = set_({"mode": ["s", "everything"]}).error("org.freedesktop.DBus.Error.InvalidArgs")
    assert "everything" in m
    m = set_({"mode": ["s", "allowlist"], "allow": ["as", ["10.0.0.5:3128"]]}).error(h.ERR + "PolicyViolation")
    assert "10.0.0.5:3128" in m and "always_deny" in m
    m = set_({"mode": ["s", "allowlist"], "allow": ["as", [f"203.0.113.{i}" for i in range(65)]]}).error(
        "org.freedesktop.DBus.Error.LimitsExceeded")
    assert "max_rules" in m
    m = set_({"mode": ["s", "allowlist"], "proxy": ["s", "x"]}).error("org.freedesktop.DBus.Error.InvalidArgs")
    assert "proxy" in m
    # A refused change changed nothing.
    e = inspected_egress(bus, name)
    assert e["mode"] == "default" and e["enforced"], e
    # at create: nothing is made
    _, r = create(bus, made, egress("allowlist", "192.168.1.1"))
    assert "192.168.1.1" in r.error(h.ERR + "PolicyViolation")
    # an isolated sandbox stays none
    iso = h.unique("egress")
    made.append(iso)
    m = bus.create(MEMBER, iso, h.spec(network_isolated=True), egress("allowlist", PUBLIC)).error(
        h.ERR + "PolicyViolation")
    assert "network_isolated" in m


def nsenter_nft(world, pid, *args):
    return subprocess.run(["nsenter", "-t", str(pid), "-n", "nft"] + list(args), capture_output=True, text=True)


def container_of(world, name):
    for c in world.docker.containers():
        if c["Labels"].get("xagent.sandbox.name") == h.qualified(name, MEMBER):
            return c["Id"]
    raise AssertionError(f"no container for {name}")


def verify(bus, name):
    return bus.verify(MEMBER, name, h.spec()).result


def test_rules_lost_are_named_by_verify_and_a_restart_behind_the_back_is_rearmed(stack, world, bus, made):
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:80"))
    r.result
    cid = container_of(world, name)
    assert verify(bus, name) == ["match", []]
    # The rules gone behind the service's back: Verify says so, naming egress.
    pid = world.docker.inspect(cid)["State"]["Pid"]
    assert nsenter_nft(world, pid, "delete", "table", "inet", "xagent_egress").returncode == 0
    assert verify(bus, name) == ["mismatch", ["egress"]]
    assert bus.call(MEMBER, "RefreshSandbox", "s", [name]).result[0]["egress"]["enforced"] is False
    # A restart behind the back (Docker's own API): a new namespace, re-armed at once.
    mark = h.LogMark(stack)
    world.docker.ok("POST", f"/containers/{cid}/restart?t=0")
    def rearmed():
        newpid = world.docker.inspect(cid)["State"]["Pid"]
        out = nsenter_nft(world, newpid, "list", "table", "inet", "xagent_egress")
        return out.returncode == 0
    h.wait_until(rearmed, 20, 0.05, "the rules loaded again after the restart")
    refused_at_once(bus, name, PUBLIC2)
    assert fetch(bus, name, PUBLIC)[0]
    h.wait_until(lambda: verify(bus, name) == ["match", []], 20, 0.2, "verify to match again")
    # the service's own change is audited too
    h.wait_until(lambda: f'verb=rearm-egress sandbox="{name}" outcome=ok' in mark.new(), 10, 0.1,
                 "the re-arm's audit record")


def test_pause_resume_and_stop_start_keep_it(bus, made):
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:80"))
    r.result
    bus.call(MEMBER, "PauseSandbox", "s", [name]).result
    bus.call(MEMBER, "ResumeSandbox", "s", [name]).result
    refused_at_once(bus, name, PUBLIC2)
    assert fetch(bus, name, PUBLIC)[0]
    bus.stop(MEMBER, name, timeout=0).result
    bus.start(MEMBER, name).result
    # the very first thing the owner can do after the start is refused
    refused_at_once(bus, name, PUBLIC2)
    assert fetch(bus, name, PUBLIC)[0]
    assert inspected_egress(bus, name)["enforced"] is True


def test_the_owner_cannot_change_routes_links_or_rules(bus, made):
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:80"))
    r.result
    for argv in (["ip", "route", "replace", "default", "via", "172.17.0.1"],
                 ["ip", "link", "set", "eth0", "down"],
                 ["ip", "addr", "add", "10.99.0.77/24", "dev", "eth0"],
                 ["unshare", "-n", "true"]):
        res = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, argv, {}]).result
        assert res[0] != 0, f"{argv} succeeded as the owner"
    refused_at_once(bus, name, PUBLIC2)
    assert fetch(bus, name, PUBLIC)[0]


def test_fail_closed_when_the_rules_cannot_be_applied(stack, world, bus, made):
    """nft missing in the daemon's view (a bind mount in a mount namespace of its own):
    the create fails RuntimeConflict naming egress and leaves no container; a start of a
    sandbox made before is stopped again, the same error."""
    name, r = create(bus, made)
    r.result
    bus.stop(MEMBER, name, timeout=0).result
    stack.stop_daemon()
    broken = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
              'mount --bind /bin/false /usr/sbin/nft && exec "$@"', "sh"] + \
        world.docker.holder.nsenter(stack.default_daemon_argv())
    stack.set_daemon_command(broken)
    try:
        m = bus.start(MEMBER, name).error(h.ERR + "RuntimeConflict")
        assert "egress" in m
        assert bus.inspect(MEMBER, name).result[0]["state"] != "running"
        other, r = create(bus, made)
        assert "egress" in r.error(h.ERR + "RuntimeConflict")
        assert not [c for c in world.docker.containers()
                    if c["Labels"].get("xagent.sandbox.name") == h.qualified(other, MEMBER)]
        # isolated sandboxes need no rules: they are made as before
        iso = h.unique("egress")
        made.append(iso)
        bus.create(MEMBER, iso, h.spec(network_isolated=True)).result
    finally:
        stack.stop_daemon()
        stack.set_daemon_command(world.docker.holder.nsenter(stack.default_daemon_argv()))
    bus.start(MEMBER, name).result
    refused_at_once(bus, name, PRIVATE)


def test_the_cli(stack, bus, made):
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    name = h.unique("egress")
    made.append(name)
    def run(*args):
        return stack.run_as(MEMBER, [ctl] + list(args), timeout=120)
    r = run("create", name, "--image", h.TEST_IMAGE, "--egress", "allowlist", "--allow", f"{PUBLIC}:80/tcp")
    assert r.returncode == 0, r.stderr
    e = inspected_egress(bus, name)
    assert e["mode"] == "allowlist" and e["allow"] == [f"{PUBLIC}:80/tcp"] and e["enforced"], e
    assert fetch(bus, name, PUBLIC)[0]
    refused_at_once(bus, name, PUBLIC2)
    r = run("egress", name, "allowlist", PUBLIC2)
    assert r.returncode == 0, r.stderr
    assert fetch(bus, name, PUBLIC2)[0]
    refused_at_once(bus, name, PUBLIC)
    r = run("egress", name, "allowlist", "not/an/entry")
    assert r.returncode != 0 and "InvalidArgs" in r.stderr and "not/an/entry" in r.stderr, r.stderr
    r = run("--json", "inspect", name)
    assert json.loads(r.stdout)["egress"]["allow"] == [PUBLIC2], r.stdout


def test_a_restart_while_no_daemon_runs_is_rearmed_at_its_start_up(stack, world, bus, made):
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:80"))
    r.result
    cid = container_of(world, name)
    stack.stop_daemon()
    world.docker.ok("POST", f"/containers/{cid}/restart?t=0")
    # The next call activates the daemon; its first reconciliation loads the rules again.
    bus.inspect(MEMBER, name).result
    def rearmed():
        pid = world.docker.inspect(cid)["State"]["Pid"]
        return nsenter_nft(world, pid, "list", "table", "inet", "xagent_egress").returncode == 0
    h.wait_until(rearmed, 20, 0.05, "the rules loaded again at the daemon's start-up")
    refused_at_once(bus, name, PUBLIC2)
    assert fetch(bus, name, PUBLIC)[0]


def test_another_member_may_not_change_it(bus, made):
    import grp
    import pwd
    import stack as e2e
    second = "sbx-member2"          # as tests/e2e/test_names.py makes it
    try:
        pwd.getpwnam(second)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group",
                        "--groups", e2e.GROUP, second], check=True)
    if second not in grp.getgrnam(e2e.GROUP).gr_mem:
        subprocess.run(["gpasswd", "--add", second, e2e.GROUP], check=True, capture_output=True)
    name, r = create(bus, made, egress("allowlist", f"{PUBLIC}:80"))
    r.result
    bus.call(second, "SetEgress", "a{sv}", [{"mode": ["s", "default"]}], path=h.object_path(name, MEMBER),
             iface=h.SANDBOX).error("org.freedesktop.DBus.Error.AccessDenied",
                                    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
    # by name it is the second member's own namespace: no such sandbox there
    bus.call(second, "SetSandboxEgress", "sa{sv}", [name, {"mode": ["s", "default"]}]).error(h.ERR + "NoSuchSandbox")
    e = inspected_egress(bus, name)
    assert e["mode"] == "allowlist" and e["allow"] == [f"{PUBLIC}:80"], e
    refused_at_once(bus, name, PUBLIC2)


# ---- names ---------------------------------------------------------------------------------

def lookup(bus, name, host, server=None, user=MEMBER):
    """busybox nslookup in the sandbox, as its owner: the addresses it printed for host."""
    argv = ["nslookup", host] + ([server] if server else [])
    r = bus.call(user, "ExecSandbox", "sasa{sv}", [name, argv, {}], timeout=60).result
    out = bytes(r[1]).decode(errors="replace")
    _, _, answer = out.partition("Name:")
    return [w for w in answer.split() if w.count(".") == 3 and all(x.isdigit() for x in w.split("."))]


def resolve_and_fetch(bus, name, host, port=80):
    """One exec: the name resolved by the sandbox's own resolver, then an HTTP GET to what it
    answered (within the TTL cap)."""
    script = ('a=$(nslookup "$0" | sed -n "/^Name:/,\\$ s/^Address: *//p" | head -n1); echo "addr=$a"; '
              '[ -n "$a" ] && printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 5 "$a" "$1"; echo')
    r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script, host, str(port)], {}],
                 timeout=60).result
    out = bytes(r[1]).decode(errors="replace")
    return out


def seen_upstream(world, host):
    return [q for q in world.dns_queries() if q[1] == host]


def test_names_listed_resolve_and_are_served_unlisted_never_leave(world, bus, made):
    name, r = create(bus, made, egress("allowlist", "served.example.test:80", "*.wild.example.test"))
    r.result
    e = inspected_egress(bus, name)
    assert e["enforced"] and e["allow"] == ["served.example.test:80", "*.wild.example.test"], e
    # listed: resolved through the service (asked at the policy's resolver), then served
    out = resolve_and_fetch(bus, name, "served.example.test")
    assert f"addr={PUBLIC}" in out and out.rstrip().endswith(f"{PUBLIC}:80"), out
    assert seen_upstream(world, "served.example.test")
    # the listed port only: its other port refused
    lookup(bus, name, "served.example.test")
    refused_at_once(bus, name, PUBLIC, 8080)
    # a wildcard entry, any port
    out = resolve_and_fetch(bus, name, "a.wild.example.test", 8080)
    assert out.rstrip().endswith(f"{PUBLIC2}:8080"), out
    # unlisted: not resolved, never asked upstream, counted
    def refused():      # read afresh (an inspection may be answered from a kept description)
        return bus.call(MEMBER, "RefreshSandbox", "s", [name]).result[0]["egress"]["names_refused"]
    before = refused()
    assert lookup(bus, name, "unlisted.example.test") == []
    assert lookup(bus, name, "wild.example.test") == []     # "*." is below the name only
    assert not seen_upstream(world, "unlisted.example.test")
    assert not seen_upstream(world, "wild.example.test")
    assert refused() >= before + 2
    # DNS sent to another resolver's address never reaches it: every query is answered by
    # the service's resolver (the unlisted one refused there, the listed one asked upstream)
    assert lookup(bus, name, "unlisted.example.test", PUBLIC2) == []
    assert PUBLIC in lookup(bus, name, "served.example.test", PUBLIC2)
    assert not [q for q in world.dns_queries() if q[0] == PUBLIC2], world.dns_queries()
    assert not seen_upstream(world, "unlisted.example.test")
    # a stop and start: a new namespace, its rules and its resolver made again
    bus.stop(MEMBER, name, timeout=0).result
    bus.start(MEMBER, name).result
    assert inspected_egress(bus, name)["enforced"]
    out = resolve_and_fetch(bus, name, "served.example.test")
    assert out.rstrip().endswith(f"{PUBLIC}:80"), out
    assert lookup(bus, name, "unlisted.example.test") == []


def test_a_name_is_open_for_its_ttl_capped(world, bus, made):
    name, r = create(bus, made, egress("allowlist", "other.example.test:80"))
    r.result
    out = resolve_and_fetch(bus, name, "other.example.test")
    assert out.rstrip().endswith(f"{PUBLIC2}:80"), out
    # the server's TTL is 300 s; the policy's max_name_ttl closes it after MAX_NAME_TTL
    cid = container_of(world, name)
    pid = world.docker.inspect(cid)["State"]["Pid"]
    listing = nsenter_nft(world, pid, "list", "set", "inet", "xagent_egress", "names4").stdout
    assert PUBLIC2 in listing and "expires" in listing, listing
    t0 = time.monotonic()
    h.wait_until(lambda: not fetch(bus, name, PUBLIC2)[0], MAX_NAME_TTL + 15, 0.5, "the element to expire")
    assert time.monotonic() - t0 >= 1
    refused_at_once(bus, name, PUBLIC2)
    # and open again once resolved again
    assert resolve_and_fetch(bus, name, "other.example.test").rstrip().endswith(f"{PUBLIC2}:80")


def test_set_egress_switches_names(world, bus, made):
    name, r = create(bus, made, egress("allowlist", "served.example.test:80"))
    r.result
    assert PUBLIC in lookup(bus, name, "served.example.test")
    bus.call(MEMBER, "SetSandboxEgress", "sa{sv}", [name, {"mode": ["s", "allowlist"],
                                                          "allow": ["as", ["other.example.test:80"]]}]).result
    # the old name's addresses are closed at once (the rules reloaded), and it no longer resolves
    refused_at_once(bus, name, PUBLIC)
    assert lookup(bus, name, "served.example.test") == []
    assert resolve_and_fetch(bus, name, "other.example.test").rstrip().endswith(f"{PUBLIC2}:80")
    # back to addresses only: no resolver any more, DNS goes nowhere
    bus.call(MEMBER, "SetSandboxEgress", "sa{sv}", [name, {"mode": ["s", "allowlist"],
                                                          "allow": ["as", [f"{PUBLIC}:80"]]}]).result
    n = len(world.dns_queries())
    assert lookup(bus, name, "other.example.test") == []
    assert len(world.dns_queries()) == n
    assert fetch(bus, name, PUBLIC)[0]


def test_bad_names(bus, made):
    name, r = create(bus, made)
    r.result
    for bad in ("bad_name.example.test", "-x.example.test", "*.", "a..example.test", "x" * 64 + ".test",
                "*.*.example.test", "example.test:0"):
        m = bus.call(MEMBER, "SetSandboxEgress", "sa{sv}",
                     [name, {"mode": ["s", "allowlist"], "allow": ["as", [bad]]}]).error(
            "org.freedesktop.DBus.Error.InvalidArgs")
        assert bad in m, m
    assert inspected_egress(bus, name)["mode"] == "default"
    policy = bus.call(MEMBER, "GetPolicy").result[0]["egress"]
    assert policy["names"] is True and policy["max_name_ttl"] == MAX_NAME_TTL, policy
