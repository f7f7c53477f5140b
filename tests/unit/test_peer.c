// SPDX-License-Identifier: MIT
/* The two-node bootstrap's messages and token proof (access/peer_msg.c,
 * core/sha256.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "access/peer_msg.h"
#include "core/sha256.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha_of(const void *msg, size_t len, char out[65])
{
	struct sha256 s;
	uint8_t d[SHA256_LEN];

	sha256_init(&s);
	sha256_update(&s, msg, len);
	sha256_final(&s, d);
	hex(d, sizeof(d), out);
}

/* FIPS 180-4 examples and RFC 4231 test cases 1, 2 and 6. */
static void test_sha256_vectors(void **state)
{
	static const char two_blocks[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char out[65], big[1000];
	uint8_t mac[SHA256_LEN], key[131];
	struct sha256 s;
	uint8_t d[SHA256_LEN];

	(void)state;
	sha_of("abc", 3, out);
	assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223"
				 "b00361a396177a9cb410ff61f20015ad");
	sha_of("", 0, out);
	assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb924"
				 "27ae41e4649b934ca495991b7852b855");
	sha_of(two_blocks, strlen(two_blocks), out);
	assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039"
				 "a33ce45964ff2167f6ecedd419db06c1");
	/* A million 'a', fed in pieces that straddle blocks. */
	memset(big, 'a', sizeof(big));
	sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sha256_update(&s, big, sizeof(big));
	sha256_final(&s, d);
	hex(d, sizeof(d), out);
	assert_string_equal(out, "cdc76e5c9914fb9281a1c7e284d73e67"
				 "f1809a48a497200e046d39ccc7112cd0");

	memset(key, 0x0b, 20);
	hmac_sha256(key, 20, "Hi There", 8, mac);
	hex(mac, sizeof(mac), out);
	assert_string_equal(out, "b0344c61d8db38535ca8afceaf0bf12b"
				 "881dc200c9833da726e9376c2e32cff7");
	hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
	hex(mac, sizeof(mac), out);
	assert_string_equal(out, "5bdcc146bf60754e6a042426089575c7"
				 "5a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, sizeof(key));
	hmac_sha256(key, sizeof(key),
		    "Test Using Larger Than Block-Size Key - Hash Key First",
		    54, mac);
	hex(mac, sizeof(mac), out);
	assert_string_equal(out, "60e431591ee0b67f0d8a26aacbf5b77f"
				 "8e0bc6213728c5140546040f0ee37f54");
}

static void test_header(void **state)
{
	uint8_t h[PEER_HDR_LEN];
	struct peer_hdr hd;

	(void)state;
	peer_hdr_encode(h, PEER_ENDPOINT, 123);
	assert_int_equal(peer_hdr_decode(h, sizeof(h), &hd), 0);
	assert_int_equal(hd.type, PEER_ENDPOINT);
	assert_int_equal(hd.len, 123);
	assert_int_equal(peer_hdr_decode(h, sizeof(h) - 1, &hd), -EAGAIN);
	/* Another program on the port: not our magic. */
	assert_int_equal(peer_hdr_decode((const uint8_t *)"GET / HTTP/1.1",
					 14, &hd), -EBADMSG);
	peer_hdr_encode(h, PEER_HELLO, PEER_MAX_PAYLOAD + 1);
	assert_int_equal(peer_hdr_decode(h, sizeof(h), &hd), -EMSGSIZE);
	peer_hdr_encode(h, PEER_TYPE_MAX, 0);
	assert_int_equal(peer_hdr_decode(h, sizeof(h), &hd), -EBADMSG);
	peer_hdr_encode(h, 0, 0);
	assert_int_equal(peer_hdr_decode(h, sizeof(h), &hd), -EBADMSG);
	peer_hdr_encode(h, PEER_HELLO, 0);
	h[5] = 2;				/* version 2 */
	assert_int_equal(peer_hdr_decode(h, sizeof(h), &hd),
			 -EPROTONOSUPPORT);
}

