# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bash completion of xagent-sandboxctl (shell-completion/xagent-sandboxctl.bash),
run by bash with bash-completion as an interactive shell would: it offers every
command and every option that `xagent-sandboxctl --help` and `COMMAND --help` list,
and the caller's sandbox names and snapshot ids as the service's JSON gives them
(here from a stand-in for the client that prints what `--json list` / `snapshots`
print; tests/systemd-machine completes from the real service). Without a service it
offers nothing and says nothing.

Environment (set by tests/meson.build): SBX_CTL, SBX_SOURCE_ROOT."""

import os
import re
import subprocess

import pytest

CTL = os.environ["SBX_CTL"]
SOURCE_ROOT = os.environ["SBX_SOURCE_ROOT"]
COMPLETION = os.path.join(SOURCE_ROOT, "shell-completion/xagent-sandboxctl.bash")
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
GLOBAL = {"--json", "--no-ask-password", "--help", "-h"}

# Names with what completion must quote: a space, quotes, a backslash, a '$'.
SANDBOXES = ["work", "web-1", "we have spaces", 'quote"d', "back\\slash", "dollar$x"]
SNAPSHOTS = ["v1", "v2-final"]

HARNESS = r'''
source "$1"; source "$2"; shift 2
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
_xagent_sandboxctl xagent-sandboxctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\0' "${COMPREPLY[@]}"
'''


def json_string(s):
    """json-c's escaping of a name (JSON_C_TO_STRING_NOSLASHESCAPE)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.fixture(scope="module")
def fake_service(tmp_path_factory):
    """A PATH directory whose xagent-sandboxctl prints what the real one prints for
    --json list / snapshots of a service that has SANDBOXES and SNAPSHOTS."""
    d = tmp_path_factory.mktemp("fake-ctl")
    rows = ",\n".join('  {\n    "name":%s,\n    "state":"running",\n    "owner":1000,\n'
                      '    "verdict":"match",\n    "object":"/org/xagent/Sandbox1/sandbox/x"\n  }'
                      % json_string(n) for n in SANDBOXES)
    snaps = ",\n".join('  {\n    "snapshot_id":%s,\n    "source":"work",\n    "image_id":"sha256:0",\n'
                       '    "owner":1000,\n    "created_us":1\n  }' % json_string(s) for s in SNAPSHOTS)
    (d / "list.json").write_text("[\n%s\n]\n" % rows)
    (d / "snapshots.json").write_text("[\n%s\n]\n" % snaps)
    script = d / "xagent-sandboxctl"
    script.write_text('#!/bin/sh\n'
                      '[ "$1 $2" = "--no-ask-password --json" ] || exit 2\n'
                      'exec cat "%s/$3.json"\n' % d)
    script.chmod(0o755)
    return str(d)


def complete(*words, path_dir=None, env_extra=None, cwd=None):
    """The completions bash offers for words (the last one is being completed)."""
    env = dict(os.environ, LC_ALL="C.UTF-8")
    if path_dir:
        env["PATH"] = path_dir + ":" + env["PATH"]
    env.update(env_extra or {})
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", HARNESS, "harness",
                          BASH_COMPLETION, COMPLETION, "xagent-sandboxctl", *words],
                         env=env, cwd=cwd, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == b"", out.stderr
    return [w for w in out.stdout.decode().split("\0") if w]


def ctl_help(*args):
    return subprocess.run([CTL, *args, "--help"], capture_output=True, text=True, check=True).stdout


def ctl_commands():
    text = ctl_help().split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in text.splitlines()]


def options_of(text):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)) | ({"-h"} if "-h --help" in text else set())


def unquote(word):
    return subprocess.run(["bash", "-c", 'eval "printf %s $1"', "unquote", word],
                          capture_output=True, text=True, check=True).stdout


def test_commands():
    assert complete("") == ctl_commands()
    assert complete("s") == [c for c in ctl_commands() if c.startswith("s")]
    assert complete("--json", "de") == ["delete", "delete-snapshot"]


def test_global_options_before_the_command():
    """The options section of --help (the command lines above it name commands' own)."""
    assert set(complete("-")) == options_of(ctl_help().split("\nOptions", 1)[1])


@pytest.mark.parametrize("command", ctl_commands())
def test_options_of_every_command(command):
    """What `COMMAND --help` lists, and nothing else (--version only before it)."""
    assert set(complete(command, "-")) == options_of(ctl_help(command))


