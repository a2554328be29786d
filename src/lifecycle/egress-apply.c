/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Egress enforced (docs/security.md, "Egress"): the ruleset of src/core/egress-rules.c
 * loaded into a running sandbox's own network namespace, and read back from there.
 *
 * A short-lived child of the daemon enters the namespace of the container's first
 * process (setns, CLONE_NEWNET: CAP_SYS_ADMIN) and runs nftables' own `nft` there
 * (netlink: CAP_NET_ADMIN), its input and output on pipes. The namespace is opened by
 * the parent from /proc/PID/ns/net and kept only if that process is still in the
 * container's cgroup after the open: a PID reused meanwhile is never entered. Nothing
 * of the image runs, and the sandbox's own processes never get the capability. */

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress-apply.h"
#include "fileio.h"
#include "lifecycle-internal.h"
#include "nft-run.h"
#include "resolvers.h"

/* The container's network namespace: the file the engine keeps of it (its SandboxKey,
 * root's to open: no ptrace access to another uid's process is needed), else the first
 * process's, if that process is still the container's. */
int lc_egress_open_netns(const SbxObserved *o, int *ret_fd, SbxError *error) {
        _cleanup_free_ char *cgroup = NULL;
        _cleanup_close_ int fd = -1;
        char path[64];
        int r;

        if (o->sandbox_key && o->sandbox_key[0] == '/') {
                fd = open(o->sandbox_key, O_RDONLY | O_CLOEXEC);
                /* Only the namespace itself: not the empty file it is mounted on, where
                 * this mount namespace does not see the engine's mount. */
                if (fd >= 0 && ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNET) {
                        *ret_fd = TAKE_FD(fd);
                        return 0;
                }
                fd = safe_close(fd);
        }
        if (o->pid <= 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: the sandbox has no process (not running)");
        snprintf(path, sizeof path, "/proc/%lld/ns/net", (long long) o->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: cannot open %s: %m", path);
        snprintf(path, sizeof path, "/proc/%lld/cgroup", (long long) o->pid);
        r = sbx_read_text_file(path, 1 << 20, &cgroup, error);
        if (r < 0)
                return r;
        if (!strstr(cgroup, o->id))
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "egress: process %lld is no longer the sandbox's", (long long) o->pid);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Runs nft with argv in the sandbox's namespace; its exit status, its output in *ret. */
static int run_nft(const SbxObserved *o, char *const argv[], const char *input, char **ret, SbxError *error) {
        _cleanup_close_ int netns = -1;
        int r;

        if ((r = lc_egress_open_netns(o, &netns, error)) < 0)
                return r;
        return lc_nft_run_in(netns, argv, input, ret, error);
}

/* The engine's own networks and gateways of this sandbox (observed.h). */
static int engine_cidrs(const SbxObserved *o, SbxCidr **ret, size_t *ret_n) {
        SbxCidr *c = calloc(o->n_engine_addresses + 1, sizeof(SbxCidr));
        size_t n = 0;

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_engine_addresses; i++)
                if (sbx_cidr_parse("engine", o->engine_addresses[i], &c[n], NULL) >= 0)
                        n++;
        *ret = c;
        *ret_n = n;
        return 0;
}

typedef struct Rules {
        char *text;
        char digest[65];
        size_t n_rules;
} Rules;

static void rules_done(Rules *r) {
        free(r->text);
}

static int make_rules(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, Rules *ret) {
        _cleanup_free_ SbxCidr *engine = NULL;
        size_t n_engine;
        int r;

        if ((r = engine_cidrs(o, &engine, &n_engine)) < 0 ||
            (r = sbx_egress_ruleset(&l->policy->egress, e, engine, n_engine, &ret->text, ret->digest)) < 0)
                return r;
        ret->n_rules = sbx_egress_rule_count(&l->policy->egress, e, engine, n_engine);
        return 0;
}

int lc_egress_check(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, const char **ret_why,
                    SbxError *error) {
        static char *const argv[] = { (char *) "nft", (char *) "-j", (char *) "list", (char *) "ruleset", NULL };
        _cleanup_(rules_done) Rules rules = {};
        _cleanup_free_ char *listing = NULL;
        int r;

        if (!sbx_egress_needs_rules(&l->policy->egress, e, o->network_isolated))
                return 1;
        if ((r = make_rules(l, o, e, &rules)) < 0)
                return r;
        r = run_nft(o, argv, NULL, &listing, error);
        if (r < 0)
                return r;
        if (r != 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: the rules cannot be read back: %s",
                                     listing);
        r = sbx_egress_listing_matches(listing, rules.digest, rules.n_rules, ret_why);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: the rules read back are not nft's JSON");
        return r;
}

/* The sandbox's names served by the resolver in its namespace (resolvers.h); only_missing:
 * unless it is served there already (the rules were in force: a daemon restarted). */
int lc_egress_serve_names(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, bool only_missing,
                          SbxError *error) {
        _cleanup_free_ SbxCidr *engine = NULL;
        _cleanup_close_ int netns = -1;
        size_t n_engine;
        int r;

        if (!l->resolvers)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "egress: name entries cannot be served by this process (no resolver)");
        if ((r = lc_egress_open_netns(o, &netns, error)) < 0 || (r = engine_cidrs(o, &engine, &n_engine)) < 0)
                return r;
        if (only_missing && sbx_resolvers_serves(l->resolvers, o->id, netns))
                return 0;
        return sbx_resolvers_serve(l->resolvers, &(SbxResolverArgs) {
                        .container_id = o->id, .netns = netns, .pid = o->pid, .egress = e,
                        .policy = &l->policy->egress, .engine = engine, .n_engine = n_engine }, error);
}

