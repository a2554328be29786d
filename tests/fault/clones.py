# SPDX-License-Identifier: LGPL-2.1-or-later
"""Many sandboxes fast, for the scale test and bench/bench-scale.py: clones of one
sandbox made through the service, created (not started) through the raw API of the
private dockerd in parallel, each with its store row copied from the original's (the
daemon stopped meanwhile: the store is written directly)."""

import concurrent.futures
import sqlite3
import urllib.parse

import fault as F


def clone_body(info, new_qualified, old_qualified, old_name, new_name):
    config = dict(info["Config"])
    labels = dict(config.get("Labels") or {})
    for k, v in labels.items():
        if v == old_qualified:
            labels[k] = new_qualified
    config["Labels"] = labels
    if config.get("Hostname") == old_name:
        config["Hostname"] = new_name
    body = dict(config)
    body["HostConfig"] = info["HostConfig"]
    return body


def make_clones(f, orig, user, n, first=0):
    """Clones orig-FIRST … orig-(FIRST+n-1) of user's sandbox orig: [(name, container id)]."""
    (orig_id,) = f.containers_of(orig, user)
    info = f.docker.ok("GET", f"/containers/{orig_id}/json")
    old_q = F.qualified(orig, user)
    names = [f"{orig}-{i}" for i in range(first, first + n)]

    def one(name):
        body = clone_body(info, F.qualified(name, user), old_q, orig, name)
        path = "/containers/create?name=" + urllib.parse.quote(F.container_name(name, user))
        return name, f.docker.ok("POST", path, body)["Id"]

    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        made = list(ex.map(one, names))
    conn = sqlite3.connect(f.db_path, timeout=10)
    try:
        cur = conn.execute("SELECT * FROM sandboxes WHERE name = ?", (old_q,))
        cols = [d[0] for d in cur.description]
        row = dict(zip(cols, cur.fetchone()))
        for name, new_id in made:
            r = dict(row, name=F.qualified(name, user), container_id=new_id, state="stopped")
            conn.execute(f"INSERT INTO sandboxes ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                         [r[c] for c in cols])
        conn.commit()
    finally:
        conn.close()
    return made


def remove_clones(f, made):
    """Removes the clones' containers (their rows go with the next reconciliation)."""
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda m: f.docker.api("DELETE", f"/containers/{m[1]}?force=1"), made))
