/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

#define IDENTIFIER "xagent-sandboxd"

static int max_level = LOG_INFO;
static bool journal = false;

bool log_to_journal(void) {
        return journal;
}

/* systemd connects stderr to the journal and says so in $JOURNAL_STREAM
 * ("<device>:<inode>" of that stream); anything else is a terminal or a file. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

static int parse_level(const char *s) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };

        for (int i = 0; i < (int) ELEMENTSOF(names); i++)
                if (streq(s, names[i]) || (s[0] == '0' + i && !s[1]))
                        return i;
        return -1;
}

void log_setup(void) {
        const char *e = getenv("SYSTEMD_LOG_LEVEL");
        int level = e ? parse_level(e) : -1;

        if (level >= 0)
                max_level = level;
        journal = stderr_is_journal();
}

static void write_journal(int level, int error, const char *file, int line, const char *func, const char *text) {
        char prio[32], cline[32], cerrno[32];
        _cleanup_free_ char *message = NULL, *cfile = NULL, *cfunc = NULL;
        struct iovec iov[8];
        size_t n = 0;

        snprintf(prio, sizeof prio, "PRIORITY=%i", level);
        snprintf(cline, sizeof cline, "CODE_LINE=%i", line);
        if (asprintf(&message, "MESSAGE=%s", text) < 0 || asprintf(&cfile, "CODE_FILE=%s", file) < 0 ||
            asprintf(&cfunc, "CODE_FUNC=%s", func) < 0)
                return;
        iov[n++] = (struct iovec) { message, strlen(message) };
        iov[n++] = (struct iovec) { prio, strlen(prio) };
        iov[n++] = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=" IDENTIFIER, strlen("SYSLOG_IDENTIFIER=" IDENTIFIER) };
        iov[n++] = (struct iovec) { cfile, strlen(cfile) };
        iov[n++] = (struct iovec) { cline, strlen(cline) };
        iov[n++] = (struct iovec) { cfunc, strlen(cfunc) };
        if (error > 0) {
                snprintf(cerrno, sizeof cerrno, "ERRNO=%i", error);
                iov[n++] = (struct iovec) { cerrno, strlen(cerrno) };
        }
        (void) sd_journal_sendv(iov, (int) n);
}

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...) {
        int saved = errno;
        char text[2048];
        va_list ap;

        error = error < 0 ? -error : error;
        if (level > max_level)
                return -error;

        errno = error;                  /* for %m */
        va_start(ap, format);
        (void) vsnprintf(text, sizeof text, format, ap);
        va_end(ap);

        if (journal)
                write_journal(level, error, file, line, func, text);
        else
                fprintf(stderr, IDENTIFIER ": %s\n", text);
        errno = saved;
        return -error;
}
