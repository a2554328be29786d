# SPDX-License-Identifier: LGPL-2.1-or-later
"""The installed interface descriptions (dbus/org.xagent.Sandbox1.*.xml) are exactly what
the running daemon introspects: the same methods with the same argument names, types and
directions, the same properties with types, access and annotations, the same signals.
Only the documentation (XML comments, DocString annotations) is the files' own."""

import os
import xml.etree.ElementTree as ET

import dbus
import pytest

import rootbus

HERE = os.path.dirname(os.path.abspath(__file__))
DBUS_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "dbus")
DOC_ANNOTATIONS = {"org.freedesktop.DBus.DocString"}
EXEC_IFACE = "org.xagent.Sandbox1.Exec"
STANDARD = {"org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable",
            "org.freedesktop.DBus.Properties"}


def annotations(el):
    return {a.get("name"): a.get("value") for a in el.findall("annotation")
            if a.get("name") not in DOC_ANNOTATIONS}


def args(el, default_direction):
    return [(a.get("name"), a.get("type"), a.get("direction", default_direction))
            for a in el.findall("arg")]


def describe(iface):
    """An interface element as comparable data: order of members does not matter, order
    of arguments does."""
    def members(tag, fn):
        found = {}
        for m in iface.findall(tag):
            assert m.get("name") not in found, f"{tag} {m.get('name')} twice"
            found[m.get("name")] = fn(m)
        return found
    return {
        "annotations": annotations(iface),
        "methods": members("method", lambda m: (args(m, "in"), annotations(m))),
        "signals": members("signal", lambda s: (args(s, "out"), annotations(s))),
        "properties": members("property", lambda p: (p.get("type"), p.get("access"),
                                                      annotations(p))),
    }


def interfaces(xml_text):
    return {i.get("name"): i for i in ET.fromstring(xml_text).findall("interface")}


def file_interface(name):
    path = os.path.join(DBUS_DIR, name + ".xml")
    found = interfaces(open(path).read())
    assert list(found) == [name], f"{path} must describe exactly {name}, has {list(found)}"
    return found[name]


@pytest.fixture(scope="module", autouse=True)
def daemon_stopped_afterwards(stack):
    yield
    rootbus.stop_daemon(stack)


@pytest.fixture(scope="module")
def live(stack):
    conn = rootbus.connect(stack)
    try:
        manager = interfaces(rootbus.introspect(conn, rootbus.MANAGER_PATH))
        with rootbus.root_sandbox(stack, "iface-test") as (name, path):
            sandbox = interfaces(rootbus.introspect(conn, path))
            # An exec object exists while its process runs (and a minute after).
            m = dbus.Interface(conn.get_object(rootbus.BUS_NAME, rootbus.MANAGER_PATH, introspect=False),
                               rootbus.MANAGER_IFACE)
            with open("/dev/null", "r+b") as null:
                fd = dbus.types.UnixFd(null.fileno())
                exec_path = m.StartExec(name, ["sleep", "60"], dbus.Dictionary({}, signature="sv"), fd, fd, fd)
            exec_ = interfaces(rootbus.introspect(conn, exec_path))
            dbus.Interface(conn.get_object(rootbus.BUS_NAME, exec_path, introspect=False),
                           EXEC_IFACE).Kill("KILL")
    finally:
        conn.close()
    return {"manager": manager, "sandbox": sandbox, "exec": exec_}


def test_manager_object_serves_manager_and_object_manager(live):
    assert set(live["manager"]) == STANDARD | {"org.freedesktop.DBus.ObjectManager",
                                               rootbus.MANAGER_IFACE}


def test_sandbox_object_serves_the_sandbox_interface(live):
    assert set(live["sandbox"]) == STANDARD | {rootbus.SANDBOX_IFACE}


def test_exec_object_serves_the_exec_interface(live):
    assert set(live["exec"]) == STANDARD | {EXEC_IFACE}


@pytest.mark.parametrize("obj,iface", [("manager", rootbus.MANAGER_IFACE),
                                       ("sandbox", rootbus.SANDBOX_IFACE),
                                       ("exec", EXEC_IFACE)])
def test_interface_file_equals_live_introspection(live, obj, iface):
    want = describe(file_interface(iface))
    got = describe(live[obj][iface])
    for part in ("methods", "properties", "signals", "annotations"):
        assert want[part] == got[part], f"{iface}: {part} differ"


def test_comparison_notices_a_difference(live):
    """The comparison is not vacuous: renaming one argument is seen."""
    iface = file_interface(rootbus.MANAGER_IFACE)
    iface.find("method[@name='GetSandbox']/arg").set("name", "sandbox_name")
    assert describe(iface)["methods"] != describe(live["manager"][rootbus.MANAGER_IFACE])["methods"]


def test_every_member_is_documented():
    """Each method, property and signal has a comment right before it."""
    for iface in (rootbus.MANAGER_IFACE, rootbus.SANDBOX_IFACE, EXEC_IFACE):
        parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
        root = ET.fromstring(open(os.path.join(DBUS_DIR, iface + ".xml")).read(), parser)
        children = list(root.find("interface"))
        for i, el in enumerate(children):
            if el.tag in ("method", "property", "signal"):
                assert i > 0 and children[i - 1].tag is ET.Comment, \
                    f"{iface}: {el.tag} {el.get('name')} has no doc comment"
                if el.tag == "method":
                    assert "polkit" in children[i - 1].text and "Errors" in children[i - 1].text, \
                        f"{iface}.{el.get('name')}: the comment names no polkit action or errors"
