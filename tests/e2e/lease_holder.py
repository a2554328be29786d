# SPDX-License-Identifier: LGPL-2.1-or-later
"""A lease holder, run AS a test user (runuser) against $DBUS_SYSTEM_BUS_ADDRESS: one
connection that takes leases and keeps their descriptors, makes calls on the same
connection, and collects the LeaseRevoked signals sent to it. One JSON command per
stdin line, one JSON line answered per command:

  ["call", PATH, IFACE, METHOD, SIG, ARGS]   a call on this connection (as client.py's)
  ["acquire", PATH, IFACE, METHOD, SIG, ARGS]
                                             the same, keeping the reply's descriptor:
                                             {"ok": true, "result": {"lease": INDEX}}
  ["close", INDEX]                           closes that descriptor
  ["revoked", INDEX]                         whether the service closed its end
                                             (POLLERR on ours): result {"revoked": bool}
  ["spawn", INDEX]                           a child (sleep) holding a copy of it
  ["kill-children"]                          ends those children
  ["scribble", SECONDS]                      a child writing into every lease held, as
                                             fast as they take it, for SECONDS: result
                                             {"pid": PID} (ended by kill-children too)
  ["signals"]                                the LeaseRevoked signals received so far
"""

import json
import os
import select
import subprocess
import sys

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402

DEST = "org.xagent.Sandbox1"


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    fds, children, signals = {}, [], []

    def on_signal(reason, path=None):
        signals.append({"path": str(path), "reason": str(reason)})

    bus.add_signal_receiver(on_signal, signal_name="LeaseRevoked", dbus_interface="org.xagent.Sandbox1.Sandbox",
                            path_keyword="path")

    def call(path, iface, method, sig, args):
        msg = dbus.lowlevel.MethodCallMessage(DEST, path, iface, method)
        if sig:
            msg.append(signature=sig, *[client.typed(s, a) for s, a in zip(dbus.Signature(sig), args)])
        try:
            return {"ok": True, "reply": bus.send_message_with_reply_and_block(msg, 60)}
        except dbus.exceptions.DBusException as e:
            return {"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}

    def run(cmd):
        op, rest = cmd[0], cmd[1:]
        if op in ("call", "acquire"):
            out = call(*rest)
            if not out["ok"]:
                return out
            args = out.pop("reply").get_args_list()
            if op == "call":
                return {"ok": True, "result": client.plain(args)}
            index = len(fds)
            fds[index] = args[0].take()
            return {"ok": True, "result": {"lease": index}}
        if op == "close":
            os.close(fds.pop(rest[0]))
            return {"ok": True, "result": {}}
        if op == "revoked":
            p = select.poll()
            p.register(fds[rest[0]], select.POLLOUT)
            return {"ok": True, "result": {"revoked": any(ev & select.POLLERR for _, ev in p.poll(0))}}
        if op == "spawn":
            children.append(subprocess.Popen(["sleep", "600"], pass_fds=[fds[rest[0]]]))
            return {"ok": True, "result": {}}
        if op == "scribble":
            held = list(fds.values())
            code = ("import os, select, sys, time\n"
                    "fds = [int(x) for x in sys.argv[2:]]\n"
                    "for fd in fds: os.set_blocking(fd, False)\n"
                    "end = time.monotonic() + float(sys.argv[1]); block = b'x' * 4096\n"
                    "while time.monotonic() < end:\n"
                    "    for fd in select.select([], fds, [], 0.2)[1]:\n"
                    "        try: os.write(fd, block)\n"
                    "        except BlockingIOError: pass\n")
            child = subprocess.Popen([sys.executable, "-c", code, str(rest[0])] + [str(fd) for fd in held],
                                     pass_fds=held)
            children.append(child)
            return {"ok": True, "result": {"pid": child.pid}}
        if op == "kill-children":
            for c in children:
                c.kill()
                c.wait()
            children.clear()
            return {"ok": True, "result": {}}
        if op == "signals":
            return {"ok": True, "result": {"signals": list(signals)}}
        return {"ok": False, "error": "unknown command", "message": op}

    def on_line(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        print(json.dumps(run(json.loads(line))), flush=True)
        return True

    print(json.dumps({"ready": True, "unique_name": bus.get_unique_name()}), flush=True)
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_line)
    loop.run()
    for c in children:
        c.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
