# SPDX-License-Identifier: LGPL-2.1-or-later
"""PullImage against real registries (docs/api.md, docs/security.md "Images"): Debian's
docker-registry started here on loopback with TLS certificates made by certtool, an
image pushed into it through dockerd's API, then pulled through the service as the
member, with progress (xagent-sandboxctl pull), and refused as the outsider, from an
unlisted registry, with no registries at all; a registry whose certificate is from
another CA, one whose certificate names another host, a missing image, an image over
max_image_mib each a typed error naming which; option pull "missing" on create.

Three registries share one storage directory: GOOD (its certificate from the policy's
CA, naming 127.0.0.1), WRONG_NAME (the policy's CA, but naming another host) and
OTHER_CA (naming 127.0.0.1, from a CA the policy does not give). dockerd reaches them
on loopback (which it treats as an insecure registry: what it fetches is content-
addressed, the service having chosen the digest over its own verified connection)."""

import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import tarfile
import tempfile
import time
import uuid
from urllib.parse import quote

import pytest

import sandbox_helpers as h

MEMBER, OTHER = h.MEMBER, h.OTHER
REGISTRY = "/usr/bin/docker-registry"
UNTRUSTED = h.ERR + "RegistryUntrusted"
NO_SUCH_IMAGE = h.ERR + "NoSuchImage"
REPO = "xagent-test-" + uuid.uuid4().hex[:8]


def certtool(*args, template=None, cwd):
    argv = ["certtool", *args]
    if template is not None:
        path = os.path.join(cwd, "template.cfg")
        with open(path, "w") as f:
            f.write(template)
        argv += ["--template", path]
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    certtool("--generate-privkey", "--key-type=ecdsa", "--outfile", f"{name}.key", cwd=d)
    certtool("--generate-self-signed", "--load-privkey", f"{name}.key", "--outfile", f"{name}.pem",
             template=f'cn = "xagent test {name}"\nca\ncert_signing_key\nexpiration_days = 2\n', cwd=d)
    return os.path.join(d, f"{name}.pem")


