/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The channel's EXEC (exec-serve.c; proto.h, "commands over the channel"). */

#include "proto.h"

/* Answers an EXEC frame into w: forks the command's supervisor and puts OK(FD) with
 * the descriptor the service takes, which the caller keeps in *ret_handoff (closing
 * the previous one first) until the next frame; or an ERROR. */
int sbx_serve_exec(const SbxProtoFrame *f, SbxProtoWriter *w, int *ret_handoff);
