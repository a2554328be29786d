/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdarg.h>

#include "bus-inspection.h"
#include "runtime.h"
#include "busstr.h"
#include "egress.h"
#include "json-util.h"
#include "user-labels.h"

static int append_entry(sd_bus_message *r, const char *key, const char *sig, ...) {
        va_list ap;
        int k;

        if ((k = sd_bus_message_open_container(r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(r, 'v', sig)) < 0)
                return k;
        va_start(ap, sig);
        k = sd_bus_message_appendv(r, sig, ap);
        va_end(ap);
        if (k < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        return sd_bus_message_close_container(r);
}

static int open_entry(sd_bus_message *r, const char *key, const char *sig) {
        int k;

        if ((k = sd_bus_message_open_container(r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(r, 'v', sig)) < 0)
                return k;
        return sd_bus_message_open_container(r, 'a', sig + 1);
}

static int close_entry(sd_bus_message *r) {
        int k;

        if ((k = sd_bus_message_close_container(r)) < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        return sd_bus_message_close_container(r);
}

/* Strings sd-bus cannot carry (Unicode noncharacters, which Docker and xagent
 * accept) never make an inspection fail: when any string of a key's value cannot
 * be sent as it is, every string of that key is sent escaped
 * (sbx_bus_string_escape()) and the key is listed in "escaped". */
typedef struct Inspection {
        sd_bus_message *r;
        bool escape;            /* the strings of the key being written */
        const char *escaped[16];   /* at most the 13 keys holding Docker's strings */
        size_t n_escaped;
        const unsigned *plan;   /* which keys are escaped, known already (bus-inspection.h), or NULL */
        unsigned noted;         /* … else found so */
        unsigned n_keys;        /* the keys of Docker's strings begun so far */
} Inspection;

/* Whether the strings of the next key can be sent as they are: as the plan says,
 * else checked (ok() is called only then) and noted in the plan. */
#define KEY_OK(in, ok) key_ok(in, (in)->plan ? -1 : (int) (ok))

static bool key_ok(Inspection *in, int checked) {
        unsigned bit = 1U << in->n_keys++;

        if (checked < 0)
                return !(*in->plan & bit);
        if (!checked)
                in->noted |= bit;
        return checked;
}

static void begin_key(Inspection *in, const char *key, bool ok) {
        in->escape = !ok;
        if (!ok && in->n_escaped < ELEMENTSOF(in->escaped))
                in->escaped[in->n_escaped++] = key;
}

static int put_str(Inspection *in, const char *s) {
        _cleanup_free_ char *e = NULL;
        int k;

        if (!in->escape)
                return sd_bus_message_append_basic(in->r, 's', s);
        if ((k = sbx_bus_string_escape(s, &e)) < 0)
                return k;
        return sd_bus_message_append_basic(in->r, 's', e);
}

static int append_string(Inspection *in, const char *key, const char *s) {
        int k;

        begin_key(in, key, KEY_OK(in, sbx_bus_string_ok(s)));
        if ((k = sd_bus_message_open_container(in->r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(in->r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(in->r, 'v', "s")) < 0 ||
            (k = put_str(in, s)) < 0 ||
            (k = sd_bus_message_close_container(in->r)) < 0)
                return k;
        return sd_bus_message_close_container(in->r);
}

static bool pairs_ok(const SbxEnvVar *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!sbx_bus_string_ok(v[i].key) || !sbx_bus_string_ok(v[i].value))
                        return false;
        return true;
}

static int append_pairs(Inspection *in, const char *key, const SbxEnvVar *v, size_t n) {
        int k = open_entry(in->r, key, "a{ss}");

        begin_key(in, key, KEY_OK(in, pairs_ok(v, n)));
        for (size_t i = 0; k >= 0 && i < n; i++)
                if ((k = sd_bus_message_open_container(in->r, 'e', "ss")) >= 0 && (k = put_str(in, v[i].key)) >= 0 &&
                    (k = put_str(in, v[i].value)) >= 0)
                        k = sd_bus_message_close_container(in->r);
        return k < 0 ? k : close_entry(in->r);
}

static bool volumes_ok(const SbxObserved *o) {
        for (size_t i = 0; i < o->n_volumes; i++)
                if (!sbx_bus_string_ok(o->volumes[i].host) || !sbx_bus_string_ok(o->volumes[i].guest) ||
                    !sbx_bus_string_ok(o->volumes[i].mode))
                        return false;
        return true;
}

static int append_volumes(Inspection *in, const SbxObserved *o) {
        int k = open_entry(in->r, "volumes", "a(sss)");

        begin_key(in, "volumes", KEY_OK(in, volumes_ok(o)));
        for (size_t i = 0; k >= 0 && i < o->n_volumes; i++)
                if ((k = sd_bus_message_open_container(in->r, 'r', "sss")) >= 0 &&
                    (k = put_str(in, o->volumes[i].host)) >= 0 && (k = put_str(in, o->volumes[i].guest)) >= 0 &&
                    (k = put_str(in, o->volumes[i].mode)) >= 0)
                        k = sd_bus_message_close_container(in->r);
        return k < 0 ? k : close_entry(in->r);
}

static bool networks_ok(const SbxObserved *o) {
        for (size_t i = 0; i < o->n_runtime_networks; i++)
                if (!sbx_bus_string_ok(o->runtime_networks[i]))
                        return false;
        return true;
}

static int append_networks(Inspection *in, const SbxObserved *o) {
        int k = open_entry(in->r, "networks", "as");

        begin_key(in, "networks", KEY_OK(in, networks_ok(o)));
        for (size_t i = 0; k >= 0 && i < o->n_runtime_networks; i++)
                k = put_str(in, o->runtime_networks[i]);
        return k < 0 ? k : close_entry(in->r);
}

static int append_ports(sd_bus_message *r, const SbxObserved *o) {
        int k = open_entry(r, "ports", "a(qq)");

        for (size_t i = 0; k >= 0 && i < o->n_ports; i++)
                k = sd_bus_message_append(r, "(qq)", (uint16_t) o->ports[i].host, (uint16_t) o->ports[i].guest);
        return k < 0 ? k : close_entry(r);
}

/* What Docker bound: host port 0 shows the port it chose. Host addresses are IP
 * literals Docker parsed; anything else is left out rather than sent. */
static int append_bound_ports(sd_bus_message *r, const SbxObserved *o) {
        int k = open_entry(r, "bound_ports", "a(sqq)");

        for (size_t i = 0; k >= 0 && i < o->n_bound_ports; i++) {
                const SbxBoundPort *b = &o->bound_ports[i];

                if (strspn(b->host_ip, "0123456789abcdefABCDEF.:") != strlen(b->host_ip))
                        continue;
                k = sd_bus_message_append(r, "(sqq)", b->host_ip, (uint16_t) b->host, (uint16_t) b->guest);
        }
        return k < 0 ? k : close_entry(r);
}

int bus_append_usage(sd_bus_message *reply, const SbxUsage *u) {
        int k;

        if ((k = sd_bus_message_open_container(reply, 'a', "{sv}")) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "cpu_usage_ns", "t", u->cpu_usage_ns)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "memory_bytes", "t", u->memory_bytes)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "memory_limit_bytes", "t", u->memory_limit_bytes)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "pids", "t", u->pids)) < 0)
                return k;
        if (u->has_net &&
            ((k = sd_bus_message_append(reply, "{sv}", "net_rx_bytes", "t", u->net_rx_bytes)) < 0 ||
             (k = sd_bus_message_append(reply, "{sv}", "net_tx_bytes", "t", u->net_tx_bytes)) < 0))
                return k;
        return sd_bus_message_close_container(reply);
}

