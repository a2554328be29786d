# SPDX-License-Identifier: LGPL-2.1-or-later
"""The configured systemd unit (BUILD/systemd/xagent-sandboxd.service): what docs/
asks of it, `systemd-analyze security --offline=true` rating it at most 1.0, and
`systemd-analyze verify` finding nothing wrong with it. Neither needs systemd as PID 1.

Environment (set by tests/meson.build): SBX_UNIT_FILE, SBX_DAEMON (the built daemon),
SBX_LIBEXECDIR, SBX_SOURCE_ROOT."""

import os
import re
import shutil
import subprocess

import pytest

UNIT = os.environ["SBX_UNIT_FILE"]
DAEMON = os.environ["SBX_DAEMON"]
LIBEXECDIR = os.environ["SBX_LIBEXECDIR"]
SOURCE_ROOT = os.environ["SBX_SOURCE_ROOT"]
ANALYZE = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"
# 1.0 before egress: entering a sandbox's network namespace and loading its rules need
# CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SYS_PTRACE, RestrictNamespaces=net and AF_NETLINK
# (the unit says why).
MAX_EXPOSURE = 1.8


def parse_unit(text):
    """[(section, key, value)] in order; keys may repeat (SystemCallFilter=)."""
    entries, section = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


@pytest.fixture(scope="module")
def unit():
    with open(UNIT) as f:
        return parse_unit(f.read())


def values(unit, key, section="Service"):
    return [v for s, k, v in unit if s == section and k == key]


def test_unit_is_what_the_design_asks(unit):
    assert {s for s, _, _ in unit} == {"Unit", "Service"}, "no [Install]: D-Bus activated only"
    assert values(unit, "Type") == ["notify"]
    assert values(unit, "BusName") == ["org.xagent.Sandbox1"]
    assert values(unit, "ExecStart") == [os.path.join(LIBEXECDIR, "xagent-sandboxd")]
    assert values(unit, "StateDirectory") == ["xagent-sandbox"]
    assert values(unit, "StateDirectoryMode") == ["0700"]
    assert values(unit, "User") == [] and values(unit, "DynamicUser") == []
    assert values(unit, "CapabilityBoundingSet") == ["CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_PTRACE"]
    assert values(unit, "RestrictNamespaces") == ["net"]
    assert values(unit, "AmbientCapabilities") == []
    assert values(unit, "RestrictAddressFamilies") == ["AF_UNIX AF_NETLINK"]
    assert values(unit, "NoNewPrivileges") == ["yes"]
    assert values(unit, "SystemCallFilter")[0] == "@system-service"
    # The volume checks must see the real home directories.
    assert values(unit, "ProtectHome") == ["read-only"]
    assert values(unit, "PrivateUsers") == []
    assert not any(k in ("InaccessiblePaths", "TemporaryFileSystem") for _, k, _ in unit)


def test_activation_file_names_the_unit():
    with open(os.path.join(SOURCE_ROOT, "dbus", "org.xagent.Sandbox1.service.in")) as f:
        text = f.read()
    assert "SystemdService=" + os.path.basename(UNIT) in text.splitlines()


def test_security_exposure_is_at_most_one():
    r = subprocess.run([ANALYZE, "security", "--offline=true", "--no-pager", UNIT],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    m = re.search(r"Overall exposure level for xagent-sandboxd\.service: (\d+\.\d+)", r.stdout)
    assert m, r.stdout[-2000:]
    exposure = float(m.group(1))
    print("exposure", exposure)
    assert exposure <= MAX_EXPOSURE, r.stdout
    # The printed value is rounded up to a tenth; --threshold compares the exact
    # value (in tenths) and fails above it.
    r = subprocess.run([ANALYZE, "security", "--offline=true", "--threshold=18", UNIT],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr


def test_security_check_notices_a_weaker_unit(tmp_path):
    """Not vacuous: the same unit without its system call filter rates worse."""
    with open(UNIT) as f:
        text = f.read()
    weaker = tmp_path / "xagent-sandboxd.service"
    weaker.write_text(re.sub(r"^SystemCallFilter=.*$", "", text, flags=re.M))
    r = subprocess.run([ANALYZE, "security", "--offline=true", "--threshold=18", str(weaker)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode != 0


def test_verify_finds_nothing(tmp_path):
    """systemd-analyze verify works without PID 1. It checks that ExecStart= is an
    executable, so it runs on a copy pointing at the built daemon (the configured path
    is only there after installation)."""
    with open(UNIT) as f:
        text = f.read()
    copy = tmp_path / "xagent-sandboxd.service"
    copy.write_text(text.replace("ExecStart=" + os.path.join(LIBEXECDIR, "xagent-sandboxd"),
                                 "ExecStart=" + DAEMON))
    r = subprocess.run([ANALYZE, "verify", "--man=no", str(copy)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    ours = [l for l in (r.stdout + r.stderr).splitlines() if "xagent-sandboxd" in l]
    assert ours == [], "\n".join(ours)


def test_verify_would_notice_a_mistake(tmp_path):
    """Not vacuous: a misspelt setting in the same unit is reported."""
    with open(UNIT) as f:
        text = f.read()
    copy = tmp_path / "xagent-sandboxd.service"
    copy.write_text(text.replace("ExecStart=" + os.path.join(LIBEXECDIR, "xagent-sandboxd"),
                                 "ExecStart=" + DAEMON).replace("ProtectHome=", "ProtectHomes="))
    r = subprocess.run([ANALYZE, "verify", "--man=no", str(copy)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "ProtectHomes" in r.stderr
