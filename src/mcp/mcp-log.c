/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* log.h's functions for this program: its own name on stderr (stdout is the
 * protocol's). $SYSTEMD_LOG_LEVEL sets the maximum level, info by default. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int max_level = LOG_INFO;

void log_setup(void) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };
        const char *e = getenv("SYSTEMD_LOG_LEVEL");

        for (int i = 0; e && i < (int) (sizeof names / sizeof names[0]); i++)
                if (strcmp(e, names[i]) == 0 || (e[0] - '0' == i && !e[1]))
                        max_level = i;
}

bool log_to_journal(void) {
        return false;
}

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...) {
        char text[2048];
        int n;
        int saved = errno;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level) {
                errno = saved;
                return -error;
        }
        errno = error;          /* for %m */
        va_start(ap, format);
        n = snprintf(text, sizeof text, "xagent-sandbox-mcp: ");
        n += vsnprintf(text + n, sizeof text - (size_t) n - 1, format, ap);
        va_end(ap);
        n = n < (int) sizeof text - 1 ? n : (int) sizeof text - 2;
        text[n++] = '\n';
        /* One write, never waited for: stderr is non-blocking (see main()). */
        (void) !write(STDERR_FILENO, text, (size_t) n);
        errno = saved;
        return -error;
}
