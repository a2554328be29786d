# SPDX-License-Identifier: LGPL-2.1-or-later
"""The authorization matrix through the real polkitd (no session, no agent here):
the owner, another user, a group member, a non-member, root, polkit gone; with the
ALLOW_INTERACTIVE_AUTHORIZATION header flag off and on."""

import pytest

import sandbox_helpers as h
import stack as e2e
from sandbox_helpers import MEMBER, OTHER, ROOT


@pytest.fixture(scope="module")
def members_sandbox(stack, sandboxd):
    """One running sandbox of sbx-member's for the refusals below (which change nothing);
    removed after the module."""
    c = h.Cleanup(sandboxd)
    name = c.sandbox(h.unique("owned"))
    sandboxd.create(MEMBER, name, h.spec()).result
    yield name
    c.run()


def intact(sandboxd, name):
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["state"] == "running" and ins["verdict"] == "match"
    assert ins["owner"] == h.uid_of(MEMBER)


# Every by-name verb of the Manager, and the object's own methods.
MANAGER_VERBS = {
    "GetSandbox": ("s", lambda n: [n]),
    "InspectSandbox": ("s", lambda n: [n]),
    "VerifySandbox": ("sa{sv}", lambda n: [n, h.spec()]),
    "StartSandbox": ("s", lambda n: [n]),
    "StopSandbox": ("sa{sv}", lambda n: [n, {"timeout": ["u", 0]}]),
    "SnapshotSandbox": ("ss", lambda n: [n, h.unique("stolen")]),
    "DeleteSandbox": ("s", lambda n: [n]),
}
OBJECT_VERBS = {
    "Inspect": ("", []),
    "Verify": ("a{sv}", [h.spec()]),
    "Start": ("", []),
    "Stop": ("a{sv}", [{}]),
    "Snapshot": ("s", [h.unique("stolen")]),
    "Delete": ("", []),
}


def answer(r):
    """A reply as an outsider sees it: its error name, and its message with the name
    left out."""
    return (r["ok"], r.get("error"), (r.get("message") or "").split(":")[0])


@pytest.mark.parametrize("verb", sorted(MANAGER_VERBS))
def test_other_users_names_are_their_own(sandboxd, members_sandbox, verb):
    """By name, sbx-other acts in its own namespace: sbx-member's sandbox is not there,
    and a name sbx-member has answers exactly like a name nobody has (nothing is looked
    up before polkit has said yes)."""
    sig, args = MANAGER_VERBS[verb]
    free = h.unique("free")
    for interactive in (False, True):
        taken = sandboxd.call(OTHER, verb, sig, args(members_sandbox), interactive=interactive)
        nobodys = sandboxd.call(OTHER, verb, sig, args(free), interactive=interactive)
        assert answer(taken) == answer(nobodys), (taken, nobodys)
        assert not taken["ok"] or verb == "DeleteSandbox"
    intact(sandboxd, members_sandbox)


@pytest.mark.parametrize("verb", sorted(OBJECT_VERBS))
def test_other_user_is_refused_on_the_object(sandboxd, members_sandbox, verb):
    sig, args = OBJECT_VERBS[verb]
    path = h.object_path(members_sandbox, MEMBER)
    r = sandboxd.call(OTHER, verb, sig, args, path=path, iface=h.SANDBOX, interactive=False)
    assert "manage-others" in r.error(h.INTERACTIVE)
    r = sandboxd.call(OTHER, verb, sig, args, path=path, iface=h.SANDBOX, interactive=True)
    assert "manage-others" in r.error(h.ACCESS_DENIED)
    intact(sandboxd, members_sandbox)


def test_other_user_cannot_read_the_objects_properties(sandboxd, members_sandbox):
    sandboxd.properties(OTHER, members_sandbox, owner=MEMBER).error(h.ACCESS_DENIED)
    r = sandboxd.call(OTHER, "Get", "ss", [h.SANDBOX, "Image"],
                      path=h.object_path(members_sandbox, MEMBER), iface=h.PROPERTIES)
    r.error(h.ACCESS_DENIED)
    # The owner and root can; the name is the owner's own.
    props = sandboxd.properties(MEMBER, members_sandbox, owner=MEMBER).result[0]
    assert props["Image"] == h.TEST_IMAGE and props["Name"] == members_sandbox
    assert props["Owner"] == h.uid_of(MEMBER)
    assert sandboxd.properties(ROOT, members_sandbox, owner=MEMBER).result[0]["Image"] == h.TEST_IMAGE


