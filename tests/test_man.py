# SPDX-License-Identifier: LGPL-2.1-or-later
"""The manual pages as built (BUILD/man/*.[1-8]): `man --warnings` finds nothing to
say about them, and each says what the code it documents has: every command and
option of xagent-sandboxctl and xagent-sandboxd (from their --help), every key of
the host policy with its default (conf/sandboxd.json), every member of the D-Bus
interfaces (dbus/*.xml), every polkit action and every error name. A new command,
option, key or method without its documentation fails here.

Environment (set by tests/meson.build): SBX_MAN_DIR (the built pages), SBX_CTL,
SBX_DAEMON, SBX_SOURCE_ROOT."""

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

MAN_DIR = os.environ["SBX_MAN_DIR"]
CTL = os.environ["SBX_CTL"]
DAEMON = os.environ["SBX_DAEMON"]
SOURCE_ROOT = os.environ["SBX_SOURCE_ROOT"]
PAGES = ["xagent-sandboxctl.1", "xagent-sandbox-mcp.1", "xagent-sandboxd.8", "sandboxd.json.5",
         "org.xagent.Sandbox1.7"]
# Built next to xagent-sandboxctl (src/ctl, src/mcp).
MCP = os.path.join(os.path.dirname(os.path.dirname(CTL)), "mcp", "xagent-sandbox-mcp")
ENV = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="1000")


def render(page):
    """The page as man shows it, formatting stripped, one paragraph per line."""
    out = subprocess.run(["man", "--encoding=UTF-8", "-l", os.path.join(MAN_DIR, page)],
                         env=ENV, capture_output=True, text=True, check=True)
    return out.stdout


def section(text, title):
    """The lines of one section (a heading at column 0) of a rendered page."""
    m = re.search(r"^%s\n(.*?)(?=^\S)" % re.escape(title), text, re.S | re.M)
    assert m, "no section %s" % title
    return m.group(1)


def headings(text):
    """The definition-list terms: lines indented 7 spaces (the paragraph indent)."""
    return [line.strip() for line in text.splitlines() if re.match(r"^ {7}\S", line)]


def help_text(*args):
    return subprocess.run([*args, "--help"], capture_output=True, text=True, check=True).stdout


def long_options(text):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


