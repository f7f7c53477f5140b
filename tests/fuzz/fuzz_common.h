/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_FUZZ_COMMON_H
#define GDRCHECK_FUZZ_COMMON_H

/*
 * Shared by the libFuzzer harnesses. Every copy handed to production code is
 * its own malloc block of the exact size, so AddressSanitizer sees a read or
 * write one byte past what the caller gave.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An invariant of the production code does not hold: crash, libFuzzer saves
 * the input. */
#define FUZZ_ASSERT(cond)                                                     \
	do {                                                                  \
		if (!(cond))                                                  \
			__builtin_trap();                                     \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* NUL-terminated heap copy of data[0..size). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Exact-size heap buffer filled with junk (malloc(0) under ASan is a valid
 * pointer to zero usable bytes: any access to it is reported). */
static inline char *fuzz_buf(size_t len)
{
	char *b = malloc(len);

	if (!b && len)
		abort();
	if (len)
		memset(b, 0xa5, len);
	return b;
}

#endif