def test_sandbox_names_from_the_service(fake_service):
    offered = complete("inspect", "", path_dir=fake_service)
    assert [unquote(w) for w in offered] == SANDBOXES
    assert [unquote(w) for w in complete("stop", "--timeout", "5", "we", path_dir=fake_service)] == \
        ["web-1", "we have spaces"]
    assert [unquote(w) for w in complete("--json", "verify", "--image", "x", "w", path_dir=fake_service)] == \
        ["work", "web-1", "we have spaces"]


def test_snapshot_ids_from_the_service(fake_service):
    assert complete("delete-snapshot", "", path_dir=fake_service) == SNAPSHOTS
    assert complete("create", "new", "--snapshot", "v2", path_dir=fake_service) == ["v2-final"]


@pytest.mark.parametrize("words", [
    ("create", ""),                     # a new name: nothing to offer
    ("snapshot", "work", ""),           # a new snapshot id
    ("stop", "--timeout", ""),          # a number
    ("list", ""),                       # no arguments
    ("inspect", "work", ""),            # one argument only
    ("cp", "a", "work:", ""),           # two arguments only
    ("no-such-command", ""),
])
def test_nothing_where_nothing_fits(fake_service, words):
    assert complete(*words, path_dir=fake_service) == []


def test_files_for_spec_and_config(tmp_path):
    (tmp_path / "spec.json").write_text("{}")
    (tmp_path / "sub").mkdir()
    assert sorted(complete("create", "x", "--spec", "", cwd=tmp_path)) == ["spec.json", "sub"]
    assert complete("fingerprint", "--config", "sp", cwd=tmp_path) == ["spec.json"]
    assert complete("fingerprint", "sp", cwd=tmp_path) == ["spec.json"]


def test_cp_offers_sandboxes_and_local_files(fake_service, tmp_path):
    """cp's ends are NAME:PATH or a local file: the first one either (the sandboxes as
    NAME:), the second the other kind (from a sandbox: a local directory)."""
    (tmp_path / "local.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    names = [n + ":" for n in SANDBOXES]

    def cp(*words):
        return [unquote(w) for w in complete("cp", *words, path_dir=fake_service, cwd=tmp_path)]

    assert sorted(cp("")) == sorted(names + ["local.txt", "sub"])
    assert cp("wor") == ["work:"]
    assert cp("we") == ["web-1:", "we have spaces:"]
    assert cp("lo") == ["local.txt"]
    # Into a sandbox from a local file: only the sandboxes.
    assert cp("local.txt", "") == names
    assert cp("local.txt", "w") == ["work:", "web-1:", "we have spaces:"]
    # Out of a sandbox: only local directories.
    assert cp("work:/etc/hosts", "") == ["sub"]
    # A path inside a sandbox is not known here: nothing, and no local file for it.
    assert cp("work:") == [] and cp("work:/et") == [] and cp("local.txt", "work:/") == []
    # A local path that merely holds a colon after a slash is a local file.
    (tmp_path / "sub" / "a:b").write_text("x")
    assert cp("sub/a") == ["sub/a:b"]


def test_file_commands_offer_sandboxes_as_name_colon(fake_service, tmp_path):
    """cat, ls and rm take NAME:PATH; put a local file (or -) and then NAME:PATH."""
    (tmp_path / "local.txt").write_text("x")
    names = [n + ":" for n in SANDBOXES]

    def comp(*words):
        return [unquote(w) for w in complete(*words, path_dir=fake_service, cwd=tmp_path)]

    for command in ("cat", "ls", "rm"):
        assert comp(command, "") == names
        assert comp(command, "we") == ["web-1:", "we have spaces:"]
        assert comp(command, "work:/e") == []
        assert comp(command, "work:/etc", "") == []
    assert comp("ls", "--depth", "2", "wor") == ["work:"]
    assert comp("put", "lo") == ["local.txt"]
    assert comp("put", "local.txt", "wor") == ["work:"]


def test_python_versions_for_fingerprint():
    assert complete("fingerprint", "--python", "3.1") == ["3.11", "3.12", "3.13", "3.14"]


def test_quietly_nothing_without_a_service(tmp_path):
    """The real client, and no bus at all: no names, no error on the terminal."""
    os.symlink(os.path.abspath(CTL), tmp_path / "xagent-sandboxctl")
    env = {"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=%s/no-bus" % tmp_path}
    assert complete("inspect", "", path_dir=str(tmp_path), env_extra=env) == []
    assert complete("delete-snapshot", "", path_dir=str(tmp_path), env_extra=env) == []
