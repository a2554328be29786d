"""xagent-sandboxctl fingerprint: no daemon, JSON spec in, fingerprint out."""

import json
import os
import subprocess

import pytest

CTL = os.path.join(os.environ["SBX_BUILD_ROOT"], "src", "ctl", "xagent-sandboxctl")
V1 = "74bdfffa02ebff2f8698c27f615c9f69afda69ded16442baa97112e494e6bbe3"
V2 = "faa07e00685bf70d80690bfb465ad1958c65b19b41064f8bd0c22df011e1d62e"
V2_SPEC = {
    "image": "python:3.12-slim",
    "env": {"FOO": "bar", "BAZ": "qux"},
    "volumes": [["/host/a", "/guest/a", "ro"]],
    "ports": [[8080, 80]],
}


@pytest.fixture
def no_policy(tmp_path):
    """A policy path that does not exist: the built-in defaults apply."""
    return str(tmp_path / "absent.json")


def ctl(*args, stdin=""):
    return subprocess.run([CTL, *args], input=stdin, capture_output=True, text=True, timeout=30)


def test_default_image_is_xagents(no_policy):
    r = ctl("fingerprint", "--config", no_policy, stdin="{}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == V1


def test_file_and_stdin_agree(tmp_path, no_policy):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(V2_SPEC))
    by_file = ctl("fingerprint", "--config", no_policy, str(spec))
    by_stdin = ctl("fingerprint", "--config", no_policy, "-", stdin=json.dumps(V2_SPEC))
    assert by_file.stdout.strip() == by_stdin.stdout.strip() == V2


def test_json_output_is_canonical(no_policy):
    noisy = dict(V2_SPEC, working_dir="//home/", ports=[[8080, 80], [8080, 80]])
    r = ctl("--json", "fingerprint", "--config", no_policy, stdin=json.dumps(noisy))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["fingerprint"] == V2
    assert out["spec"] == {
        "image": "python:3.12-slim", "working_dir": "/home", "cpus": 1, "memory": 512,
        "env": {"BAZ": "qux", "FOO": "bar"}, "volumes": [["/host/a", "/guest/a", "ro"]],
        "network_isolated": False, "ports": [[8080, 80]],
    }


def test_policy_default_image_is_used(tmp_path):
    policy = tmp_path / "sandboxd.json"
    policy.write_text('{ "default_image": "xprobe/xagent-sandbox:latest" /* same as built in */ }')
    assert ctl("fingerprint", "--config", str(policy), stdin="{}").stdout.strip() == V1
    policy.write_text('{ "default_image": "other:1" }')
    assert ctl("fingerprint", "--config", str(policy), stdin="{}").stdout.strip() != V1


@pytest.mark.parametrize("spec, needle", [
    ('{"cpus": -1}', "cpus"),
    ('{"memory": 64}', "memory must be >= 128"),
    ('{"imgae": "x"}', "imgae: unknown key"),
    ('{"volumes": [["/h", "/g", "rx"]]}', "volumes"),
    ('not json', "not valid JSON"),
])
def test_invalid_spec_names_the_field(no_policy, spec, needle):
    r = ctl("fingerprint", "--config", no_policy, stdin=spec)
    assert r.returncode != 0
    assert r.stdout == ""
    assert "InvalidArgs" in r.stderr and needle in r.stderr


def test_malformed_policy_is_an_error(tmp_path):
    policy = tmp_path / "sandboxd.json"
    policy.write_text('{ "max_cpus": "many" }')
    r = ctl("fingerprint", "--config", str(policy), stdin="{}")
    assert r.returncode != 0 and "max_cpus" in r.stderr


def test_usage_errors(no_policy):
    assert ctl("fingerprint", "a", "b").returncode == 2
    assert ctl("fingerprint", "--bogus").returncode == 2
    assert ctl("no-such-command").returncode == 2
    assert ctl().returncode == 2
    r = ctl("fingerprint", "--config", no_policy, "/nonexistent/spec.json")
    assert r.returncode == 1 and "/nonexistent/spec.json" in r.stderr


def test_help():
    r = ctl("--help")
    assert r.returncode == 0 and "fingerprint" in r.stdout
    r = ctl("fingerprint", "--help")
    assert r.returncode == 0 and "fingerprint" in r.stdout
