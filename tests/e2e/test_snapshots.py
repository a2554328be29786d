# SPDX-License-Identifier: LGPL-2.1-or-later
"""Snapshots as xagent and Docker see them (docs/lifecycle.md, "Snapshot and
delete-snapshot"): the committed image starts without the service (its own image's
entrypoint, command and user, not the service's first process); a sandbox the service
makes from a snapshot carries the snapshot's tag as Config.Image, as xagent's own create
does, so xagent's publish check passes, while it runs the image recorded with the
snapshot; and a container made from the tag outside the service is nobody's sandbox:
not listed, and left alone when the daemon starts again."""

import time
from urllib.parse import quote

import sandbox_helpers as h
from sandbox_helpers import MEMBER, ROOT

MIB = 1024 * 1024


def create_direct(cleanup, name, body):
    """POST /containers/create + start with Docker directly (as root or xagent would)."""
    status, data = h.docker("POST", "/containers/create?name=" + quote(name), body)
    assert status == 201, data
    cid = cleanup.container(data["Id"])
    status, data = h.docker("POST", f"/containers/{cid}/start")
    assert status == 204, data
    return cid


def xagent_body(ref, name, sid):
    """What xagent's DockerSandboxService creates from a snapshot template (contract §9):
    its command, as root, with its labels; no entrypoint."""
    return {
        "Image": ref, "Cmd": ["tail", "-f", "/dev/null"], "User": "root", "WorkingDir": "/home",
        "HostConfig": {"NanoCpus": 1_000_000_000, "Memory": 512 * MIB,
                       "SecurityOpt": ["no-new-privileges:true"]},
        "Labels": {"xagent.managed": "true", "xagent.sandbox.name": name,
                   "xagent.sandbox.template.type": "snapshot", "xagent.sandbox.snapshot_id": sid,
                   "xagent.sandbox.spec.fingerprint": "", "xagent.sandbox.spec.version": ""},
    }


def xagent_publish_mismatches(d, resolved_image, spec):
    """xagent's _find_publish_mismatches (contract §6) over Docker's inspect."""
    c, hc = d["Config"], d["HostConfig"]
    vols = {(m["Source"], m["Destination"], "rw" if m.get("RW") else "ro")
            for m in d.get("Mounts") or [] if m.get("Type") == "bind"}
    ports = set()
    for key, binds in (hc.get("PortBindings") or {}).items():
        for b in binds or []:
            if b.get("HostPort"):
                ports.add((int(b["HostPort"]), int(key.split("/", 1)[0])))
    out = []
    if c.get("Image") != resolved_image:
        out.append("image")
    if vols != set(spec["volumes"]):
        out.append("volumes")
    if ports != set(spec["ports"]):
        out.append("ports")
    if c.get("WorkingDir") != spec["working_dir"]:
        out.append("working_dir")
    if bool(c.get("NetworkDisabled")) != spec["network_isolated"]:
        out.append("network_isolated")
    if (hc.get("NanoCpus") or 0) != spec["cpus"] * 1_000_000_000:
        out.append("cpus")
    if (hc.get("Memory") or 0) != spec["memory"] * MIB:
        out.append("memory")
    return out


