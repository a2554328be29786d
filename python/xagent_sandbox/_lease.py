# SPDX-License-Identifier: LGPL-2.1-or-later
"""sb.lease(): a lease on a sandbox (AcquireSandbox), as logind's inhibitors: it lasts
until its descriptor is closed. See docs/python.md."""

import os
import select

from ._errors import LeaseRevoked


class Lease:
    """A held lease: name (the sandbox's), revoked (the service ended it: another
    connection's stop(force=True), the sandbox deleted, the service gone), release()
    (also at the end of a with block). Its descriptor is close-on-exec: a child
    process does not keep it."""

    def __init__(self, name, fd):
        self.name = name
        self._fd = fd
        os.set_inheritable(fd, False)

    @property
    def held(self):
        return self._fd >= 0 and not self.revoked

    @property
    def revoked(self):
        """Whether the service ended it (its end of the pipe closed)."""
        if self._fd < 0:
            return False
        p = select.poll()
        p.register(self._fd, 0)
        return any(ev & (select.POLLHUP | select.POLLERR) for _, ev in p.poll(0))

    def check(self):
        """Raises LeaseRevoked if the service ended it."""
        if self.revoked:
            raise LeaseRevoked(f"the lease on '{self.name}' was revoked (another connection's stop with force, "
                               "the sandbox deleted, or the service ended)")

    def wait_revoked(self, timeout=None):
        """Waits until the service ends it (or timeout seconds): whether it did."""
        if self._fd < 0:
            return False
        p = select.poll()
        p.register(self._fd, 0)
        return bool(p.poll(None if timeout is None else int(timeout * 1000)))

    def release(self):
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def __del__(self):
        self.release()

    def __repr__(self):
        return f"Lease({self.name!r}, held={self.held}, revoked={self.revoked})"
