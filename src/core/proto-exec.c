/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* EXEC, the channel's command request (proto.h, "commands over the channel"):
 * its writer (the service), its parser (the program in the sandbox, which allocates
 * nothing) and the status frames of the command's stream. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "proto.h"

int sbx_proto_exec_write(SbxProtoWriter *w, const SbxProtoExec *x) {
        sbx_proto_begin(w, SBX_PROTO_EXEC);
        for (size_t i = 0; x->argv[i]; i++)
                sbx_proto_put_str(w, SBX_TAG_ARG, x->argv[i]);
        for (size_t i = 0; x->env && x->env[i]; i++)
                sbx_proto_put_str(w, SBX_TAG_ENV, x->env[i]);
        if (x->working_dir)
                sbx_proto_put_str(w, SBX_TAG_PATH, x->working_dir);
        sbx_proto_put_str(w, SBX_TAG_TOKEN, x->token);
        if (x->tty) {
                sbx_proto_put_u64(w, SBX_TAG_FLAGS, SBX_PROTO_EXEC_TTY);
                sbx_proto_put_u64(w, SBX_TAG_ROWS, x->rows);
                sbx_proto_put_u64(w, SBX_TAG_COLS, x->cols);
        }
        return sbx_proto_end(w);
}

static int why_is(char *why, size_t n, const char *msg, int r) {
        if (why && n > 0)
                snprintf(why, n, "%s", msg);
        return r;
}

/* A field's bytes as a string in strings at *used: no NUL inside. */
static char *take_str(const SbxProtoField *f, char *strings, size_t strings_size, size_t *used) {
        char *s;

        if (memchr(f->data, 0, f->size) || strings_size - *used < (size_t) f->size + 1)
                return NULL;
        s = strings + *used;
        memcpy(s, f->data, f->size);
        s[f->size] = 0;
        *used += (size_t) f->size + 1;
        return s;
}

static int small_u64(const SbxProtoField *f, uint64_t max, unsigned *ret) {
        uint64_t v;

        if (sbx_proto_u64(f, &v) < 0 || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int sbx_proto_exec_parse(const SbxProtoFrame *f, SbxProtoExec *ret, char *strings, size_t strings_size,
                         char **ptrs, size_t ptrs_max, char *why, size_t why_size) {
        size_t pos = 0, used = 0, n_arg = 0, n_env = 0, n;
        char *token = NULL, *cwd = NULL;
        unsigned flags = 0, rows = 0, cols = 0;
        SbxProtoField field;
        int r;

        /* Two passes: the counts first (argv, then env, each NULL-terminated in ptrs). */
        while ((r = sbx_proto_next(f->payload, f->size, &pos, &field)) > 0) {
                n_arg += field.tag == SBX_TAG_ARG;
                n_env += field.tag == SBX_TAG_ENV;
        }
        if (r < 0)
                return why_is(why, why_size, "a malformed request", -EBADMSG);
        if (n_arg == 0 || n_arg + n_env + 2 > ptrs_max || n_arg + n_env + 2 > SBX_EXEC_ARGS_MAX)
                return why_is(why, why_size, "no argv, or too many arguments", -EINVAL);
        char **argv = ptrs, **env = ptrs + n_arg + 1;
        size_t ia = 0, ie = 0;

        pos = 0;
        while (sbx_proto_next(f->payload, f->size, &pos, &field) > 0) {
                char *s = NULL;

                switch (field.tag) {
                case SBX_TAG_ARG:
                case SBX_TAG_ENV:
                case SBX_TAG_PATH:
                case SBX_TAG_TOKEN:
                        if (!(s = take_str(&field, strings, strings_size, &used)))
                                return why_is(why, why_size, "a string with NUL, or too long", -EINVAL);
                        break;
                default:
                        break;
                }
                if (field.tag == SBX_TAG_ARG)
                        argv[ia++] = s;
                else if (field.tag == SBX_TAG_ENV && strchr(s, '=') && s[0] != '=')
                        env[ie++] = s;
                else if (field.tag == SBX_TAG_ENV)
                        return why_is(why, why_size, "an environment entry without KEY=", -EINVAL);
                else if (field.tag == SBX_TAG_PATH)
                        cwd = s;
                else if (field.tag == SBX_TAG_TOKEN)
                        token = s;
                else if ((field.tag == SBX_TAG_FLAGS && small_u64(&field, SBX_PROTO_EXEC_TTY, &flags) < 0) ||
                         (field.tag == SBX_TAG_ROWS && small_u64(&field, UINT16_MAX, &rows) < 0) ||
                         (field.tag == SBX_TAG_COLS && small_u64(&field, UINT16_MAX, &cols) < 0))
                        return why_is(why, why_size, "malformed flags, rows or cols", -EINVAL);
        }
        argv[ia] = NULL;
        env[ie] = NULL;
        if (cwd && (cwd[0] != '/' || strlen(cwd) > SBX_PROTO_MAX_PATH))
                return why_is(why, why_size, "a working directory that is not an absolute path", -EINVAL);
        n = token ? strlen(token) : 0;
        if (n == 0 || n > SBX_EXEC_TOKEN_MAX || strspn(token, "0123456789abcdef.") != n)
                return why_is(why, why_size, "no token", -EINVAL);
        *ret = (SbxProtoExec) { .argv = argv, .env = env, .working_dir = cwd, .token = token,
                                .tty = flags & SBX_PROTO_EXEC_TTY, .rows = rows, .cols = cols };
        return 0;
}

int sbx_exec_status_parse(const uint8_t b[static SBX_EXEC_STATUS_SIZE], unsigned *ret_kind, uint32_t *ret_value) {
        if (b[0] > SBX_EXEC_FAILED || b[1] || b[2] || b[3])
                return -EBADMSG;
        *ret_kind = b[0];
        *ret_value = (uint32_t) b[4] << 24 | (uint32_t) b[5] << 16 | (uint32_t) b[6] << 8 | b[7];
        return 0;
}

void sbx_exec_status_frame(uint8_t b[static SBX_DOCKER_FRAME_HEADER_SIZE + SBX_EXEC_STATUS_SIZE], unsigned kind,
                           uint32_t value) {
        memset(b, 0, SBX_DOCKER_FRAME_HEADER_SIZE + SBX_EXEC_STATUS_SIZE);
        b[0] = SBX_EXEC_STREAM_STATUS;
        b[7] = SBX_EXEC_STATUS_SIZE;
        b[8] = (uint8_t) kind;
        for (int i = 0; i < 4; i++)
                b[12 + i] = (uint8_t) (value >> (24 - 8 * i));
}