def test_snapshot_image_starts_as_xagent_starts_it(sandboxd, cleanup):
    """root's snapshot tag is xagent's: its create from a snapshot template (and a plain
    run) starts and runs; the image has its own image's entrypoint, command and user, and
    no label of this service's or xagent's."""
    src = cleanup.sandbox(h.unique("src"))
    sandboxd.create(ROOT, src, h.spec()).result
    sid = cleanup.snapshot(h.unique("snap"))
    image_id = sandboxd.snapshot(ROOT, src, sid).result[0]
    ref = h.snapshot_ref(sid)

    status, img = h.docker("GET", f"/images/{quote(ref, safe='')}/json")
    assert status == 200 and img["Id"] == image_id
    assert not img["Config"].get("Entrypoint")
    assert img["Config"]["Cmd"] == ["/bin/sh"]          # the test image's own
    assert img["Config"]["User"] == "0"
    labels = img["Config"]["Labels"]
    for key in ("xagent.managed", "xagent.sandbox.name", "xagent.sandbox.service", "xagent.sandbox.owner",
                "xagent.sandbox.spec.fingerprint", "xagent.sandbox.spec.version",
                "xagent.sandbox.template.type"):
        assert labels.get(key, "") == "", (key, labels)

    xname = cleanup.sandbox(h.unique("xagent"))
    xid = create_direct(cleanup, h.container_name(xname), xagent_body(ref, xname, sid))
    plain_id = create_direct(cleanup, h.unique("plain"), {"Image": ref, "Cmd": ["sleep", "300"]})
    for cid in (xid, plain_id):
        d = h.docker_inspect(cid)
        assert d["State"]["Running"], d["State"]
        assert d["Image"] == image_id

    # xagent's container is root's (no service label, no owner), listed as its own
    listed = sandboxd.list(ROOT)
    assert listed[xname][1] == 0 and listed[xname][3] == h.object_path(xname)


def test_sandbox_from_snapshot_passes_xagents_publish_check(sandboxd, cleanup):
    """A sandbox the service makes from a snapshot: Config.Image is the snapshot's tag (what
    xagent resolves a snapshot template to), the image it runs is the one recorded, the
    service verifies it as match and xagent's publish check finds nothing."""
    for user in (ROOT, MEMBER):
        owner = None if user == ROOT else user
        src = cleanup.sandbox(h.unique("src"))
        sandboxd.create(user, src, h.spec()).result
        sid = cleanup.snapshot(h.unique("snap"))
        image_id = sandboxd.snapshot(user, src, sid).result[0]
        assert sandboxd.list_snapshots(user)[sid][1] == image_id

        child = cleanup.sandbox(h.unique("child"))
        desired = h.spec(image=None, snapshot=sid)
        sandboxd.create(user, child, desired).result
        ins = sandboxd.inspect(user, child).result[0]
        assert ins["verdict"] == "match" and ins["hardened"] is True
        assert ins["image_ref"] == h.snapshot_ref(sid, owner)
        assert ins["image_id"] == image_id
        assert sandboxd.verify(user, child, desired).result[0] == "match"

        d = h.docker_inspect(ins["container_id"])
        assert d["Config"]["Image"] == h.snapshot_ref(sid, owner) and d["Image"] == image_id
        assert xagent_publish_mismatches(d, h.snapshot_ref(sid, owner), {
            "volumes": [], "ports": [], "working_dir": "/home", "network_isolated": False,
            "cpus": 1, "memory": 512}) == []

        sandboxd.delete(user, child).result
        sandboxd.delete(user, src).result
        sandboxd.delete_snapshot(user, sid).result


def test_moved_tag(sandboxd, cleanup):
    """The snapshot's tag moved to another image since it was made (xagent's own snapshot
    of the id does that): the sandbox runs the image recorded, made from its id."""
    src = cleanup.sandbox(h.unique("src"))
    sandboxd.create(MEMBER, src, h.spec()).result
    sid = cleanup.snapshot(h.unique("snap"))
    image_id = sandboxd.snapshot(MEMBER, src, sid).result[0]
    ref = h.snapshot_ref(sid, MEMBER)
    repo, tag = ref.rsplit(":", 1)
    status, data = h.docker("POST", f"/images/{quote(h.TEST_IMAGE, safe='')}/tag?repo={repo}&tag={tag}")
    assert status == 201, data

    child = cleanup.sandbox(h.unique("child"))
    sandboxd.create(MEMBER, child, h.spec(image=None, snapshot=sid)).result
    ins = sandboxd.inspect(MEMBER, child).result[0]
    assert ins["image_id"] == image_id and ins["image_ref"] == image_id
    assert ins["verdict"] == "match"
    sandboxd.delete(MEMBER, child).result
    sandboxd.delete_snapshot(MEMBER, sid).result
    status, _ = h.docker("GET", f"/images/{image_id}/json")
    assert status == 404
    h.docker("DELETE", f"/images/{quote(ref, safe='')}")      # the moved tag only


