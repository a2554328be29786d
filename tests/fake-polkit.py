# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for polkitd on a private bus (tests/test-bus-polkit.c): owns
org.freedesktop.PolicyKit1 and answers CheckAuthorization by the action's last word —
"yes", "no", "challenge" (a challenge), "error" (a D-Bus error), "hang" (never answers).
It records what it was asked and prints "ready" once the name is owned."""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib


class Authority(dbus.service.Object):
    @dbus.service.method("org.freedesktop.PolicyKit1.Authority",
                         in_signature="(sa{sv})sa{ss}us", out_signature="(bba{ss})",
                         async_callbacks=("reply", "error"))
    def CheckAuthorization(self, subject, action, details, flags, cancel, reply, error):
        kind, subj = subject
        word = action.rsplit(".", 1)[-1]
        # The subject is the caller's bus name; the details come through unchanged.
        answer = {"sender": str(subj["name"]), "flags": str(int(flags)),
                  **{str(k): str(v) for k, v in details.items()}}
        if word == "yes":
            reply((True, False, answer))
        elif word == "no":
            reply((False, False, answer))
        elif word == "challenge":
            reply((False, True, answer))
        elif word == "error":
            error(dbus.exceptions.DBusException("polkit is unwell",
                                                name="org.freedesktop.PolicyKit1.Error.Failed"))
        # "hang": never answers


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
name = dbus.service.BusName("org.freedesktop.PolicyKit1", bus)
Authority(bus, "/org/freedesktop/PolicyKit1/Authority")
print("ready", flush=True)
GLib.MainLoop().run()
