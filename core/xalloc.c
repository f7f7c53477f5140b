// SPDX-License-Identifier: MIT
#include "core/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void __attribute__((noreturn)) out_of_memory(void)
{
	fputs("gdrcheck: out of memory\n", stderr);
	exit(3);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (!q)
		out_of_memory();
	return q;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		out_of_memory();
	return d;
}
