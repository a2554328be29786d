# SPDX-License-Identifier: LGPL-2.1-or-later
"""Self-test of the e2e harness against the real dbus-daemon and the real polkitd: the
private bus, polkitd on it with exactly the project's actions and rules, polkit's answers
for each test user, the project's bus policy, and the host left untouched. No daemon of
ours is involved."""

import json
import os
import pwd
import re

import dbus
import pytest

import stack as e2e

MEMBER, OTHER = e2e.MEMBER, e2e.OTHER
AUTHORITY = ("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
             "org.freedesktop.PolicyKit1.Authority")

# polkit's PolkitImplicitAuthorization values as EnumerateActions reports them.
AUTH_ADMIN, AUTH_ADMIN_KEEP, YES = 2, 4, 5
EXPECTED_DEFAULTS = {
    "org.xagent.sandbox1.inspect": (YES, YES, YES),
    "org.xagent.sandbox1.create": (AUTH_ADMIN_KEEP, AUTH_ADMIN_KEEP, YES),
    "org.xagent.sandbox1.manage": (AUTH_ADMIN_KEEP, AUTH_ADMIN_KEEP, YES),
    "org.xagent.sandbox1.manage-others": (AUTH_ADMIN, AUTH_ADMIN, AUTH_ADMIN),
    "org.xagent.sandbox1.exec": (AUTH_ADMIN_KEEP, AUTH_ADMIN_KEEP, YES),
    "org.xagent.sandbox1.exec-others": (AUTH_ADMIN, AUTH_ADMIN, AUTH_ADMIN),
    "org.xagent.sandbox1.pull": (AUTH_ADMIN_KEEP, AUTH_ADMIN_KEEP, YES),
}

# (authorized, challenge) with no session (no logind here → the allow_any default).
YES_, CHALLENGE = (True, False), (False, True)
EXPECTED = {
    MEMBER: {"inspect": YES_, "create": YES_, "manage": YES_, "manage-others": CHALLENGE,
             "exec": YES_, "exec-others": CHALLENGE, "pull": YES_},
    OTHER: {"inspect": YES_, "create": CHALLENGE, "manage": CHALLENGE,
            "manage-others": CHALLENGE, "exec": CHALLENGE, "exec-others": CHALLENGE, "pull": CHALLENGE},
    # polkitd authorizes uid 0 subjects for every action.
    "root": {"inspect": YES_, "create": YES_, "manage": YES_, "manage-others": YES_,
             "exec": YES_, "exec-others": YES_, "pull": YES_},
}


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


# (a) the bus ---------------------------------------------------------------------------

def test_bus_answers_list_names_as_unprivileged_user(stack):
    out = ok(stack.busctl(OTHER, "list", "--no-legend"))
    names = {line.split()[0] for line in out.splitlines()}
    assert "org.freedesktop.DBus" in names
    assert "org.freedesktop.PolicyKit1" in names
    # busctl's own connection shows up with its user.
    assert re.search(r"^:\S+\s+\d+\s+busctl\s+" + OTHER + r"\s", out, re.M), out


def test_gdbus_reaches_the_private_bus(stack):
    out = ok(stack.gdbus(MEMBER, "call", "--system", "--dest", "org.freedesktop.DBus",
                         "--object-path", "/org/freedesktop/DBus",
                         "--method", "org.freedesktop.DBus.ListNames"))
    assert "'org.freedesktop.PolicyKit1'" in out


def test_clients_run_as_the_test_users(stack):
    for user in (MEMBER, OTHER):
        me = stack.client(user, "whoami")
        assert me["uid"] == pwd.getpwnam(user).pw_uid
        assert me["unique_name"].startswith(":")


