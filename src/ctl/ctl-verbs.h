/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-util.h"

/* Each verb gets argv[0] = the verb's name, then its arguments. Returns the exit status. */
int verb_fingerprint(int argc, char **argv, const CtlOptions *o);
