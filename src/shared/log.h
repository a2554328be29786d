/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging in the manner of systemd's src/basic/log.h: a priority per message, to
 * the journal (with CODE_FILE/CODE_LINE/CODE_FUNC and ERRNO fields) when stderr
 * is connected to it (systemd sets $JOURNAL_STREAM), to stderr otherwise, as
 * "xagent-sandboxd: message". Messages above the maximum level ($SYSTEMD_LOG_LEVEL,
 * default info) are dropped. Thread-safe: each message is written at once.
 *
 * The log_*_errno() forms take a (positive or negative) errno, make it available
 * to %m, and return it negative, so `return log_error_errno(r, "…: %m");` works.
 * errno itself is never changed by logging. */

#include <errno.h>
#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

void log_setup(void);                   /* chooses the target and the level once, at start */
bool log_to_journal(void);

int log_internal(int level, int error, const char *file, int line, const char *func, const char *format, ...)
        _printf_(6, 7);

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_full(level, ...) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...)   log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)   log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(error, ...)   log_full_errno(LOG_DEBUG, (error), __VA_ARGS__)
#define log_info_errno(error, ...)    log_full_errno(LOG_INFO, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, (error), __VA_ARGS__)
#define log_error_errno(error, ...)   log_full_errno(LOG_ERR, (error), __VA_ARGS__)

/* An out-of-memory error, logged once where it is noticed. */
#define log_oom() log_error_errno(ENOMEM, "Out of memory.")
