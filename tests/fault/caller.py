# SPDX-License-Identifier: LGPL-2.1-or-later
"""A long-lived python3-dbus caller, run AS a test user (runuser) next to tests/e2e's
client.py (whose typed-argument conversion it uses): many calls in flight at once, each on
a fresh connection of its own (so polkit is asked for each: no cached answer of an earlier
connection applies), timed here.

stdin: one JSON object per line
    {"id": N, "dest": ..., "path": ..., "iface": ..., "method": ..., "sig": ..., "args": [...],
     "timeout": SECONDS}
stdout: one JSON object per answer, in the order they come
    {"id": N, "ok": true, "result": [...], "elapsed": S}  or
    {"id": N, "ok": false, "error": NAME, "message": TEXT, "elapsed": S}
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dbus  # noqa: E402
import dbus.lowlevel  # noqa: E402

import client  # noqa: E402

_out = threading.Lock()


def _answer(obj):
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def _call(req):
    t0 = time.monotonic()
    try:
        conn = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    except dbus.exceptions.DBusException as e:
        _answer({"id": req["id"], "ok": False, "error": e.get_dbus_name(),
                 "message": e.get_dbus_message(), "elapsed": time.monotonic() - t0})
        return
    try:
        out = client.call(conn, req["dest"], req["path"], req["iface"], req["method"],
                          req.get("sig", ""), req.get("args", []),
                          timeout=req.get("timeout", 60))
    except Exception as e:      # a bad argument: the test's own mistake, reported
        out = {"ok": False, "error": "caller." + type(e).__name__, "message": str(e)}
    finally:
        conn.close()
    out["id"] = req["id"]
    out["elapsed"] = time.monotonic() - t0
    _answer(out)


def main():
    print(json.dumps({"ready": True, "uid": os.getuid()}), flush=True)
    for line in sys.stdin:
        if line.strip():
            threading.Thread(target=_call, args=(json.loads(line),), daemon=True).start()
    # stdin closed: let the calls in flight finish
    for t in threading.enumerate():
        if t is not threading.current_thread():
            t.join(timeout=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