def test_other_user_refusals_through_busctl_and_gdbus(sandboxd, members_sandbox):
    # busctl asks for interactive authorization by default: no agent → access denied.
    code, _, err = sandboxd.busctl(OTHER, "DeleteSandbox", "s", members_sandbox)
    assert code != 0 and "Access denied" in err, err
    code, _, err = sandboxd.busctl(OTHER, "DeleteSandbox", "s", members_sandbox,
                                   interactive=False)
    assert code != 0 and "Interactive authentication required" in err, err
    # gdbus only with --interactive.
    code, _, err = sandboxd.gdbus(OTHER, "DeleteSandbox", members_sandbox)
    assert code != 0 and h.gdbus_error(err) == h.INTERACTIVE, err
    code, _, err = sandboxd.gdbus(OTHER, "DeleteSandbox", members_sandbox, interactive=True)
    assert code != 0 and h.gdbus_error(err) == h.ACCESS_DENIED, err
    intact(sandboxd, members_sandbox)


def test_group_member_needs_no_session(sandboxd, cleanup):
    """sbx-member is in xagent-sandbox: YES for create/manage/inspect of its own,
    without any session, without the interactive flag."""
    name = cleanup.sandbox(h.unique("member"))
    sandboxd.create(MEMBER, name, h.spec(), interactive=False).result
    sandboxd.inspect(MEMBER, name, interactive=False).result
    sandboxd.stop(MEMBER, name, timeout=0, interactive=False).result
    sandboxd.start(MEMBER, name, interactive=False).result
    sid = cleanup.snapshot(h.unique("snap"))
    sandboxd.snapshot(MEMBER, name, sid, interactive=False).result
    sandboxd.delete(MEMBER, name, interactive=False).result
    sandboxd.delete_snapshot(MEMBER, sid, interactive=False).result


def test_non_member_create(sandboxd, cleanup):
    """sbx-other, no session: create is auth_admin_keep → a challenge."""
    name = cleanup.sandbox(h.unique("nonmember"))
    r = sandboxd.create(OTHER, name, h.spec(), interactive=False)
    assert "org.xagent.sandbox1.create" in r.error(h.INTERACTIVE)
    r = sandboxd.create(OTHER, name, h.spec(), interactive=True)
    assert "org.xagent.sandbox1.create" in r.error(h.ACCESS_DENIED)
    code, _, err = sandboxd.gdbus(OTHER, "CreateSandbox", name,
                                  "{'image': <'%s'>}" % h.TEST_IMAGE, "@a{sv} {}")
    assert h.gdbus_error(err) == h.INTERACTIVE, err
    assert h.docker_containers_labelled(name) == []
    # Reading (inspect) needs no more than yes: an empty list, not a refusal.
    assert name not in sandboxd.list(OTHER)


def test_non_member_reads_need_only_inspect(sandboxd):
    """inspect is yes for everyone: sbx-other's look-up of a missing name is
    NoSuchSandbox, not a refusal."""
    sandboxd.inspect(OTHER, h.unique("none")).error(h.NO_SUCH_SANDBOX)
    # A state change is authorized before anything is looked up, even for nothing.
    sandboxd.delete(OTHER, h.unique("none"), interactive=False).error(h.INTERACTIVE)


def test_root_may_do_everything(sandboxd, cleanup):
    """root reaches another user's sandbox through its object; by name it acts in its
    own namespace, where the member's sandbox is not."""
    name = cleanup.sandbox(h.unique("rootly"))
    sandboxd.create(MEMBER, name, h.spec()).result
    sandboxd.get(ROOT, name).error(h.NO_SUCH_SANDBOX)
    assert sandboxd.list(ROOT)[name][3] == h.object_path(name, MEMBER)
    assert sandboxd.inspect(ROOT, name, owner=MEMBER).result[0]["owner"] == h.uid_of(MEMBER)
    assert sandboxd.verify(ROOT, name, h.spec(), owner=MEMBER).result == ["match", []]
    sandboxd.stop(ROOT, name, timeout=0, owner=MEMBER).result
    sandboxd.start(ROOT, name, owner=MEMBER).result
    sid = cleanup.snapshot(h.unique("snap"))
    sandboxd.snapshot(ROOT, name, sid, owner=MEMBER).result
    # The snapshot belongs to whoever took it: root.
    assert sandboxd.list_snapshots(ROOT)[sid][2] == 0
    assert sid not in sandboxd.list_snapshots(MEMBER)
    sandboxd.delete(ROOT, name, owner=MEMBER).result
    sandboxd.delete_snapshot(ROOT, sid).result

    # Root's own sandbox is root's; its first process is the init, as for everyone.
    mine = cleanup.sandbox(h.unique("rootown"))
    sandboxd.create(ROOT, mine, h.spec()).result
    ins = sandboxd.inspect(ROOT, mine).result[0]
    assert ins["owner"] == 0 and ins["user"] == "65534:65534" and ins["hardened"] is True
    assert mine not in sandboxd.list(MEMBER)
    sandboxd.inspect(MEMBER, mine).error(h.NO_SUCH_SANDBOX)     # not in the member's names
    sandboxd.delete(ROOT, mine).result