static void test_endpoint_round_trip(void **state)
{
	static struct peer_buf b;
	struct peer_endpoint e = {
		.rail = 3, .gpu_pci = "0000:1b:00.0", .nic = "mlx5_3",
		.port = 1, .link_layer = 2, .gid = { 0, 0, 0, 0, 0, 0, 0, 0,
						     0, 0, 0xff, 0xff, 10, 0,
						     0, 7 },
		.gid_index = 3, .gid_type = 1, .mtu = 5, .mech = 1,
		.qpn = 0x123456, .psn = 0xabcdef, .rkey = 0xdeadbeef,
		.addr = 0x7f0000001000ULL, .len = 1ULL << 33,
		.pattern = 0x5eed,
	}, d;

	(void)state;
	memset(&b, 0, sizeof(b));
	peer_endpoint_encode(&e, &b);
	assert_false(b.failed);
	assert_int_equal(peer_endpoint_decode(b.data, b.len, &d), 0);
	assert_memory_equal(&e, &d, sizeof(e));
	/* Every truncation is refused, never read past. */
	for (size_t n = 0; n < b.len; n++)
		assert_int_equal(peer_endpoint_decode(b.data, n, &d), -EBADMSG);
}

static void test_field_rules(void **state)
{
	static struct peer_buf b;
	struct peer_hello h = { .min_version = 1, .max_version = 1,
				.host = "node-a", .run_id = "job 42" }, d;
	struct peer_error er;

	(void)state;
	memset(&b, 0, sizeof(b));
	peer_hello_encode(&h, &b);
	/* A newer peer's extra field is skipped. */
	peer_put_str(&b, 99, "from version 2");
	assert_int_equal(peer_hello_decode(b.data, b.len, &d), 0);
	assert_string_equal(d.host, "node-a");
	/* A field twice. */
	peer_put_str(&b, 3, "node-b");
	assert_int_equal(peer_hello_decode(b.data, b.len, &d), -EBADMSG);
	/* A required field missing. */
	memset(&b, 0, sizeof(b));
	peer_put_u32(&b, 1, 5);
	assert_int_equal(peer_error_decode(b.data, b.len, &er), 0);
	assert_int_equal(er.code, 5);
	memset(&b, 0, sizeof(b));
	peer_put_str(&b, 2, "no code");
	assert_int_equal(peer_error_decode(b.data, b.len, &er), -EBADMSG);
	/* A number of the wrong width; a string with a NUL; one too long. */
	memset(&b, 0, sizeof(b));
	peer_put_u64(&b, 1, 5);
	assert_int_equal(peer_error_decode(b.data, b.len, &er), -EBADMSG);
	memset(&b, 0, sizeof(b));
	peer_put_u32(&b, 1, 5);
	peer_put_bytes(&b, 2, "a\0b", 3);
	assert_int_equal(peer_error_decode(b.data, b.len, &er), -EBADMSG);
	{
		char long_reason[300];

		memset(long_reason, 'x', sizeof(long_reason) - 1);
		long_reason[sizeof(long_reason) - 1] = '\0';
		memset(&b, 0, sizeof(b));
		peer_put_u32(&b, 1, 5);
		peer_put_str(&b, 2, long_reason);
		assert_int_equal(peer_error_decode(b.data, b.len, &er),
				 -EBADMSG);
	}
	/* A field whose length runs past the payload. */
	memset(&b, 0, sizeof(b));
	peer_put_u32(&b, 1, 5);
	b.data[3] = 200;
	assert_int_equal(peer_error_decode(b.data, b.len, &er), -EBADMSG);
	/* The builder stops at the payload limit instead of overrunning. */
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 20000 && !b.failed; i++)
		peer_put_u32(&b, 1, (uint32_t)i);
	assert_true(b.failed);
	assert_true(b.len <= sizeof(b.data));
}

static void test_token_proof(void **state)
{
	uint8_t ln[PEER_NONCE_LEN], cn[PEER_NONCE_LEN];
	uint8_t a[PEER_MAC_LEN], b[PEER_MAC_LEN];

	(void)state;
	memset(ln, 1, sizeof(ln));
	memset(cn, 2, sizeof(cn));
	peer_proof_compute("s3cret", ln, cn, a);
	peer_proof_compute("s3cret", ln, cn, b);
	assert_true(peer_mac_equal(a, b));
	peer_proof_compute("s3cres", ln, cn, b);
	assert_false(peer_mac_equal(a, b));
	/* A replayed proof does not answer another challenge. */
	ln[0] = 9;
	peer_proof_compute("s3cret", ln, cn, b);
	assert_false(peer_mac_equal(a, b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_endpoint_round_trip),
		cmocka_unit_test(test_field_rules),
		cmocka_unit_test(test_token_proof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
