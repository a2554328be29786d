/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The states an operation goes through (operation.c), as a pure transition
 * function so that every path can be tested without a bus. Nothing is looked up
 * for a caller before polkit has said yes: a by-name call acts in the caller's own
 * namespace, an object's method on the object's owner, so whose object it is is
 * known when the call arrives. */

#include <stdbool.h>

typedef enum OperationState {
        OPERATION_AUTHORIZING,  /* polkit is asked about the action (root: not asked) */
        OPERATION_WIDENING,     /* lists: polkit is asked, without a prompt, about manage-others */
        OPERATION_QUEUED,       /* on a worker pool: the lifecycle work */
        OPERATION_DONE,         /* replied with the result */
        OPERATION_FAILED,       /* replied with an error */
        _OPERATION_STATE_MAX,
} OperationState;

typedef enum OperationEvent {
        OPERATION_ALLOWED,      /* polkit said yes (or the caller is root) */
        OPERATION_DENIED,       /* polkit said no, or could not be asked */
        OPERATION_SUBMITTED,    /* a worker took it */
        OPERATION_REFUSED,      /* no worker: the pool or the caller's share is full */
        OPERATION_SUCCEEDED,    /* the worker's work and the reply succeeded */
        OPERATION_ERRED,        /* the worker's work failed */
        _OPERATION_EVENT_MAX,
} OperationEvent;

/* The next state, or _OPERATION_STATE_MAX when event cannot happen in state. lists:
 * the verb widens its scope with manage-others; widened: that was done already. */
OperationState operation_next_state(OperationState state, OperationEvent event, bool lists, bool widened);

const char *operation_state_to_string(OperationState s);
