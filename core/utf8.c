// SPDX-License-Identifier: MIT
/* UTF-8 validation shared by the model's cleaning rule and the renderers. */
#include <stdint.h>

#include "core/utf8.h"

/*
 * Length of the UTF-8 sequence at s, 0 when it is not one: no stray
 * continuation bytes, no overlong forms, no surrogates, nothing above
 * U+10FFFF (RFC 3629).
 */
size_t utf8_sequence(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
