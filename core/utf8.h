/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_UTF8_H
#define GDRCHECK_UTF8_H

#include <stddef.h>

/*
 * Length of the UTF-8 sequence at s, 0 when it is not one (RFC 3629: no
 * stray continuation bytes, overlong forms, surrogates or > U+10FFFF).
 */
size_t utf8_sequence(const unsigned char *s);

#endif
