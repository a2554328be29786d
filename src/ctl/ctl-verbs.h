/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-util.h"

/* Each command gets argv[0] = its name, then its own options and arguments, and parses
 * them with ctl_parse_args(). Returns the exit status. */
int verb_list(int argc, char **argv, CtlOptions *o);
int verb_snapshots(int argc, char **argv, CtlOptions *o);
int verb_create(int argc, char **argv, CtlOptions *o);
int verb_ensure(int argc, char **argv, CtlOptions *o);
int verb_claim(int argc, char **argv, CtlOptions *o);
int verb_verify(int argc, char **argv, CtlOptions *o);
int verb_inspect(int argc, char **argv, CtlOptions *o);
int verb_start(int argc, char **argv, CtlOptions *o);
int verb_stop(int argc, char **argv, CtlOptions *o);
int verb_pause(int argc, char **argv, CtlOptions *o);
int verb_egress(int argc, char **argv, CtlOptions *o);
int verb_resume(int argc, char **argv, CtlOptions *o);
int verb_delete(int argc, char **argv, CtlOptions *o);
int verb_acquire(int argc, char **argv, CtlOptions *o);
int verb_lifetimes(int argc, char **argv, CtlOptions *o);
int verb_snapshot(int argc, char **argv, CtlOptions *o);
int verb_delete_snapshot(int argc, char **argv, CtlOptions *o);
int verb_fingerprint(int argc, char **argv, CtlOptions *o);
int verb_exec(int argc, char **argv, CtlOptions *o);
int verb_shell(int argc, char **argv, CtlOptions *o);
int verb_ps(int argc, char **argv, CtlOptions *o);
int verb_output(int argc, char **argv, CtlOptions *o);
int verb_attach(int argc, char **argv, CtlOptions *o);
int verb_cp(int argc, char **argv, CtlOptions *o);
int verb_cat(int argc, char **argv, CtlOptions *o);
int verb_put(int argc, char **argv, CtlOptions *o);
int verb_ls(int argc, char **argv, CtlOptions *o);
int verb_rm(int argc, char **argv, CtlOptions *o);
int verb_usage(int argc, char **argv, CtlOptions *o);
int verb_policy(int argc, char **argv, CtlOptions *o);
int verb_pull(int argc, char **argv, CtlOptions *o);
