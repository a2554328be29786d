/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "error.h"

#define SBX_NFT_PATH "/usr/sbin/nft"

/* nft with argv run in the network namespace netns (a short-lived child); input on its
 * stdin (may be NULL); its exit status, stdout and stderr in *ret. */
int lc_nft_run_in(int netns, char *const argv[], const char *input, char **ret, SbxError *error);
