// SPDX-License-Identifier: MIT
/* One clock for stage deadlines and result durations. */
#include <time.h>

#include "core/clock.h"

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
