/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Answers file requests on standard input until it ends (serve.c); the
 * process's exit status. */
int sbx_init_serve(void);
