/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "operation-state.h"

OperationState operation_next_state(OperationState state, OperationEvent event, bool lists, bool widened) {
        switch (state) {
        case OPERATION_AUTHORIZING:
                if (event == OPERATION_ALLOWED)
                        return lists && !widened ? OPERATION_WIDENING : OPERATION_QUEUED;
                if (event == OPERATION_DENIED)
                        return OPERATION_FAILED;
                break;
        case OPERATION_WIDENING:
                /* No is no refusal here: the caller sees its own objects only. */
                if (event == OPERATION_ALLOWED || event == OPERATION_DENIED)
                        return OPERATION_QUEUED;
                break;
        case OPERATION_QUEUED:
                if (event == OPERATION_SUBMITTED)
                        return OPERATION_QUEUED;
                if (event == OPERATION_REFUSED || event == OPERATION_ERRED)
                        return OPERATION_FAILED;
                if (event == OPERATION_SUCCEEDED)
                        return OPERATION_DONE;
                break;
        default:
                break;
        }
        return _OPERATION_STATE_MAX;
}

const char *operation_state_to_string(OperationState s) {
        static const char *const names[_OPERATION_STATE_MAX] = {
                [OPERATION_AUTHORIZING] = "authorizing",
                [OPERATION_WIDENING]    = "widening",
                [OPERATION_QUEUED]      = "queued",
                [OPERATION_DONE]        = "done",
                [OPERATION_FAILED]      = "failed",
        };
        return s >= 0 && s < _OPERATION_STATE_MAX ? names[s] : NULL;
}
