/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_SHA256_H
#define GDRCHECK_SHA256_H

/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the two-node
 * bootstrap's token proof: small, no library, tested on the standard
 * vectors. */
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

void hmac_sha256(const void *key, size_t key_len, const void *msg,
		 size_t msg_len, uint8_t out[SHA256_LEN]);

#endif