/* The strings Docker reports, each possibly escaped. */
static int append_docker_strings(Inspection *in, const SbxSandbox *s) {
        const SbxObserved *o = s->observed;
        int k;

        if ((k = append_string(in, "status", s->status)) < 0 ||
            (k = append_string(in, "container_id", s->container_id)) < 0 ||
            (k = append_string(in, "image_ref", o->image_ref ?: "")) < 0 ||
            (k = append_string(in, "image_id", o->image_digest ?: "")) < 0 ||
            (k = append_pairs(in, "env", o->env, o->n_env)) < 0 ||
            (k = append_volumes(in, o)) < 0 ||
            (k = append_networks(in, o)) < 0 ||
            (k = append_pairs(in, "labels", o->labels, o->n_labels)) < 0 ||
            (k = append_string(in, "created_at", o->created_at ?: "")) < 0 ||
            (k = append_string(in, "working_dir", o->working_dir ?: "")) < 0 ||
            (k = append_string(in, "fingerprint_label", o->fingerprint_label ?: "")) < 0 ||
            (k = append_string(in, "version_label", o->version_label ?: "")) < 0)
                return k;
        return append_string(in, "user", o->user ?: "");
}

/* The caller's labels as the store has them (user-labels.h), beside Docker's "labels". */
static int append_sandbox_labels(sd_bus_message *r, const SbxSandbox *s) {
        _cleanup_(json_object_putp) json_object *labels = NULL;
        int k = open_entry(r, "sandbox_labels", "a{ss}");

        if (k < 0)
                return k;
        (void) sbx_user_labels_from_string(s->labels_json, &labels);   /* unreadable: none */
        if (labels) {
                json_object_object_foreach(labels, key, value)
                        if ((k = sd_bus_message_append(r, "{ss}", key, json_object_get_string(value))) < 0)
                                return k;
        }
        return close_entry(r);
}

/* For a mismatch, the fields of the stored spec that the container no longer has
 * (VerifySandbox's answer for that spec); empty otherwise or when not known. */
static int append_mismatched_fields(sd_bus_message *r, const SbxSandbox *s) {
        const char *names[SBX_SPEC_FIELD_COUNT + 1];
        int k = open_entry(r, "mismatched_fields", "as");

        if (k < 0)
                return k;
        sbx_spec_fields_to_names(s->verdict == SBX_VERDICT_MISMATCH ? s->mismatched : 0, names);
        for (const char **n = names; *n; n++)
                if ((k = sd_bus_message_append_basic(r, 's', *n)) < 0)
                        return k;
        return close_entry(r);
}