int lc_egress_apply(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, SbxError *error) {
        static char *const argv[] = { (char *) "nft", (char *) "-f", (char *) "-", NULL };
        _cleanup_(rules_done) Rules rules = {};
        _cleanup_free_ char *output = NULL;
        const char *why = NULL;
        int r;

        if (!sbx_egress_needs_rules(&l->policy->egress, e, o->network_isolated))
                return 0;
        if (sbx_docker_remote(l->docker))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "egress: the engine is remote: its sandboxes' network namespaces are not on "
                                     "this host, so egress cannot be enforced");
        if ((r = make_rules(l, o, e, &rules)) < 0)
                return r;
        r = run_nft(o, argv, rules.text, &output, error);
        if (r < 0)
                return r;
        if (r != 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: the rules could not be applied "
                                     "(%s exited %d): %s", SBX_NFT_PATH, r, output);
        /* What is in force now is read back before anyone is told it is. */
        r = lc_egress_check(l, o, e, &why, error);
        if (r < 0)
                return r;
        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: applied, but %s", why);
        if (sbx_egress_n_names(e) == 0) {
                sbx_resolvers_forget(l->resolvers, o->id);
                return 0;
        }
        return lc_egress_serve_names(l, o, e, false, error);
}

int lc_egress_of_row(const SbxSandboxRow *row, SbxEgress *ret, SbxError *error) {
        return sbx_egress_from_json(row ? row->egress_json : NULL, ret, error);
}

bool lc_egress_in_force(SbxLifecycle *l, const SbxObserved *o, const SbxSandboxRow *row) {
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        SbxError e = SBX_ERROR_NULL;
        const char *why = NULL;
        int r;

        /* A container with no row was not made by the service (xagent's own, say): its
         * network is not the service's to judge, as its posture is not. */
        if (!row || !sbx_state_is_up(o->state))
                return true;
        r = lc_egress_of_row(row, &egress, &e);
        if (r >= 0)
                r = lc_egress_check(l, o, &egress, &why, &e);
        sbx_error_free(&e);
        return r > 0;
}

void lc_egress_describe(SbxLifecycle *l, SbxSandbox *s) {
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        SbxError e = SBX_ERROR_NULL;
        const SbxObserved *o = s->observed;
        const char *why = NULL;
        int r;

        if (!o || !sbx_state_is_up(o->state))
                return;
        r = sbx_egress_from_json(s->egress_json, &egress, &e);
        if (r >= 0 && sbx_egress_effective(&l->policy->egress, &egress, o->network_isolated) ==
                      SBX_EGRESS_EFFECTIVE_OPEN)
                r = 0;          /* nothing is enforced */
        else if (r >= 0)
                r = lc_egress_check(l, o, &egress, &why, &e);
        s->egress_enforced = r > 0;
        s->egress_names_refused = sbx_resolvers_refused(l->resolvers, o->id);
        sbx_error_free(&e);
}

const char *lc_egress_effective(SbxLifecycle *l, const char *json, bool network_isolated) {
        _cleanup_(sbx_egress_done) SbxEgress egress = {};

        if (sbx_egress_from_json(json, &egress, NULL) < 0)
                egress = (SbxEgress) {};
        return sbx_egress_effective_to_string(sbx_egress_effective(&l->policy->egress, &egress, network_isolated));
}
