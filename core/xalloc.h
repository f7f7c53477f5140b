/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_XALLOC_H
#define GDRCHECK_XALLOC_H

/*
 * Allocation that cannot fail. Out of memory while recording a diagnosis
 * leaves nothing sane to report: say so and exit 3 (undecided) rather than
 * print a partial report.
 */
#include <stddef.h>

void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

#endif