def test_daemon_is_activatable_from_the_generated_service_file(stack):
    out = ok(stack.busctl(MEMBER, "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "ListActivatableNames", "--json=short"))
    assert e2e.BUS_NAME in json.loads(out)["data"][0]
    with open(os.path.join(stack.tmp, "services", "org.xagent.Sandbox1.service")) as f:
        service = f.read()
    assert stack.daemon_binary + " --state-dir " in service


# (b) polkitd on the bus, with exactly our actions -----------------------------------------

def test_polkitd_owns_its_name_as_user_polkitd(stack):
    out = ok(stack.busctl(OTHER, "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "GetConnectionUnixUser", "s",
                          "org.freedesktop.PolicyKit1", "--json=short"))
    assert json.loads(out)["data"][0] == pwd.getpwnam("polkitd").pw_uid
    assert stack.name_owner_pid("org.freedesktop.PolicyKit1") == stack.polkit_proc.pid


def test_polkitd_lists_exactly_our_actions_with_the_designed_defaults(stack):
    r = stack.client(OTHER, "call", AUTHORITY[0], AUTHORITY[1],
                     AUTHORITY[2] + ".EnumerateActions", "s", json.dumps([""]))
    assert r["ok"], r
    actions = {a[0]: a for a in r["result"][0]}
    # Only ours: polkit itself needs no .policy of its own (pkexec's is not mounted).
    assert set(actions) == set(e2e.ACTIONS)
    for action_id, (any_, inactive, active) in EXPECTED_DEFAULTS.items():
        a = actions[action_id]
        assert tuple(a[6:9]) == (any_, inactive, active), action_id
        assert a[1] and a[2], f"{action_id}: description and message must be set"
        assert a[3] == "xagent"


def test_gdbus_sees_our_actions(stack):
    out = ok(stack.gdbus(MEMBER, "call", "--system", "--dest", AUTHORITY[0],
                         "--object-path", AUTHORITY[1],
                         "--method", AUTHORITY[2] + ".EnumerateActions", "''"))
    for action_id in e2e.ACTIONS:
        assert f"('{action_id}'," in out


# (c) polkit's answers, each subject checking itself ------------------------------------------

@pytest.mark.parametrize("user", [MEMBER, OTHER, "root"])
@pytest.mark.parametrize("verb", ["inspect", "create", "manage", "manage-others", "exec", "exec-others"])
def test_check_authorization_of_self(stack, user, verb):
    r = stack.client(user, "check-self", "org.xagent.sandbox1." + verb)
    assert "error" not in r, r
    assert r["uid"] == pwd.getpwnam(user).pw_uid
    assert (r["authorized"], r["challenge"]) == EXPECTED[user][verb], r


def test_only_root_may_pass_details(stack):
    """polkit refuses details from an unprivileged caller (not an action owner); the
    daemon runs as root, so its details (sandbox, verb, owner, image) are accepted."""
    r = stack.client(MEMBER, "check-self", "org.xagent.sandbox1.inspect",
                     "--detail", "sandbox=demo")
    assert r.get("error") == "org.freedesktop.PolicyKit1.Error.NotAuthorized", r
    r = stack.client("root", "check-self", "org.xagent.sandbox1.inspect",
                     "--detail", "sandbox=demo")
    assert (r["authorized"], r["challenge"]) == (True, False), r


def test_challenge_for_auth_admin_keep_says_it_would_be_retained(stack):
    r = stack.client(OTHER, "check-self", "org.xagent.sandbox1.create")
    assert r["details"].get("polkit.retains_authorization_after_challenge") == "1"
    r = stack.client(OTHER, "check-self", "org.xagent.sandbox1.manage-others")
    assert "polkit.retains_authorization_after_challenge" not in r["details"]


def test_root_checks_another_connection_like_the_daemon_will(stack):
    """The daemon (root) asks about a caller's unique name: polkit resolves that name's
    uid on the bus, so the rules see the caller, not root."""
    expected = {MEMBER: EXPECTED[MEMBER]["create"], OTHER: EXPECTED[OTHER]["create"]}
    conn = dbus.bus.BusConnection(stack.address)
    try:
        authority = dbus.Interface(conn.get_object(AUTHORITY[0], AUTHORITY[1]), AUTHORITY[2])
        for user, want in expected.items():
            holder = stack.spawn_as(user, stack.client_argv("hold"))
            try:
                name = json.loads(holder.stdout.readline())["unique_name"]
                subject = ("system-bus-name", {"name": dbus.String(name, variant_level=1)})
                authorized, challenge, _ = authority.CheckAuthorization(
                    subject, "org.xagent.sandbox1.create",
                    dbus.Dictionary({"sandbox": "demo"}, signature="ss"),
                    dbus.UInt32(0), "")
                assert (bool(authorized), bool(challenge)) == want, user
            finally:
                holder.communicate(timeout=10)
    finally:
        conn.close()


def test_a_user_cannot_check_someone_else(stack):
    holder = stack.spawn_as(MEMBER, stack.client_argv("hold"))
    try:
        name = json.loads(holder.stdout.readline())["unique_name"]
        r = stack.client(OTHER, "call", *AUTHORITY[:2],
                         AUTHORITY[2] + ".CheckAuthorization", "(sa{sv})sa{ss}us",
                         json.dumps([["system-bus-name", {"name": ["s", name]}],
                                     "org.xagent.sandbox1.inspect", {}, 0, ""]))
    finally:
        holder.communicate(timeout=10)
    assert not r["ok"] and r["error"] == "org.freedesktop.PolicyKit1.Error.NotAuthorized", r


# the project's bus policy is the one in force ---------------------------------------------

@pytest.mark.parametrize("user", [MEMBER, OTHER])
def test_only_root_may_own_the_service_name(stack, user):
    r = stack.client(user, "request-name", e2e.BUS_NAME)
    assert not r["ok"] and r["error"] == "org.freedesktop.DBus.Error.AccessDenied", r


def test_root_may_own_the_service_name(stack):
    stack.stop_daemon()         # an earlier test's daemon would own the name
    r = stack.client("root", "request-name", e2e.BUS_NAME)
    assert r == {"ok": True, "result": [1]}    # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER


# activation and the send policy, with a probe in place of the daemon ------------------------

ALLOWED_INTERFACES = ("org.xagent.Sandbox1.Manager", "org.xagent.Sandbox1.Sandbox",
                      "org.xagent.Sandbox1.Exec", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable",
                      "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.ObjectManager")

PROBE = """#!/bin/sh
{ id -u; echo "$DBUS_STARTER_BUS_TYPE"; echo "$DBUS_STARTER_ADDRESS"; echo "$*"; } > "$0.out"
exit 3
"""


@pytest.fixture
def probe(stack):
    """Replaces the activation Exec= by a script that records how it was started and
    fails at once (exit 3), so that every activation attempt ends quickly."""
    # A running daemon of ours would answer instead of the probe being activated.
    stack.stop_daemon()
    path = os.path.join(stack.tmp, "probe.sh")
    with open(path, "w") as f:
        f.write(PROBE)
    os.chmod(path, 0o755)
    stack.set_daemon_command([path, "--state-dir", "/a dir/with space"])
    try:
        yield path + ".out"
    finally:
        stack.set_daemon_command(stack.default_daemon_argv())
        if os.path.exists(path + ".out"):
            os.unlink(path + ".out")


@pytest.mark.parametrize("interface", ALLOWED_INTERFACES)
def test_allowed_interfaces_reach_activation_as_root(stack, probe, interface):
    r = stack.client(OTHER, "call", e2e.BUS_NAME, "/org/xagent/Sandbox1",
                     interface + ".Anything", "", "[]")
    assert not r["ok"] and r["error"] == "org.freedesktop.DBus.Error.Spawn.ChildExited", r
    with open(probe) as f:
        uid, bus_type, address, args = f.read().splitlines()
    assert (uid, bus_type, args) == ("0", "system", "--state-dir /a dir/with space")
    assert address.startswith(stack.address)


def test_other_interfaces_are_refused_by_the_bus_without_activation(stack, probe):
    r = stack.client(OTHER, "call", e2e.BUS_NAME, "/org/xagent/Sandbox1",
                     "org.example.Elsewhere.Anything", "", "[]")
    assert not r["ok"] and r["error"] == "org.freedesktop.DBus.Error.AccessDenied", r
    assert not os.path.exists(probe)


# (d) the host is untouched -----------------------------------------------------------------

def test_host_polkit_files_untouched_and_isolated(stack):
    assert "org.xagent.sandbox1.policy" not in os.listdir(e2e.POLKIT_ACTIONS_DIR)
    for d in e2e.POLKIT_RULES_DIRS:
        assert "50-xagent-sandbox.rules" not in os.listdir(d)
    assert stack.host_untouched()

    def mountpoints(pid):
        with open(f"/proc/{pid}/mountinfo") as f:
            return {line.split()[4] for line in f}
    polkitd_mounts = mountpoints(stack.polkit_proc.pid)
    host_mounts = mountpoints("self")
    for d in (e2e.POLKIT_ACTIONS_DIR,) + e2e.POLKIT_RULES_DIRS:
        assert d in polkitd_mounts, f"{d} not bind-mounted for polkitd"
        assert d not in host_mounts, f"{d} leaked into the host's mount namespace"
