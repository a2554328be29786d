# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bus policy (dbus/org.xagent.Sandbox1.conf) and the daemon's vtables agree: every
method of both interfaces is open to everyone, and nothing else is; and, live, every
method is answered by the daemon itself for an unprivileged user outside the
xagent-sandbox group (sbx-other), while an interface the policy does not name is refused
by the bus."""

import json
import os
import xml.etree.ElementTree as ET

import dbus
import pytest

import rootbus
import stack as e2e

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
CONF = os.path.join(SOURCE_ROOT, "dbus", "org.xagent.Sandbox1.conf")
NAME = rootbus.BUS_NAME
OTHER = e2e.OTHER
EXEC_IFACE = "org.xagent.Sandbox1.Exec"

# What the daemon's own refusals look like is its business; the bus's refusal is
# AccessDenied with this text (dbus-daemon, bus/connection.c).
BUS_REFUSAL = "Rejected send message"


def policies():
    root = ET.parse(CONF).getroot()
    assert root.tag == "busconfig"
    return root.findall("policy")


def interface_methods(iface):
    tree = ET.parse(os.path.join(SOURCE_ROOT, "dbus", iface + ".xml"))
    return {m.get("name"): [(a.get("type"), a.get("direction", "in")) for a in m.findall("arg")]
            for m in tree.getroot().find("interface").findall("method")}


@pytest.fixture(scope="module", autouse=True)
def daemon_stopped_afterwards(stack):
    yield
    rootbus.stop_daemon(stack)


@pytest.fixture(scope="module")
def served_interfaces(stack):
    """Every interface the daemon serves, on the manager and on a sandbox object."""
    def names(conn, path):
        return {i.get("name") for i in ET.fromstring(rootbus.introspect(conn, path)).findall("interface")}

    conn = rootbus.connect(stack)
    try:
        found = names(conn, rootbus.MANAGER_PATH)
        with rootbus.root_sandbox(stack, "policy-iface") as (name, path):
            found |= names(conn, path)
            # An exec object, while its process runs.
            manager = dbus.Interface(conn.get_object(NAME, rootbus.MANAGER_PATH, introspect=False),
                                     rootbus.MANAGER_IFACE)
            with open("/dev/null", "r+b") as null:
                fd = dbus.types.UnixFd(null.fileno())
                exec_path = manager.StartExec(name, ["sleep", "60"], dbus.Dictionary({}, signature="sv"),
                                              fd, fd, fd, timeout=60)
            found |= names(conn, exec_path)
            dbus.Interface(conn.get_object(NAME, exec_path, introspect=False),
                           "org.xagent.Sandbox1.Exec").Kill("KILL")
    finally:
        conn.close()
    return found


# The file --------------------------------------------------------------------------

def test_only_root_owns_the_name():
    for p in policies():
        for rule in p:
            if rule.get("own") is not None or rule.get("own_prefix") is not None:
                assert p.attrib == {"user": "root"} and rule.tag == "allow" \
                    and rule.attrib == {"own": NAME}, ET.tostring(rule)


def test_default_context_opens_exactly_the_served_interfaces(served_interfaces):
    default = [p for p in policies() if p.attrib == {"context": "default"}]
    assert len(default) == 1
    opened = set()
    for rule in default[0]:
        assert rule.tag == "allow", "the default context only opens (the stock policy denies)"
        if "receive_sender" in rule.attrib:
            assert rule.attrib == {"receive_sender": NAME}
            continue
        # Only sends to our name, one whole interface at a time: no member, type or
        # path restrictions that could leave a method out, no rule without a
        # destination that would open other services.
        assert set(rule.attrib) == {"send_destination", "send_interface"}, rule.attrib
        assert rule.get("send_destination") == NAME
        opened.add(rule.get("send_interface"))
    assert opened == served_interfaces
    assert {rootbus.MANAGER_IFACE, rootbus.SANDBOX_IFACE} <= opened


def test_no_other_policy_opens_anything():
    for p in policies():
        if p.attrib in ({"context": "default"}, {"user": "root"}):
            continue
        pytest.fail(f"unexpected policy {p.attrib}")
    root = [p for p in policies() if p.attrib == {"user": "root"}][0]
    assert {tuple(sorted(r.attrib.items())) for r in root} == {
        (("own", NAME),), (("send_destination", NAME),), (("receive_sender", NAME),)}


# Live --------------------------------------------------------------------------------

def call(stack, path, iface, method, sig, args):
    out = stack.client(OTHER, "call", NAME, path, f"{iface}.{method}", sig, json.dumps(args),
                       "--timeout", "120")
    return out


def answered_by_daemon(out):
    return out["ok"] or not (out["error"] == "org.freedesktop.DBus.Error.AccessDenied"
                             and out["message"].startswith(BUS_REFUSAL))


SPEC = {"image": ["s", rootbus.TEST_IMAGE]}
# Arguments per signature, for the sandbox `name` (root's) where a name is asked for.
MANAGER_ARGS = {
    "CreateSandbox": lambda n: ("sa{sv}a{sv}", [n + "-new", SPEC, {}]),
    "GetSandbox": lambda n: ("s", [n]),
    "InspectSandbox": lambda n: ("s", [n]),
    "RefreshSandbox": lambda n: ("s", [n]),
    "VerifySandbox": lambda n: ("sa{sv}", [n, SPEC]),
    "StartSandbox": lambda n: ("s", [n]),
    "StopSandbox": lambda n: ("sa{sv}", [n, {}]),
    "DeleteSandbox": lambda n: ("s", [n]),
    "PauseSandbox": lambda n: ("s", [n]),
    "ResumeSandbox": lambda n: ("s", [n]),
    "AcquireSandbox": lambda n: ("sa{sv}", [n, {}]),
    "SnapshotSandbox": lambda n: ("ss", [n, "policy-snap"]),
    "DeleteSnapshot": lambda n: ("s", ["no-such-snapshot"]),
    "ListSandboxes": lambda n: ("", []),
    "FindSandboxes": lambda n: ("a{sv}", [{}]),
    "ListSnapshots": lambda n: ("", []),
    "ExecSandbox": lambda n: ("sasa{sv}", [n, ["true"], {}]),
    "StartExec": lambda n: ("sasa{sv}hhh", [n, ["true"], {}, "</dev/null", ">/dev/null", ">/dev/null"]),
    "CopyToSandbox": lambda n: ("ssha{sv}", [n, "/tmp", "</dev/null", {}]),
    "CopyFromSandbox": lambda n: ("ssha{sv}", [n, "/tmp", ">/dev/null", {}]),
    "GetSandboxUsage": lambda n: ("s", [n]),
    "ListExecs": lambda n: ("s", [n]),
    "GetPolicy": lambda n: ("", []),
    "EnsureSandbox": lambda n: ("sa{sv}a{sv}", [n + "-ensured", SPEC, {}]),
    "ClaimSandbox": lambda n: ("a{sv}a{sv}", [SPEC, {}]),
    "ReadFile": lambda n: ("ssa{sv}", [n, "/etc/hostname", {}]),
    "WriteFile": lambda n: ("ssaya{sv}", [n, "/tmp/policy-probe", [120], {}]),
    "ListFiles": lambda n: ("ssa{sv}", [n, "/tmp", {}]),
    "RemoveFile": lambda n: ("ssa{sv}", [n, "/tmp/policy-probe", {}]),
    "SetSandboxLifetimes": lambda n: ("sa{sv}", [n, {"idle_timeout": ["u", 60]}]),
    "SetSandboxEgress": lambda n: ("sa{sv}", [n, {"mode": ["s", "none"]}]),
    "PullImage": lambda n: ("sa{sv}", [rootbus.TEST_IMAGE, {}]),
}
SANDBOX_ARGS = {
    "Start": ("", []),
    "Stop": ("a{sv}", [{}]),
    "Delete": ("", []),
    "Pause": ("", []),
    "Resume": ("", []),
    "Acquire": ("a{sv}", [{}]),
    "SetLifetimes": ("a{sv}", [{"idle_timeout": ["u", 60]}]),
    "SetEgress": ("a{sv}", [{"mode": ["s", "none"]}]),
    "Snapshot": ("s", ["policy-snap"]),
    "Verify": ("a{sv}", [SPEC]),
    "Inspect": ("", []),
    "Refresh": ("", []),
    "Exec": ("asa{sv}", [["true"], {}]),
    "StartExec": ("asa{sv}hhh", [["true"], {}, "</dev/null", ">/dev/null", ">/dev/null"]),
    "CopyTo": ("sha{sv}", ["/tmp", "</dev/null", {}]),
    "CopyFrom": ("sha{sv}", ["/tmp", ">/dev/null", {}]),
    "GetUsage": ("", []),
    "ListExecs": ("", []),
    "ReadFile": ("sa{sv}", ["/etc/hostname", {}]),
    "WriteFile": ("saya{sv}", ["/tmp/policy-probe", [120], {}]),
    "ListFiles": ("sa{sv}", ["/tmp", {}]),
    "RemoveFile": ("sa{sv}", ["/tmp/policy-probe", {}]),
}
EXEC_ARGS = {
    "Kill": ("s", ["KILL"]),
    "Resize": ("qq", [24, 80]),
    "ReadOutput": ("t", [0]),
    "Attach": ("hhh", ["</dev/null", ">/dev/null", ">/dev/null"]),
}
STANDARD_CALLS = [
    ("org.freedesktop.DBus.Peer", "Ping", "", []),
    ("org.freedesktop.DBus.Introspectable", "Introspect", "", []),
    ("org.freedesktop.DBus.Properties", "GetAll", "s", [""]),
]


def signature_of(method_args):
    return "".join(t for t, d in method_args if d == "in")


def test_argument_tables_cover_every_method():
    manager = interface_methods(rootbus.MANAGER_IFACE)
    sandbox = interface_methods(rootbus.SANDBOX_IFACE)
    exec_ = interface_methods(EXEC_IFACE)
    assert set(MANAGER_ARGS) == set(manager)
    assert set(SANDBOX_ARGS) == set(sandbox)
    assert set(EXEC_ARGS) == set(exec_)
    for m, (sig, _) in EXEC_ARGS.items():
        assert sig == signature_of(exec_[m]), m
    for m, f in MANAGER_ARGS.items():
        assert f("x")[0] == signature_of(manager[m]), m
    for m, (sig, _) in SANDBOX_ARGS.items():
        assert sig == signature_of(sandbox[m]), m


@pytest.fixture(scope="module")
def live_calls(stack):
    """Every method, called as sbx-other on root's sandbox (so nothing is changed:
    another user's sandbox needs manage-others, which polkit only grants after a
    prompt)."""
    results = {}
    with rootbus.root_sandbox(stack, "policy-live") as (name, path):
        for m, f in MANAGER_ARGS.items():
            sig, args = f(name)
            results[(rootbus.MANAGER_IFACE, m)] = call(stack, rootbus.MANAGER_PATH,
                                                       rootbus.MANAGER_IFACE, m, sig, args)
        for m, (sig, args) in SANDBOX_ARGS.items():
            results[(rootbus.SANDBOX_IFACE, m)] = call(stack, path, rootbus.SANDBOX_IFACE,
                                                       m, sig, args)
        # Root's detached process: every Exec method is the daemon's to refuse.
        conn = rootbus.connect(stack)
        try:
            manager = dbus.Interface(conn.get_object(NAME, rootbus.MANAGER_PATH, introspect=False),
                                     rootbus.MANAGER_IFACE)
            with open("/dev/null", "r+b") as null:
                fd = dbus.types.UnixFd(null.fileno())
                exec_path = str(manager.StartExec(name, ["sleep", "600"], dbus.Dictionary(
                    {"detach": dbus.Boolean(True)}, signature="sv"), fd, fd, fd, timeout=60))
            for m, (sig, args) in EXEC_ARGS.items():
                results[(EXEC_IFACE, m)] = call(stack, exec_path, EXEC_IFACE, m, sig, args)
            dbus.Interface(conn.get_object(NAME, exec_path, introspect=False), EXEC_IFACE).Kill("KILL")
        finally:
            conn.close()
        for iface, m, sig, args in STANDARD_CALLS:
            for p in (rootbus.MANAGER_PATH, path):
                results[(iface, m, p)] = call(stack, p, iface, m, sig, args)
        results[("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")] = call(
            stack, rootbus.MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
            "GetManagedObjects", "", [])
        # Still there: nothing sbx-other sent changed it.
        conn = rootbus.connect(stack)
        try:
            manager = conn.get_object(NAME, rootbus.MANAGER_PATH, introspect=False)
            results["root-list"] = [str(s[0]) for s in manager.ListSandboxes(
                dbus_interface=rootbus.MANAGER_IFACE, timeout=120)]
        finally:
            conn.close()
        results["name"] = name
    return results


def test_every_method_is_answered_by_the_daemon(live_calls):
    for key, out in live_calls.items():
        if isinstance(key, tuple):
            assert answered_by_daemon(out), f"{key}: refused by the bus: {out}"


def test_other_users_sandbox_is_untouched(live_calls):
    assert live_calls["name"] in live_calls["root-list"]
    # The state changes were refused by polkit, not by the bus, and not carried out.
    for m in ("CreateSandbox", "EnsureSandbox", "ClaimSandbox", "StartSandbox", "StopSandbox", "DeleteSandbox",
              "PauseSandbox", "ResumeSandbox", "AcquireSandbox", "SetSandboxLifetimes", "SetSandboxEgress",
              "SnapshotSandbox", "ExecSandbox", "StartExec", "CopyToSandbox", "CopyFromSandbox",
              "GetSandboxUsage", "ReadFile", "WriteFile", "ListFiles", "RemoveFile"):
        out = live_calls[(rootbus.MANAGER_IFACE, m)]
        assert out.get("error") == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", (m, out)
    # Through its object, root's sandbox is out of reach for every method.
    for m in SANDBOX_ARGS:
        out = live_calls[(rootbus.SANDBOX_IFACE, m)]
        assert out.get("error") in ("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired",
                                    "org.freedesktop.DBus.Error.AccessDenied"), (m, out)
    # Root's exec object likewise: refused by the daemon, for being another user's.
    for m in EXEC_ARGS:
        out = live_calls[(EXEC_IFACE, m)]
        assert out.get("error") == "org.freedesktop.DBus.Error.AccessDenied" and \
            not out["message"].startswith(BUS_REFUSAL), (m, out)
    # Lists answer, showing sbx-other none of root's.
    assert live_calls[(rootbus.MANAGER_IFACE, "ListSandboxes")] == {"ok": True, "result": [[]]}
    assert live_calls[(rootbus.MANAGER_IFACE, "ListExecs")] == {"ok": True, "result": [[]]}
    assert live_calls[(rootbus.MANAGER_IFACE, "FindSandboxes")] == {"ok": True, "result": [[]]}


def test_an_interface_outside_the_policy_is_refused_by_the_bus(stack):
    out = call(stack, rootbus.MANAGER_PATH, "org.xagent.Sandbox1.NotAnInterface", "ListSandboxes", "", [])
    assert out["error"] == "org.freedesktop.DBus.Error.AccessDenied"
    assert out["message"].startswith(BUS_REFUSAL), out
    assert not answered_by_daemon(out)
