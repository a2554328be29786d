/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdlib.h>

#include "log.h"
#include "manager-state.h"
#include "time-util.h"

int manager_arm_idle(Manager *m) {
        int r;

        if (m->idle_timeout_s == 0 || m->releasing || !m->idle_source)
                return 0;
        if (m->leases.n > 0 || registry_deadlines_pending(&m->registry))
                return sd_event_source_set_enabled(m->idle_source, SD_EVENT_OFF);
        r = sd_event_source_set_time_relative(m->idle_source, (uint64_t) m->idle_timeout_s * 1000000);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->idle_source, SD_EVENT_ONESHOT);
        if (r < 0) {
                log_warning_errno(r, "Cannot arm the idle exit (%m); it is tried again when the next call ends");
                (void) sd_event_source_set_enabled(m->idle_source, SD_EVENT_OFF);
        }
        return r;
}

typedef struct UserShare {
        uid_t uid;
        unsigned n;                     /* state changes in flight */
        unsigned reads;                 /* reads in flight */
} UserShare;

static int share_cmp(const void *a, const void *b) {
        uid_t x = ((const UserShare *) a)->uid, y = ((const UserShare *) b)->uid;
        return x < y ? -1 : x > y;
}

int manager_busy_as(Manager *m, uid_t uid, bool read) {
        UserShare key = { .uid = uid }, *share, **found = tfind(&key, &m->busy_by_uid, share_cmp);
        unsigned *n;
        int64_t max;
        int r;

        if (found)
                share = *found;
        else {
                share = calloc(1, sizeof(UserShare));
                if (!share)
                        return -ENOMEM;
                share->uid = uid;
                if (!tsearch(share, &m->busy_by_uid, share_cmp)) {
                        free(share);
                        return -ENOMEM;
                }
        }
        n = read ? &share->reads : &share->n;
        max = read ? m->policy->max_reads_per_user : m->policy->max_operations_per_user;
        if (uid != 0 && *n >= (uint64_t) max) {
                if (share->n == 0 && share->reads == 0) {
                        tdelete(share, &m->busy_by_uid, share_cmp);
                        free(share);
                }
                return -EBUSY;
        }
        (*n)++;
        m->n_busy++;
        if (m->idle_source && (r = sd_event_source_set_enabled(m->idle_source, SD_EVENT_OFF)) < 0)
                log_warning_errno(r, "Cannot hold off the idle exit: %m");
        return 0;
}

int manager_busy(Manager *m, uid_t uid) {
        return manager_busy_as(m, uid, false);
}

void manager_idle_as(Manager *m, uid_t uid, bool read) {
        UserShare key = { .uid = uid }, **found = tfind(&key, &m->busy_by_uid, share_cmp);

        if (found) {
                UserShare *share = *found;
                unsigned *n = read ? &share->reads : &share->n;

                if (*n > 0)
                        (*n)--;
                if (share->n == 0 && share->reads == 0) {
                        tdelete(share, &m->busy_by_uid, share_cmp);
                        free(share);
                }
        }
        /* A share given back may be what an exec with option wait waits for. */
        if (!read && m->execs_waiting && m->execs.released)
                m->execs.released(m->execs.released_userdata);
        if (--m->n_busy > 0)
                return;
        /* the first reconciliation waited for the calls that were in flight: now */
        if (m->first_source && sd_event_source_get_enabled(m->first_source, NULL) > 0)
                (void) sd_event_source_set_time_relative(m->first_source, 0);
        if (m->name_released || m->terminating)
                sd_event_exit(m->event, 0);
        else
                (void) manager_arm_idle(m);
}

void manager_idle(Manager *m, uid_t uid) {
        manager_idle_as(m, uid, false);
}

SbxPolicy *manager_policy_ref(Manager *m) {
        SbxPolicy *p;

        pthread_mutex_lock(&m->policy_lock);
        p = sbx_policy_ref(m->policy);
        pthread_mutex_unlock(&m->policy_lock);
        return p;
}

uint64_t manager_observation_max_age_us(Manager *m) {
        if (!m->policy || m->policy->observation_max_age <= 0)
                return 0;
        return (uint64_t) m->policy->observation_max_age * UINT64_C(1000000);
}

static int on_sweep_described(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (registry_sweep_described(&m->registry, m->observations, manager_observation_max_age_us(m)) > 0)
                manager_sweep_described_later(m);
        return 0;
}

void manager_sweep_described_later(Manager *m) {
        uint64_t after = manager_observation_max_age_us(m) + 100000U;
        int enabled = SD_EVENT_OFF;

        if (!m->event)
                return;
        if (m->described_sweep && sd_event_source_get_enabled(m->described_sweep, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return;
        if (m->described_sweep) {
                if (sd_event_source_set_time_relative(m->described_sweep, after) >= 0)
                        (void) sd_event_source_set_enabled(m->described_sweep, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_add_time_relative(m->event, &m->described_sweep, CLOCK_MONOTONIC, after, 0, on_sweep_described,
                                       m) < 0)
                log_warning("Cannot arm the sweep of kept descriptions: they go at the next read");
}

uint64_t manager_now_us(Manager *m) {
        uint64_t real = sbx_now_realtime_us(), boot = sbx_now_boottime_us(), now;
        int64_t step;

        if (m->clock_real_base_us == 0 || boot < m->clock_boot_base_us) {
                m->clock_real_base_us = real;
                m->clock_boot_base_us = boot;
                return real;
        }
        now = m->clock_real_base_us + (boot - m->clock_boot_base_us);
        step = (int64_t) (real - now);
        if ((uint64_t) (step < 0 ? -step : step) <= MANAGER_CLOCK_STEP_US)
                return now;
        log_notice("The wall clock stepped by %+" PRIi64 " s: idle times and expiries keep their remaining time",
                   (step + (step < 0 ? -500000 : 500000)) / 1000000);
        registry_rebase(&m->registry, step);
        m->clock_real_base_us = real;
        m->clock_boot_base_us = boot;
        return real;
}