def make_server_cert(d, name, ca, san):
    certtool("--generate-privkey", "--key-type=ecdsa", "--outfile", f"{name}.key", cwd=d)
    certtool("--generate-certificate", "--load-privkey", f"{name}.key", "--load-ca-certificate", f"{ca}.pem",
             "--load-ca-privkey", f"{ca}.key", "--outfile", f"{name}.pem",
             template=f'cn = "{name}"\n{san}\ntls_www_server\nsigning_key\nencryption_key\nexpiration_days = 2\n',
             cwd=d)
    return os.path.join(d, f"{name}.pem"), os.path.join(d, f"{name}.key")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """docker-registry on 127.0.0.1:port with a certificate, storing in storage."""

    def __init__(self, d, name, cert, key, storage):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        config = os.path.join(d, f"{name}.yml")
        with open(config, "w") as f:
            f.write(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {storage}\n"
                    f"http:\n  addr: {self.host}\n  tls:\n    certificate: {cert}\n    key: {key}\n")
        self.log = open(os.path.join(d, f"{name}.log"), "w")
        self.proc = subprocess.Popen([REGISTRY, "serve", config], stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, deadline=30):
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            assert self.proc.poll() is None, f"docker-registry on {self.host} exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    with ctx.wrap_socket(s):
                        return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"docker-registry on {self.host} did not answer within {deadline} s")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def docker_raw(method, path, body=b"", headers=None, timeout=300):
    """A Docker API request with a raw body and headers; (status, body bytes)."""
    conn = h._UnixConnection(h.DOCKER_SOCKET, timeout)
    try:
        conn.request(method, path, body, headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def stream_errors(data):
    return [json.loads(line)["error"] for line in data.decode().splitlines()
            if line.strip() and "error" in json.loads(line)]


def import_and_push(ref, d, extra_bytes):
    """An image of the test root file system and extra_bytes random bytes, imported as
    ref, pushed to its registry, then removed from dockerd; returns its image id."""
    root = os.path.join(d, "root-" + uuid.uuid4().hex[:6])
    os.mkdir(root)
    subprocess.run([os.path.join(h.SOURCE_ROOT, "tests", "make-test-rootfs.sh"), root], check=True)
    with open(os.path.join(root, "payload"), "wb") as f:
        f.write(os.urandom(extra_bytes))
    tar_path = root + ".tar"
    with tarfile.open(tar_path, "w") as t:
        t.add(root, arcname=".")
    shutil.rmtree(root)
    repo, tag = ref.rsplit(":", 1)
    with open(tar_path, "rb") as f:
        status, data = docker_raw("POST", f"/images/create?fromSrc=-&repo={quote(repo, safe='')}&tag={tag}",
                                  f.read(), {"Content-Type": "application/x-tar"})
    os.unlink(tar_path)
    assert status == 200 and not stream_errors(data), data
    image_id = h.docker("GET", f"/images/{quote(ref, safe='')}/json")[1]["Id"]
    auth = base64.b64encode(b"{}").decode()
    status, data = docker_raw("POST", f"/images/{quote(repo, safe='')}/push?tag={tag}",
                              headers={"X-Registry-Auth": auth})
    assert status == 200 and not stream_errors(data), data
    h.docker_remove_image(image_id)
    assert not h.docker_image_exists(image_id)
    return image_id


@pytest.fixture(scope="module")
def registries(stack, sandboxd):
    d = tempfile.mkdtemp(prefix="xagent-registry-", dir="/tmp")
    os.chmod(d, 0o755)
    made, pushed = [], []
    try:
        make_ca(d, "ca")
        make_ca(d, "other-ca")
        storage = os.path.join(d, "storage")
        os.mkdir(storage)
        ip = 'ip_address = "127.0.0.1"'
        good = Registry(d, "good", *make_server_cert(d, "good", "ca", ip), storage)
        made.append(good)
        wrong_name = Registry(d, "wrong-name", *make_server_cert(d, "wrong-name", "ca",
                                                                 'dns_name = "registry.elsewhere.example"'), storage)
        made.append(wrong_name)
        other_ca = Registry(d, "other-ca", *make_server_cert(d, "other-ca-server", "other-ca", ip), storage)
        made.append(other_ca)
        for r in made:
            r.wait()
        small = f"{good.host}/{REPO}/small:1"
        big = f"{good.host}/{REPO}/big:1"
        ids = {"small": import_and_push(small, d, 4096), "big": import_and_push(big, d, 5 << 20)}
        pushed += [small, big]
        config = {
            "registries": [{"host": r.host, "ca": os.path.join(d, "ca.pem")} for r in made],
            "allowed_images": ["127.0.0.1:*/xagent-test-*", h.TEST_IMAGE, "xprobe/xagent-sandbox:latest"],
            "max_image_mib": 4,
        }
        with h.daemon_config(stack, config):
            yield {"sandboxd": sandboxd, "dir": d, "good": good, "wrong_name": wrong_name, "other_ca": other_ca, "ids": ids,
                   "small": small, "big": big}
    finally:
        for ref in pushed:
            h.docker_remove_image(ref)
        for r in made:
            r.stop()
        shutil.rmtree(d, ignore_errors=True)


def pull(sandboxd, user, ref):
    return sandboxd.call(user, "PullImage", "sa{sv}", [ref, {}], timeout=120)


def ctl(stack, user, *args):
    argv = [os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl"), "--no-ask-password", *args]
    return stack.run_as(user, argv, timeout=180)


def test_pulling_is_off_without_registries(sandboxd):
    """The built-in policy lists no registries: nothing is pulled, and the error says so."""
    msg = pull(sandboxd, MEMBER, "127.0.0.1:5000/xagent-test-x/small:1").error(h.POLICY_VIOLATION)
    assert "Pulling is off" in msg and "registries" in msg


def test_member_pulls_with_progress(stack, registries):
    """Through xagent-sandboxctl (its PullProgress lines: not a terminal), as the member:
    the image id is the one pushed, and dockerd has it under the reference."""
    ref, want = registries["small"], registries["ids"]["small"]
    h.docker_remove_image(ref)
    mark = h.LogMark(stack)
    r = ctl(stack, MEMBER, "pull", ref)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == f"image_id: {want}", r.stdout
    progress = [tuple(int(x) for x in line.split()[1:4:2]) for line in lines if line.startswith("progress: ")]
    assert progress, r.stdout
    done, total = progress[-1]
    assert total > 0 and done == total, progress
    assert h.docker("GET", f"/images/{quote(ref, safe='')}/json")[1]["Id"] == want
    assert f'AUDIT uid={h.uid_of(MEMBER)} verb=pull' in mark.new() and "outcome=ok" in mark.new()


def test_json_and_pinned_digest(stack, registries):
    """--json prints the id alone; a reference pinned by its manifest's digest pulls the
    same image, and a digest the registry does not have is NoSuchImage."""
    ref = registries["small"]
    r = ctl(stack, MEMBER, "--json", "pull", ref)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout) == {"image_id": registries["ids"]["small"]}
    digest = [d for d in h.docker("GET", f"/images/{quote(ref, safe='')}/json")[1]["RepoDigests"]
              if d.startswith(ref.rsplit(":", 1)[0] + "@")][0].split("@")[1]
    pinned = ref.rsplit(":", 1)[0] + "@" + digest
    assert pull_ok(registries, pinned) == registries["ids"]["small"]
    missing = ref.rsplit(":", 1)[0] + "@sha256:" + "0" * 64
    assert missing in registries_error(registries, missing, NO_SUCH_IMAGE)


def pull_ok(registries, ref):
    return pull(registries["sandboxd"], MEMBER, ref).result[0]


def registries_error(registries, ref, *names, user=MEMBER):
    return pull(registries["sandboxd"], user, ref).error(*names)


def test_outsider_refused(registries):
    registries_error(registries, registries["small"], *h.DENIED, user=OTHER)


def test_unlisted_registry_refused(registries):
    ref = f"127.0.0.1:{free_port()}/{REPO}/small:1"
    msg = registries_error(registries, ref, h.POLICY_VIOLATION)
    assert "not in the host policy's registries" in msg and ref.split("/")[0] in msg


def test_image_not_allowed(registries):
    ref = f"{registries['good'].host}/elsewhere/small:1"
    assert "allowed_images" in registries_error(registries, ref, h.POLICY_VIOLATION)


def test_certificate_from_another_ca(registries):
    ref = f"{registries['other_ca'].host}/{REPO}/small:1"
    msg = registries_error(registries, ref, UNTRUSTED)
    assert "not signed by the CA of the host policy" in msg and registries["other_ca"].host in msg


def test_certificate_for_another_name(registries):
    ref = f"{registries['wrong_name'].host}/{REPO}/small:1"
    msg = registries_error(registries, ref, UNTRUSTED)
    assert f"does not name {registries['wrong_name'].host}" in msg


def test_missing_image(registries):
    ref = f"{registries['good'].host}/{REPO}/nothing:1"
    assert "is not in registry" in registries_error(registries, ref, NO_SUCH_IMAGE)


def test_image_over_max_image_mib(registries):
    """5 MiB of random bytes do not compress: refused from the manifest, nothing pulled."""
    msg = registries_error(registries, registries["big"], h.POLICY_VIOLATION)
    assert "max_image_mib" in msg
    assert not h.docker_image_exists(registries["ids"]["big"])


def test_create_with_pull_missing(registries, cleanup):
    """Without the option, an image the host lacks fails the create; with pull
    "missing" it is pulled (through the same checks) and the sandbox made from it."""
    ref = registries["small"]
    h.docker_remove_image(ref)
    sandboxd = registries["sandboxd"]
    name = cleanup.sandbox(h.unique("pull"))
    sandboxd.create(MEMBER, name, h.spec(image=ref)).error(h.ERR + "BackendError")
    bad = cleanup.sandbox(h.unique("pull"))
    sandboxd.create(MEMBER, bad, h.spec(image=ref), {"pull": ["s", "sometimes"]}).error(h.INVALID_ARGS)
    sandboxd.create(MEMBER, name, h.spec(image=ref), {"pull": ["s", "missing"]}).result
    assert h.docker("GET", f"/images/{quote(ref, safe='')}/json")[1]["Id"] == registries["ids"]["small"]
    assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "running"


def test_ctl_ensure_pull_missing(stack, registries, cleanup):
    """xagent-sandboxctl ensure --pull missing: the same through the client."""
    ref = registries["small"]
    h.docker_remove_image(ref)
    name = cleanup.sandbox(h.unique("ctlpull"))
    r = ctl(stack, MEMBER, "ensure", name, "--image", ref, "--pull", "missing")
    assert r.returncode == 0 and "outcome: created" in r.stdout, r.stdout + r.stderr
    assert h.docker_image_exists(ref)
    r = ctl(stack, MEMBER, "create", name + "x", "--image", ref, "--pull", "often")
    assert r.returncode == 2 and "--pull: 'often' is neither never nor missing" in r.stderr, r.stderr


def test_python_client_pull(stack, registries):
    """xagent_sandbox.pull_image, and its typed exceptions."""
    lib = os.path.join(stack.tmp, "pull-pylib")
    if not os.path.isdir(lib):
        shutil.copytree(os.path.join(h.SOURCE_ROOT, "python", "xagent_sandbox"), os.path.join(lib, "xagent_sandbox"))
        for dirpath, _, _ in os.walk(lib):
            os.chmod(dirpath, 0o755)
    missing = f"{registries['good'].host}/{REPO}/nothing:1"
    code = (f"import xagent_sandbox as xs\nprint(xs.pull_image({registries['small']!r}))\n"
            f"try:\n    xs.pull_image({missing!r})\nexcept xs.NoSuchImage as e:\n    print('NoSuchImage', e.name)\n")
    r = stack.run_as(MEMBER, ["/usr/bin/env", f"PYTHONPATH={lib}", "/usr/bin/python3", "-c", code], timeout=180)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [registries["ids"]["small"], "NoSuchImage " + NO_SUCH_IMAGE], r.stdout


def test_progress_goes_to_the_caller_alone(stack, registries):
    """Another connection of the same user, subscribed and known to the service (it
    called it), hears none of a pull's PullProgress; the caller hears them."""
    ref = registries["small"]
    h.docker_remove_image(ref)
    listener = stack.spawn_as(MEMBER, ["/usr/bin/python3", "-c", LISTENER])
    try:
        assert listener.stdout.readline().strip() == "ready"
        r = ctl(stack, MEMBER, "pull", ref)
        assert r.returncode == 0 and "progress: " in r.stdout, r.stdout + r.stderr
        listener.stdin.write("done\n")
        listener.stdin.flush()
        heard = listener.stdout.readline().strip()
    finally:
        listener.kill()
        listener.wait()
    assert heard == "heard 0", heard


# A second connection: calls the service once (so that it is known), subscribes to
# PullProgress, and counts what reaches it until told "done".
LISTENER = """
import sys
import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
manager = dbus.Interface(bus.get_object("org.xagent.Sandbox1", "/org/xagent/Sandbox1"),
                         "org.xagent.Sandbox1.Manager")
manager.GetPolicy()
heard = []
bus.add_signal_receiver(lambda *a: heard.append(a), signal_name="PullProgress",
                        dbus_interface="org.xagent.Sandbox1.Manager")
loop = GLib.MainLoop()
def on_stdin(*_):
    sys.stdin.readline()
    loop.quit()
    return False
GLib.io_add_watch(sys.stdin, GLib.IO_IN, on_stdin)
print("ready", flush=True)
loop.run()
print("heard", len(heard), flush=True)
"""


def test_progress_bar_on_a_terminal(stack, registries):
    """On a terminal, the progress is a bar redrawn in place, ending full."""
    ref = registries["small"]
    h.docker_remove_image(ref)
    ctl_path = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    status, screen = stack.run_on_terminal(MEMBER, [ctl_path, "pull", ref], b"", prompts=(), timeout=180)
    assert status == 0, screen
    assert f"{ref} [{'#' * 30}] 100%" in screen and "progress: " not in screen, screen
    assert f"image_id: {registries['ids']['small']}" in screen, screen
