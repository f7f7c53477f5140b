// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the two-node bootstrap's messages
 * (access/peer_msg.h): what a peer sends is decoded before anything acts on
 * it.
 *
 * Input: byte 0 selects the decoder (the header, or a message type), the
 * rest is the bytes, in an exact-size heap copy. A message that decodes is
 * encoded again and must decode to the same struct (round trip).
 */
#include <errno.h>
#include <string.h>

#include "access/peer_msg.h"
#include "tests/fuzz/fuzz_common.h"

static struct peer_buf out;

/* decode, encode, decode again: the two decodes agree. */
#define ROUND_TRIP(name, type)						\
	do {								\
		type a, b;						\
		if (peer_##name##_decode(p, n, &a))			\
			break;						\
		memset(&out, 0, sizeof(out));				\
		peer_##name##_encode(&a, &out);				\
		FUZZ_ASSERT(!out.failed);				\
		FUZZ_ASSERT(!peer_##name##_decode(out.data, out.len, &b)); \
		FUZZ_ASSERT(!memcmp(&a, &b, sizeof(a)));		\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer_hdr h;
	uint8_t *p;
	size_t n;
	int ret;

	if (size < 1)
		return 0;
	n = size - 1;
	p = malloc(n ? n : 1);
	if (!p)
		return 0;
	memcpy(p, data + 1, n);
	switch (data[0] % 9) {
	case 0:
		ret = peer_hdr_decode(p, n, &h);
		FUZZ_ASSERT(ret == 0 || ret == -EAGAIN || ret == -EBADMSG ||
			    ret == -EPROTONOSUPPORT || ret == -EMSGSIZE);
		FUZZ_ASSERT(ret || h.len <= PEER_MAX_PAYLOAD);
		break;
	case 1:
		ROUND_TRIP(hello, struct peer_hello);
		break;
	case 2:
		ROUND_TRIP(challenge, struct peer_challenge);
		break;
	case 3:
		ROUND_TRIP(proof, struct peer_proof);
		break;
	case 4:
		ROUND_TRIP(endpoint, struct peer_endpoint);
		break;
	case 5:
		ROUND_TRIP(result, struct peer_result);
		break;
	case 6:
		ROUND_TRIP(findings, struct peer_findings);
		break;
	case 7:
		ROUND_TRIP(rail, struct peer_rail);
		break;
	default:
		ROUND_TRIP(error, struct peer_error);
		break;
	}
	free(p);
	return 0;
}