def test_containers_from_a_snapshot_outside_the_service(stack, sandboxd, cleanup):
    """Containers made from a snapshot's tag with Docker directly (by root; as xagent's own
    service does with root's snapshots; and one from an older snapshot that still carried
    this service's label, the source's name label and a blank owner) survive a daemon
    restart, none is listed as another user's sandbox, and what happens to them is not
    what happens to the member's sandbox of that name."""
    src = cleanup.sandbox(h.unique("src"))
    sandboxd.create(MEMBER, src, h.spec()).result
    sid = cleanup.snapshot(h.unique("snap"))
    sandboxd.snapshot(MEMBER, src, sid).result
    ref = h.snapshot_ref(sid, MEMBER)

    plain_id = create_direct(cleanup, h.unique("plain"), {"Image": ref, "Cmd": ["sleep", "300"]})
    xname = cleanup.sandbox(h.unique("xagent"))
    xid = create_direct(cleanup, h.container_name(xname), xagent_body(ref, xname, sid))
    # as an image committed before the labels were blanked made it: the member's source
    # sandbox's name label, this service's label, a blank owner
    old_labels = {"xagent.managed": "true", "xagent.sandbox.service": h.service_id(stack.state_dir),
                  "xagent.sandbox.owner": "", "xagent.sandbox.spec.fingerprint": "",
                  "xagent.sandbox.spec.version": ""}
    old = cleanup.sandbox(h.unique("old"))
    old_id = create_direct(cleanup, h.unique("old"), {
        "Image": h.TEST_IMAGE, "Cmd": ["sleep", "300"],
        "Labels": dict(old_labels, **{"xagent.sandbox.name": h.qualified(old, MEMBER)})})
    twin_id = create_direct(cleanup, h.unique("twin"), {
        "Image": h.TEST_IMAGE, "Cmd": ["sleep", "300"],
        "Labels": dict(old_labels, **{"xagent.sandbox.name": h.qualified(src, MEMBER)})})

    for restarted in (False, True):
        if restarted:
            stack.stop_daemon()
            sandboxd.list(ROOT)                                      # activates; it reconciles
            time.sleep(3)
        everyone = sandboxd.list(ROOT)
        assert old not in everyone and h.qualified(old, MEMBER) not in everyone
        assert old not in sandboxd.list(MEMBER)
        assert xname in everyone and everyone[xname][1] == 0        # xagent's: root's
        assert xname not in sandboxd.list(MEMBER)
        assert h.object_path(old, MEMBER) not in [p for _, _, _, p in everyone.values()]
        assert sorted(p for _, _, _, p in everyone.values()).count(h.object_path(src, MEMBER)) == 1
        sandboxd.inspect(MEMBER, old).error(h.NO_SUCH_SANDBOX)
        sandboxd.delete(MEMBER, old).result                          # nothing of the member's
        for cid in (plain_id, xid, old_id, twin_id):
            assert h.docker_inspect(cid)["State"]["Running"]

    # the twin dies and goes: the member's sandbox of that name is not it (no signal
    # about it; the removal of root's xagent-made one, which root hears, shows the events
    # arrived: signals are for who may read them, docs/api.md)
    listener = h.Listener(stack, ROOT)
    try:
        h.docker("POST", f"/containers/{twin_id}/kill")
        h.docker_remove_container(twin_id)
        h.docker_remove_container(xid)
        signals = listener.wait_for(
            lambda sigs: any(x["member"] == "SandboxRemoved" and x["args"][0] == xname for x in sigs))
    finally:
        signals = listener.close()
    path = h.object_path(src, MEMBER)
    assert not [x for x in signals if x["path"] == path or x["args"][1:2] == [path]], signals
    props = sandboxd.properties(MEMBER, src, owner=MEMBER).result[0]
    assert props["State"] == "running", props
    assert src in sandboxd.list(MEMBER)
    # the member's own sandbox and snapshot are untouched
    assert sandboxd.inspect(MEMBER, src).result[0]["verdict"] == "match"
    assert sid in sandboxd.list_snapshots(MEMBER)
