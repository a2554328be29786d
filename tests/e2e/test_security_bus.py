# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bus front end tells nobody what they may not read, and one user's load does not
refuse or stall another's (docs/security.md): polkit's details name a snapshot
template as a snapshot, signals reach only who may read them, the ObjectManager and
introspection list only the caller's own objects, reads and state changes have shares
of their own, and a slow read does not hold up another user's reads."""

import json
import os
import threading
import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT


def install_rule(stack, file_name, body):
    path = os.path.join(stack.tmp, "polkit", "etc-rules.d", file_name)
    with open(path, "w") as f:
        f.write(body)
    return path


# ---- polkit's details: a snapshot is no image -----------------------------------------

def test_an_image_prefix_rule_does_not_match_a_snapshot_named_like_one(stack, sandboxd, cleanup):
    """The README's example rule keys on the image prefix: a snapshot whose id starts
    with that prefix is passed as "snapshot", never as "image", so the rule does not
    grant it; an image create is still keyed on "image"."""
    src = cleanup.sandbox(h.unique("src"))
    sandboxd.create(MEMBER, src, h.spec()).result
    sid = cleanup.snapshot("acc/" + h.unique("evil"))
    sandboxd.snapshot(MEMBER, src, sid).result
    rule = install_rule(stack, "10-test-image-prefix.rules",
                        'polkit.addRule(function(action, subject) {\n'
                        '    if (action.id == "org.xagent.sandbox1.create" && subject.user == "sbx-member") {\n'
                        '        var image = action.lookup("image");\n'
                        '        if (image && image.indexOf("acc/") == 0) return polkit.Result.YES;\n'
                        '        return polkit.Result.NO;\n'
                        '    }\n'
                        '});\n')
    try:
        refused = h.unique("refused")
        h.wait_until(lambda: sandboxd.create(MEMBER, refused, h.spec())["error"] == h.ACCESS_DENIED,
                     10, what="polkitd to load the rule")
        # An image under the prefix passes polkit (and fails later: no such image here).
        r = sandboxd.create(MEMBER, cleanup.sandbox(h.unique("img")), h.spec(image="acc/absent:1"))
        assert r.get("error") != h.ACCESS_DENIED, r
        # The snapshot named like one does not.
        child = cleanup.sandbox(h.unique("child"))
        r = sandboxd.create(MEMBER, child, h.spec(image=None, snapshot=sid))
        assert r.get("error") == h.ACCESS_DENIED, r
        assert h.docker_containers_labelled(child) == []
    finally:
        os.unlink(rule)
