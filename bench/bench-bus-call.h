/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A Manager method called through the bus, for the benchmarks that time the bus side. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

/* Calls org.xagent.Sandbox1.Manager.method with the arguments types describes;
 * returns the reply (the caller unrefs it) or exits, saying prog, on any error. */
static inline sd_bus_message *bench_call(sd_bus *bus, const char *prog, const char *method, const char *types,
                                         ...) {
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                           "org.xagent.Sandbox1.Manager", method);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(bus, m, 120 * 1000000ULL, &error, &reply);
        sd_bus_message_unref(m);
        if (r < 0) {
                fprintf(stderr, "%s: %s: %s: %s\n", prog, method, error.name ?: strerror(-r), error.message ?: "");
                exit(EXIT_FAILURE);
        }
        return reply;
}
