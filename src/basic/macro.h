/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers in the manner of systemd's src/basic/macro.h. */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                (void) close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline int safe_close(int fd) {
        if (fd >= 0)
                (void) close(fd);
        return -1;
}

/* Frees a NULL-terminated array of strings and the strings. */
static inline char **strv_free(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
        return NULL;
}

static inline void strv_freep(char ***v) {
        strv_free(*v);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

/* s without prefix if s starts with it, else NULL. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);

        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

/* Hands a descriptor out of a _cleanup_close_ variable. */
#define TAKE_FD(fd)                             \
        ({                                      \
                int _fd_ = (fd);                \
                (fd) = -EBADF;                  \
                _fd_;                           \
        })

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _ptr_ = (p);      \
                (p) = NULL;                     \
                _ptr_;                          \
        })

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)         \
        static inline void func##p(type *p) {           \
                if (*p)                                 \
                        func(*p);                       \
        }

#define DEFINE_CLEANUP_FUNC_BY_VALUE(type, func)        \
        static inline void func##p(type *p) {           \
                func(p);                                \
        }