def test_snapshot_ownership(sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("snapsrc"))
    sandboxd.create(MEMBER, name, h.spec()).result
    sid = cleanup.snapshot(h.unique("snap"))
    sandboxd.snapshot(MEMBER, name, sid).result

    # sbx-other may not create at all without an agent: refused before the snapshot is
    # even looked at (the next test covers a creator who may create).
    thief = cleanup.sandbox(h.unique("thief"))
    sandboxd.create(OTHER, thief, h.spec(image=None, snapshot=sid),
                    interactive=False).error(h.INTERACTIVE)
    sandboxd.create(OTHER, thief, h.spec(image=None, snapshot=sid),
                    interactive=True).error(h.ACCESS_DENIED)
    # Root may create anything, but a snapshot is a template for its owner only.
    sandboxd.create(ROOT, cleanup.sandbox(h.unique("rootthief")),
                    h.spec(image=None, snapshot=sid)).error(h.NO_SUCH_SNAPSHOT)
    # ... nor delete it: the id is the member's, not the other's or root's.
    sandboxd.delete_snapshot(OTHER, sid, interactive=False).error(h.INTERACTIVE)
    sandboxd.delete_snapshot(ROOT, sid).result
    assert h.docker_image_exists(h.snapshot_ref(sid, MEMBER))
    assert sid in sandboxd.list_snapshots(MEMBER)
    sandboxd.delete(MEMBER, name).result
    sandboxd.delete_snapshot(MEMBER, sid).result


def test_snapshot_of_another_user_is_no_such_snapshot_for_a_creator(stack, sandboxd, cleanup):
    """A user who may create (root made a snapshot; sbx-member may create) cannot build
    from someone else's snapshot: NoSuchSnapshot, as if it did not exist."""
    src = cleanup.sandbox(h.unique("rootsrc"))
    sandboxd.create(ROOT, src, h.spec()).result
    sid = cleanup.snapshot(h.unique("rootsnap"))
    sandboxd.snapshot(ROOT, src, sid).result
    thief = cleanup.sandbox(h.unique("thief"))
    sandboxd.create(MEMBER, thief, h.spec(image=None, snapshot=sid)).error(h.NO_SUCH_SNAPSHOT)
    assert h.docker_containers_labelled(thief) == []
    # The member's own namespace has no such snapshot: deleting it deletes nothing.
    sandboxd.delete_snapshot(MEMBER, sid, interactive=False).result
    assert h.docker_image_exists(h.snapshot_ref(sid))
    sandboxd.delete(ROOT, src).result
    sandboxd.delete_snapshot(ROOT, sid).result


def test_polkit_unreachable_means_deny(stack, sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("nopolkit"))
    sandboxd.create(MEMBER, name, h.spec()).result
    pid = sandboxd.pid()
    stack.stop_polkit()
    try:
        assert not stack.name_has_owner(e2e.POLKIT_NAME)
        for interactive in (False, True):
            sandboxd.create(MEMBER, cleanup.sandbox(h.unique("denied")), h.spec(),
                            interactive=interactive).error(h.ACCESS_DENIED)
            sandboxd.inspect(MEMBER, name, interactive=interactive).error(h.ACCESS_DENIED)
            sandboxd.delete(MEMBER, name, interactive=interactive).error(h.ACCESS_DENIED)
            sandboxd.stop(MEMBER, name, timeout=0, interactive=interactive).error(h.ACCESS_DENIED)
        # Root is not asked about.
        assert sandboxd.inspect(ROOT, name, owner=MEMBER).result[0]["state"] == "running"
        assert sandboxd.pid() == pid
    finally:
        stack.start_polkit()
    # Back: allowed again.
    sandboxd.inspect(MEMBER, name).result
    sandboxd.delete(MEMBER, name).result

