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
    ('not json', "not valid JSON"),
    ('{"env": {"A\\u0000B": "v"}}', "U+0000"),
    ('{"env": {"A": "\\ud800"}}', "a lone high surrogate \\ud800"),
    ('{"env": {"A": "\\udc00\\ud876"}}', "a lone low surrogate \\udc00"),
    ('{"cpus": 2,}', "not valid JSON: a trailing comma"),
    ('{"cpus": 2} // two', "not valid JSON: text after the value"),
    ('{"cpus": NaN}', "not valid JSON"),
])
def test_invalid_spec_names_the_field(no_policy, spec, needle):
    r = ctl("fingerprint", "--config", no_policy, stdin=spec)
    assert r.returncode != 0
    assert r.stdout == ""
    assert "InvalidArgs" in r.stderr and needle in r.stderr


def test_escaped_astral_characters(no_policy):
    """json.dumps() writes U+2D800 (CJK Ext F) as the pair \\ud876\\udc00: it means the
    character itself (json-c 0.16 made it U+FFFD)."""
    spec = {"image": "img", "env": {"A": "\U0002D800\U0001DFFF\U0001F600"}}
    escaped = ctl("fingerprint", "--config", no_policy, stdin=json.dumps(spec))
    raw = ctl("fingerprint", "--config", no_policy, stdin=json.dumps(spec, ensure_ascii=False))
    replaced = ctl("fingerprint", "--config", no_policy,
                   stdin=json.dumps({"image": "img", "env": {"A": "\ufffd\ufffd\U0001F600"}}))
    assert escaped.returncode == 0, escaped.stderr
    assert escaped.stdout == raw.stdout != replaced.stdout


V5 = "6c98f55b42f76d74d4de177847b62ce4f6778e9f35a73e9c5f5d9a4473d64b32"
V5_SPEC = {
    "image": "img:tag", "working_dir": "/work", "cpus": 2, "memory": 1024, "env": {"B": "2", "A": "1"},
    "volumes": [["/h2", "/g2", "rw"], ["/h1", "/g1", "ro"]], "network_isolated": True,
    "ports": [[18081, 81], [0, 80]],
}


def test_contract_valid_specs_are_fingerprinted(no_policy):
    """All that xagent's from_parts() accepts: V5 (isolated with ports), any mode, relative paths."""
    assert ctl("fingerprint", "--config", no_policy, stdin=json.dumps(V5_SPEC)).stdout.strip() == V5
    odd = {"volumes": [["rel", "/g", "rx"]], "working_dir": "w", "env": {"": "\x01"}, "ports": [[-1, 70000]]}
    r = ctl("fingerprint", "--config", no_policy, stdin=json.dumps(odd))
    assert r.returncode == 0 and len(r.stdout.strip()) == 64, r.stderr


# U+1F6DC (Unicode 15.0) is escaped by Python 3.11's repr() and kept by 3.12's.
WIRELESS = {"image": "img", "env": {"A": "\U0001F6DC"}}


def test_python_version(tmp_path, no_policy):
    spec = json.dumps(WIRELESS)
    fps = {v: ctl("fingerprint", "--config", no_policy, "--python", v, stdin=spec).stdout.strip()
           for v in ("3.11", "3.12", "3.13", "3.14")}
    assert fps["3.11"] != fps["3.12"] == fps["3.13"] == fps["3.14"]
    assert ctl("fingerprint", "--config", no_policy, stdin=spec).stdout.strip() == fps["3.11"]
    policy = tmp_path / "sandboxd.json"
    policy.write_text('{ "python_version": "3.13" }')
    r = ctl("--json", "fingerprint", "--config", str(policy), stdin=spec)
    assert json.loads(r.stdout)["fingerprint"] == fps["3.13"]
    assert json.loads(r.stdout)["python_version"] == "3.13"
    assert ctl("fingerprint", "--python", "3.10", stdin=spec).returncode == 2
    policy.write_text('{ "python_version": "3.10" }')
    r = ctl("fingerprint", "--config", str(policy), stdin=spec)
    assert r.returncode != 0 and "python_version" in r.stderr


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
