// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tracepoints of trace.h, defined once. */

#define CREATE_TRACE_POINTS
#include "trace.h"