/* The service's own: its leases and lifetime (docs/lifecycle.md). */
static int append_lifetime(sd_bus_message *r, const SbxSandbox *s) {
        int k;

        if ((k = append_entry(r, "leases", "u", (uint32_t) s->leases)) < 0 ||
            (k = append_entry(r, "last_activity", "t", s->last_activity_us)) < 0 ||
            (k = append_entry(r, "idle_timeout", "u", s->idle_timeout_s)) < 0 ||
            (k = append_entry(r, "on_idle", "s", s->on_idle_pause ? "pause" : "stop")) < 0 ||
            (k = append_entry(r, "idle_counts_processes", "b", (int) s->idle_counts_processes)) < 0)
                return k;
        return append_entry(r, "expires_at", "t", s->expire_at_us);
}

/* Its egress (docs/security.md): as asked, what is in force, and whether the rules
 * read back from its namespace are the stored ones. */
static int append_egress(sd_bus_message *r, const SbxSandbox *s) {
        _cleanup_(sbx_egress_done) SbxEgress e = {};
        _cleanup_strv_free_ char **allow = NULL;
        int k;

        if (sbx_egress_from_json(s->egress_json, &e, NULL) < 0)
                e = (SbxEgress) {};
        allow = calloc(e.n_allow + 1, sizeof(char *));
        if (!allow)
                return -ENOMEM;
        for (size_t i = 0; i < e.n_allow; i++)
                allow[i] = TAKE_PTR(e.allow[i].text);
        if ((k = open_entry(r, "egress", "a{sv}")) < 0 ||
            (k = sd_bus_message_append(r, "{sv}{sv}{sv}{sv}", "mode", "s", sbx_egress_mode_to_string(e.mode),
                                       "effective", "s", s->egress_effective ?: "", "enforced", "b",
                                       s->egress_enforced > 0, "names_refused", "t", s->egress_names_refused)) < 0 ||
            (k = sd_bus_message_open_container(r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(r, 's', "allow")) < 0 ||
            (k = sd_bus_message_open_container(r, 'v', "as")) < 0 ||
            (k = sd_bus_message_append_strv(r, allow)) < 0 ||
            (k = sd_bus_message_close_container(r)) < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        return close_entry(r);
}

/* The runtime it asked for at create (docs/security.md, "Runtimes"): its label, which
 * only a well-formed name passes ("invalid" otherwise; the posture judges it). */
static const char *runtime_of(const SbxObserved *o) {
        const char *label = sbx_observed_get_label(o, SBX_LABEL_RUNTIME);

        if (!label)
                return SBX_RUNTIME_DEFAULT;
        return sbx_runtime_name_valid(label) ? label : "invalid";
}

int bus_append_inspection(sd_bus_message *r, const SbxSandbox *s) {
        return bus_append_inspection_planned(r, s, NULL);
}

int bus_append_inspection_planned(sd_bus_message *r, const SbxSandbox *s, unsigned *plan) {
        const SbxObserved *o = s->observed;
        Inspection in = { .r = r, .plan = plan && *plan != BUS_INSPECTION_UNPLANNED ? plan : NULL };
        int k;

        if ((k = sd_bus_message_open_container(r, 'a', "{sv}")) < 0 ||
            (k = append_entry(r, "state", "s", sbx_state_to_string(s->state))) < 0 ||
            (k = append_entry(r, "nano_cpus", "t", (uint64_t) (o->has_raw_nano_cpus ? o->raw_nano_cpus : 0))) < 0 ||
            (k = append_entry(r, "memory_bytes", "t",
                              (uint64_t) (o->has_raw_memory_bytes ? o->raw_memory_bytes : 0))) < 0 ||
            (k = append_ports(r, o)) < 0 ||
            (k = append_bound_ports(r, o)) < 0 ||
            (k = append_entry(r, "network_isolated", "b", (int) o->network_isolated)) < 0 ||
            (k = append_entry(r, "owner", "u", (uint32_t) s->owner)) < 0 ||
            (k = append_entry(r, "hardened", "b", (int) s->hardened)) < 0 ||
            (k = append_entry(r, "runtime", "s", runtime_of(o))) < 0 ||
            (k = append_entry(r, "verdict", "s", sbx_verdict_to_string(s->verdict))) < 0 ||
            (k = append_docker_strings(&in, s)) < 0 ||
            (k = append_mismatched_fields(r, s)) < 0 ||
            (k = append_sandbox_labels(r, s)) < 0 ||
            (k = append_lifetime(r, s)) < 0 ||
            (k = append_egress(r, s)) < 0 ||
            (k = open_entry(r, "escaped", "as")) < 0)
                return k;
        for (size_t i = 0; k >= 0 && i < in.n_escaped; i++)
                k = sd_bus_message_append_basic(r, 's', in.escaped[i]);
        if (k < 0 || (k = close_entry(r)) < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        if (plan && !in.plan)
                *plan = in.noted;
        return 0;
}
