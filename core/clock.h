/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CLOCK_H
#define GDRCHECK_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC. */
double now_ms(void);

#endif