@pytest.mark.parametrize("page", PAGES)
def test_man_warnings_clean(page):
    """groff's warnings (man --warnings) and man's own complaints: none."""
    out = subprocess.run(["man", "--warnings", "--encoding=UTF-8", "-l", os.path.join(MAN_DIR, page)],
                         env=dict(ENV, MANWIDTH="80"), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr
    assert "NAME" in out.stdout and "SEE ALSO" in out.stdout


@pytest.mark.parametrize("page", PAGES)
def test_man_cross_references_exist(page):
    """Every page(section) of this project that a page names is one of the pages."""
    mine = {"xagent-sandboxctl(1)", "xagent-sandbox-mcp(1)", "xagent-sandboxd(8)", "sandboxd.json(5)",
            "org.xagent.Sandbox1(7)"}
    named = set(re.findall(r"\b((?:xagent-sandbox\w*|sandboxd\.json|org\.xagent\.Sandbox1)\(\d\))", render(page)))
    assert named <= mine, named - mine


def ctl_commands():
    """[(command, usage)] from `xagent-sandboxctl --help`."""
    text = section(help_text(CTL) + "\nEND\n", "Commands:")
    return [(line.split()[0], line) for line in text.splitlines() if line.strip()]


def test_ctl_page_documents_every_command():
    page = render("xagent-sandboxctl.1")
    documented = headings(section(page, "COMMANDS"))
    commands = [c for c, _ in ctl_commands()]
    assert commands, "no commands in --help"
    assert [h.split()[0] for h in documented] == commands


def test_ctl_page_documents_every_option():
    page = render("xagent-sandboxctl.1")
    documented = set()
    for title in ("COMMANDS", "OPTIONS", "SPEC OPTIONS"):
        documented |= long_options("\n".join(headings(section(page, title))))
    wanted = long_options(help_text(CTL))
    for command, _ in ctl_commands():
        wanted |= long_options(help_text(CTL, command))
    assert wanted, "no options in --help"
    assert wanted - documented == set()
    assert documented - wanted == set()


def test_ctl_page_documents_exit_statuses():
    statuses = headings(section(render("xagent-sandboxctl.1"), "EXIT STATUS"))
    # sandboxctl.c and ctl-util.h: 0, CTL_EXIT_FAILURE, CTL_EXIT_USAGE.
    header = open(os.path.join(SOURCE_ROOT, "src/ctl/ctl-util.h")).read()
    codes = {"0"} | set(re.findall(r"#define CTL_EXIT_\w+ (\d+)", header))
    assert set(statuses) == codes


def test_daemon_page_documents_every_option():
    page = render("xagent-sandboxd.8")
    documented = long_options("\n".join(headings(section(page, "OPTIONS"))))
    wanted = long_options(help_text(DAEMON))
    assert wanted and documented == wanted


def policy_defaults():
    """The keys of conf/sandboxd.json and their values (which are the defaults)."""
    text = open(os.path.join(SOURCE_ROOT, "conf/sandboxd.json")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return json.loads(text)


def test_policy_page_documents_every_key_and_default():
    keys = section(render("sandboxd.json.5"), "KEYS")
    documented = {}
    for h in headings(keys):
        m = re.match(r"^(\w+) \((.*); default (.*)\)$", h)
        assert m, "a key heading without its default: %r" % h
        documented[m.group(1)] = json.loads(m.group(3))
    assert documented == policy_defaults()


def test_policy_page_example_is_a_valid_policy(tmp_path):
    page = render("sandboxd.json.5")
    example = section(page, "EXAMPLE")
    body = example[example.index("// /etc/xagent/sandboxd.json"):example.rindex("}") + 1]
    policy = tmp_path / "sandboxd.json"
    policy.write_text(body)
    out = subprocess.run([CTL, "fingerprint", "--config", str(policy)], input='{}',
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # It is not the default policy: the default image is the example's.
    default = subprocess.run([CTL, "fingerprint", "--config", "/nonexistent"], input='{}',
                             capture_output=True, text=True, check=True)
    assert out.stdout != default.stdout


def test_policy_page_escapes_are_the_parsers():
    """%h %u %U %%: the escapes policy-parse.c knows."""
    source = open(os.path.join(SOURCE_ROOT, "src/core/policy-parse.c")).read()
    known = re.search(r'strchr\("([^"]+)", \*c\)', source).group(1)
    page = section(render("sandboxd.json.5"), "KEYS")
    documented = set(re.findall(r"• +%(.):", page))
    assert documented == set(known)


def interface_members(path):
    """{member: [signature parts]} of one interface XML, as the page writes them."""
    members = {}
    iface = ET.parse(path).getroot().find("interface")
    for m in iface.findall("method"):
        members[m.get("name")] = ["%s %s %s" % (a.get("direction", "in"), a.get("type"), a.get("name"))
                                  for a in m.findall("arg")]
    for s in iface.findall("signal"):
        members[s.get("name")] = ["%s %s" % (a.get("type"), a.get("name")) for a in s.findall("arg")]
    for p in iface.findall("property"):
        members[p.get("name")] = ["readonly %s" % p.get("type")]
    return iface.get("name"), members


def page_members(block):
    """The same from a node block of the page."""
    members = {}
    for m in re.finditer(r"(\w+)\(((?:[^()]|\([^()]*\))*)\);", block):
        members[m.group(1)] = [" ".join(a.split()) for a in m.group(2).split(",") if a.strip()]
    for m in re.finditer(r"(readonly \S+) (\w+) =", block):
        members[m.group(2)] = [m.group(1)]
    return members


@pytest.mark.parametrize("xml", ["org.xagent.Sandbox1.Manager.xml", "org.xagent.Sandbox1.Sandbox.xml",
                                 "org.xagent.Sandbox1.Exec.xml"])
def test_bus_page_documents_every_member(xml):
    name, wanted = interface_members(os.path.join(SOURCE_ROOT, "dbus", xml))
    page = render("org.xagent.Sandbox1.7")
    m = re.search(r"interface %s \{\n(.*?)\n +\};" % re.escape(name), page, re.S)
    assert m, "no node block for %s" % name
    assert page_members(m.group(1)) == wanted
    # Every method and property is also described in words.
    for member in wanted:
        assert re.search(r"\b%s\b" % member, page.replace(m.group(1), "")), member


def test_bus_page_documents_every_action_and_error():
    page = render("org.xagent.Sandbox1.7")
    policy = ET.parse(os.path.join(SOURCE_ROOT, "polkit/org.xagent.sandbox1.policy")).getroot()
    actions = [a.get("id") for a in policy.findall("action")]
    authorization = headings(section(page, "AUTHORIZATION"))
    assert actions and [a for a in authorization if a.startswith("org.xagent.")] == actions
    for a in policy.findall("action"):
        d = a.find("defaults")
        defaults = ", ".join(d.find(k).text for k in ("allow_any", "allow_inactive", "allow_active"))
        assert re.search(r"%s\n.*?Default.*?: %s\." % (re.escape(a.get("id")), re.escape(defaults)),
                         section(page, "AUTHORIZATION"), re.S), a.get("id")
    # Every D-Bus error name of the one list of kinds (src/core/error.h).
    header = open(os.path.join(SOURCE_ROOT, "src/core/error.h")).read()
    errors = {"org.xagent.Sandbox1.Error." + e for e in re.findall(r'SBX_BUS_ERROR_PREFIX "(\w+)"', header)}
    documented = set(headings(section(page, "ERRORS")))
    assert errors and errors <= documented


def test_bus_page_names_every_interface_file():
    """The INTRODUCTION names each installed interface file (dbus/*.xml)."""
    files = sorted(f for f in os.listdir(os.path.join(SOURCE_ROOT, "dbus")) if f.endswith(".xml"))
    intro = " ".join(section(render("org.xagent.Sandbox1.7"), "INTRODUCTION").split())
    assert files and [f for f in files if f not in intro.replace("‐ ", "").replace("-\n", "")] == []


def test_mcp_page_documents_every_tool_and_option():
    """Every tool the server lists (tools/list needs no bus) and every option of its --help."""
    req = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n' \
          '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    out = subprocess.run([MCP], input=req, capture_output=True, text=True, timeout=30,
                         env=dict(ENV, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent"))
    tools = [t["name"] for t in json.loads(out.stdout.splitlines()[1])["result"]["tools"]]
    page = render("xagent-sandbox-mcp.1")
    text = section(page, "TOOLS")
    assert tools and [t for t in tools if not re.search(r"\b%s\b" % t, text)] == []
    assert long_options(help_text(MCP)) <= long_options(section(page, "SYNOPSIS"))
