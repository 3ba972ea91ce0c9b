// SPDX-License-Identifier: GPL-2.0
/* The tracepoints' definitions; trace.h says what they are. */
#define CREATE_TRACE_POINTS
#include "trace.h"
