# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every class of bad input is answered with a typed error naming what was wrong, and
the daemon keeps running: the same process answers before and after."""

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT


@pytest.fixture
def same_daemon(sandboxd):
    """The pid before the test; asserts afterwards that the same process still serves."""
    pid = sandboxd.ensure_running()
    yield pid
    sandboxd.call(OTHER, "ListSandboxes").result
    assert sandboxd.pid() == pid, "the daemon was replaced: it died on bad input"


def bad_create(sandboxd, cleanup, sp, options=None, user=MEMBER, error=h.INVALID_ARGS):
    name = cleanup.sandbox(h.unique("bad"))
    msg = sandboxd.create(user, name, sp, options).error(error)
    assert h.docker_containers_labelled(name) == []
    return msg


# ---- the spec's a{sv} ---------------------------------------------------------------------

def test_refused_create_is_audited(stack, sandboxd, cleanup, same_daemon):
    """A create refused for its arguments still writes its audit line, naming the verb."""
    mark = h.LogMark(stack)
    name = h.unique("audit")
    bad_create(sandboxd, cleanup, h.spec(bogus=["s", "x"]))
    sandboxd.create(MEMBER, name, h.spec(memory=64)).error(h.INVALID_ARGS)
    line = f'AUDIT uid={h.uid_of(MEMBER)} verb=create sandbox="{name}" ' \
           'outcome=org.freedesktop.DBus.Error.InvalidArgs'
    assert line in mark.new(), mark.new()


def test_unknown_key(sandboxd, cleanup, same_daemon):
    msg = bad_create(sandboxd, cleanup, h.spec(bogus=["s", "x"]))
    assert "bogus" in msg and "unknown" in msg
    # xagent's own field names are not the bus keys either.
    assert "snapshot_id" in bad_create(sandboxd, cleanup,
                                       h.spec(image=None, snapshot_id=["s", "x"]))


# Integers may come as any D-Bus integer type (tests/test-bus-spec.c); anything else
# is a wrong type.
@pytest.mark.parametrize("key,value", [
    ("image", ["u", 1]),
    ("cpus", ["s", "2"]),
    ("cpus", ["d", 2.0]),
    ("memory", ["b", True]),
    ("env", ["as", ["A=B"]]),
    ("volumes", ["a(ss)", [["/a", "/b"]]]),
    ("ports", ["a(sq)", [["8080", 80]]]),
    ("ports", ["a(qqq)", [[8080, 80, 1]]]),
    ("network_isolated", ["s", "true"]),
    ("working_dir", ["o", "/home"]),
])
def test_wrong_variant_type(sandboxd, cleanup, same_daemon, key, value):
    sp = h.spec()
    sp[key] = value
    msg = bad_create(sandboxd, cleanup, sp)
    assert msg.startswith(key + ": expected ") and f"got '{value[0]}'" in msg, msg
    # Verify reads the same a{sv}.
    sandboxd.verify(MEMBER, h.unique("x"), sp).error(h.INVALID_ARGS)


def test_cpus_zero_is_the_default(sandboxd, cleanup, same_daemon):
    name = cleanup.sandbox(h.unique("cpus0"))
    sandboxd.create(MEMBER, name, h.spec(cpus=0, memory=0)).result
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["nano_cpus"] == 10**9 and ins["memory_bytes"] == 512 * 1024 * 1024
    assert sandboxd.verify(MEMBER, name, h.spec()).result == ["match", []]
    sandboxd.delete(MEMBER, name).result


@pytest.mark.parametrize("sp,field", [
    (h.spec(memory=64), "memory"),
    (h.spec(memory=127), "memory"),
    (h.spec(cpus=2**32 - 1), "cpus"),
    (h.spec(working_dir="relative"), "working_dir"),
    (h.spec(volumes=[("/home/x", "/w", "rx")]), "mode"),
    (h.spec(volumes=[("relative", "/w", "ro")]), "volumes"),
    (h.spec(ports=[(0, 0)]), "port"),
    (h.spec(image=""), "image"),
    (h.spec(image="xagent-sandbox-test:latest", snapshot="snap"), "image"),
    (h.spec(image=None, snapshot=""), "snapshot"),
    (h.spec(image=None, snapshot="s" * 101), "snapshot"),
    (h.spec(image=None, snapshot="a\x01"), "snapshot"),
    (h.spec(env={"": "x"}), "env"),
    (h.spec(env={"A=B": "x"}), "env"),
])
def test_out_of_bounds_values(sandboxd, cleanup, same_daemon, sp, field):
    msg = bad_create(sandboxd, cleanup, sp, error=(h.INVALID_ARGS))
    assert field in msg, msg


def test_duplicate_keys_through_busctl(sandboxd, same_daemon):
    """busctl can write an a{sv} with a key twice; python dicts cannot."""
    name = h.unique("twice")
    code, _, err = sandboxd.busctl(MEMBER, "CreateSandbox", "sa{sv}a{sv}", name, 2,
                                   "cpus", "u", 1, "cpus", "u", 2, 0)
    assert code != 0 and "cpus" in err and "twice" in err, err
    code, _, err = sandboxd.busctl(MEMBER, "CreateSandbox", "sa{sv}a{sv}", name, 2,
                                   "env", "a{ss}", 2, "A", "1", "A", "2",
                                   "image", "s", h.TEST_IMAGE, 0)
    assert code != 0 and "env" in err, err
    assert h.docker_containers_labelled(name) == []


# ---- names ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,why", [
    ("", "empty"),
    ("a\x01b", "control"),
    ("tab\there", "control"),
    ("nl\n", "control"),
    ("del\x7f", "control"),
    ("x" * 201, "200"),
    ("é" * 101, "200"),             # 202 bytes in UTF-8
])
def test_bad_names(sandboxd, cleanup, same_daemon, name, why):
    for r in (sandboxd.create(MEMBER, name, h.spec()),
              sandboxd.inspect(MEMBER, name),
              sandboxd.get(OTHER, name),
              sandboxd.delete(MEMBER, name),
              sandboxd.stop(MEMBER, name)):
        msg = r.error(h.INVALID_ARGS)
        assert "name" in msg and why in msg, msg


def test_name_of_200_bytes_is_fine(sandboxd, cleanup, same_daemon):
    name = cleanup.sandbox((h.unique("long") + "-" + "x" * 200)[:200])
    path, _ = sandboxd.create(MEMBER, name, h.spec()).result
    assert path == h.object_path(name, MEMBER)
    assert sandboxd.get(MEMBER, name).result == [path]
    sandboxd.delete(MEMBER, name).result


def test_bad_snapshot_ids(sandboxd, cleanup, same_daemon):
    name = cleanup.sandbox(h.unique("snapname"))
    sandboxd.create(MEMBER, name, h.spec()).result
    for sid, why in (("", "empty"), ("a\x02", "control"), ("s" * 101, "100")):
        msg = sandboxd.snapshot(MEMBER, name, sid).error(h.INVALID_ARGS)
        assert "snapshot_id" in msg and why in msg, msg
        sandboxd.delete_snapshot(MEMBER, sid).error(h.INVALID_ARGS)
    sandboxd.delete(MEMBER, name).result


def test_names_that_are_unusual_but_valid(sandboxd, cleanup, same_daemon):
    """xagent's own style (user::7), spaces, non-ASCII, and path-like text: all valid,
    each its own object path."""
    for tag in ("user::7", "My Box!", "ünï ç☃de", "../../etc"):
        name = cleanup.sandbox(h.unique("odd") + tag)
        path, _ = sandboxd.create(MEMBER, name, h.spec()).result
        assert path == h.object_path(name, MEMBER)
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["labels"]["xagent.sandbox.name"] == h.qualified(name, MEMBER)
        assert h.docker_inspect(ins["container_id"])["Name"] == "/" + h.container_name(name, MEMBER)
        sandboxd.delete(MEMBER, name).result


# ---- huge input -------------------------------------------------------------------------

def test_ten_thousand_env_entries(sandboxd, cleanup, same_daemon):
    env = {f"V{i}": "x" for i in range(10_000)}
    msg = bad_create(sandboxd, cleanup, h.spec(env=env))
    assert "env" in msg and "4096" in msg, msg      # the parser's bound, before admission's 256
    msg = bad_create(sandboxd, cleanup, h.spec(env={f"V{i}": "x" for i in range(300)}))
    assert "env" in msg and "256" in msg, msg


def test_one_mib_strings(sandboxd, cleanup, same_daemon):
    big = "a" * (1 << 20)
    assert "image" in bad_create(sandboxd, cleanup, h.spec(image=big))
    assert "env" in bad_create(sandboxd, cleanup, h.spec(env={"BIG": big}))
    assert "working_dir" in bad_create(sandboxd, cleanup, h.spec(working_dir="/" + big))
    assert "volumes" in bad_create(sandboxd, cleanup, h.spec(volumes=[("/" + big, "/w", "ro")]))
    msg = sandboxd.create(MEMBER, big, h.spec()).error(h.INVALID_ARGS)
    assert "name" in msg
    # Verify takes every spec xagent accepts: a 1 MiB image reference is one.
    sandboxd.verify(MEMBER, h.unique("v"), h.spec(image=big)).error(h.NO_SUCH_SANDBOX)


def test_many_volumes_and_ports(sandboxd, cleanup, same_daemon):
    vols = [(f"/home/v{i}", f"/g{i}", "ro") for i in range(1000)]
    assert "volumes" in bad_create(sandboxd, cleanup, h.spec(volumes=vols))
    ports = [(0, p) for p in range(1, 1001)]
    assert "ports" in bad_create(sandboxd, cleanup, h.spec(ports=ports))


def test_sixteen_mib_string(sandboxd, cleanup, same_daemon):
    """Far beyond every field's bound, well within the bus's message limit: the daemon
    reads it and refuses it by name."""
    msg = bad_create(sandboxd, cleanup, h.spec(env={"BIG": "b" * (16 << 20)}))
    assert "env" in msg, msg


# ---- options and signatures ----------------------------------------------------------------

def test_unknown_create_option(sandboxd, cleanup, same_daemon):
    msg = bad_create(sandboxd, cleanup, h.spec(), options={"force": ["b", True]})
    assert "force" in msg and "unknown option" in msg


@pytest.mark.parametrize("options,words", [
    ({"kill": ["b", True]}, ("kill", "unknown option")),
    ({"force": ["s", "yes"]}, ("force",)),      # a lease-revoking stop takes a boolean
    ({"timeout": ["s", "5"]}, ("timeout", "expected an integer")),
    ({"timeout": ["i", -1]}, ("timeout", "outside 0")),
    ({"timeout": ["u", 10**6]}, ("timeout", "outside 0")),
])
def test_bad_stop_options(sandboxd, cleanup, same_daemon, options, words):
    name = cleanup.sandbox(h.unique("stopopt"))
    sandboxd.create(MEMBER, name, h.spec()).result
    msg = sandboxd.stop(MEMBER, name, options=options).error(h.INVALID_ARGS)
    for w in words:
        assert w in msg, msg
    # Through the object as well.
    sandboxd.call(MEMBER, "Stop", "a{sv}", [options], path=h.object_path(name, MEMBER),
                  iface=h.SANDBOX).error(h.INVALID_ARGS)
    assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "running"
    sandboxd.delete(MEMBER, name).result


@pytest.mark.parametrize("method,sig,args", [
    ("CreateSandbox", "s", ["x"]),
    ("CreateSandbox", "sa{sv}", ["x", {}]),
    ("CreateSandbox", "sa{ss}a{sv}", ["x", {"image": "i"}, {}]),
    ("InspectSandbox", "u", [1]),
    ("InspectSandbox", "ss", ["a", "b"]),
    ("StopSandbox", "s", ["x"]),
    ("ListSandboxes", "s", ["x"]),
])
def test_wrong_signature(sandboxd, same_daemon, method, sig, args):
    sandboxd.call(MEMBER, method, sig, args).error(h.INVALID_ARGS)


def test_unknown_method_and_object(sandboxd, same_daemon):
    sandboxd.call(MEMBER, "Explode").error("org.freedesktop.DBus.Error.UnknownMethod")
    r = sandboxd.call(MEMBER, "Inspect", path=h.object_path(h.unique("nobody")),
                      iface=h.SANDBOX)
    r.error("org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod")
    sandboxd.call(ROOT, "Set", "ssv", [h.MANAGER, "Version", ["s", "9"]],
                  iface=h.PROPERTIES).error("org.freedesktop.DBus.Error.PropertyReadOnly",
                                            h.INVALID_ARGS)
