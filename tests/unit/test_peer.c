// SPDX-License-Identifier: MIT
/* The two-node bootstrap's messages and token proof (access/peer_msg.c,
 * core/sha256.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "access/peer.h"
#include "access/peer_msg.h"
#include "core/clock.h"
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

/* Two-node mode's findings and rails (probes/peer_session.c). */
static void test_findings_round_trip(void **state)
{
	static struct peer_buf b;
	struct peer_findings f = {
		.host = "node-a", .verdict = "READY", .summary = "dmabuf READY",
		.exit_code = 0, .nrails = 8, .nccl_version = "2.28.9",
	}, fd;
	struct peer_rail r = {
		.rail = 7, .gpu_pci = "0000:db:00.0", .nic = "mlx5_11",
		.port = 1, .link_layer = 2, .gid_type = 2, .gid_family = 4,
		.gid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 7, 0, 1 },
		.gid_index = 3, .rate_mbps = 400000, .pcie_mbps = 504128,
		.netdev_mtu = 9000, .prefix_len = 24, .pkey = 0xffff,
		.mechs = PEER_MECH_DMABUF | PEER_MECH_PEERMEM, .state = 4,
		.netdev = "ens11np0",
	}, rd;
	struct peer_result res = { .rail = 7, .status = 12, .bytes = 1 << 20,
				   .nsec = 5000, .detail = "bytes",
				   .xmit_bytes = UINT64_MAX, .rcv_bytes = 4096 },
		resd;

	(void)state;
	memset(&b, 0, sizeof(b));
	peer_findings_encode(&f, &b);
	assert_int_equal(peer_findings_decode(b.data, b.len, &fd), 0);
	assert_memory_equal(&f, &fd, sizeof(f));
	memset(&b, 0, sizeof(b));
	peer_rail_encode(&r, &b);
	assert_false(b.failed);
	assert_int_equal(peer_rail_decode(b.data, b.len, &rd), 0);
	assert_memory_equal(&r, &rd, sizeof(r));
	/* A cut message is refused or decodes to less, never read past. */
	for (size_t n = 0; n < b.len; n++) {
		int ret = peer_rail_decode(b.data, n, &rd);

		assert_true(ret == 0 || ret == -EBADMSG);
	}
	/* Without its NIC (a required field) a rail is refused. */
	memset(&b, 0, sizeof(b));
	peer_put_u32(&b, 1, 0);
	peer_put_bytes(&b, 4, "\1", 1);
	peer_put_bytes(&b, 15, "\1", 1);
	assert_int_equal(peer_rail_decode(b.data, b.len, &rd), -EBADMSG);
	memset(&b, 0, sizeof(b));
	peer_result_encode(&res, &b);
	assert_int_equal(peer_result_decode(b.data, b.len, &resd), 0);
	assert_memory_equal(&res, &resd, sizeof(res));
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


static void test_endpoint_parse(void **state)
{
	char h[64], p[16];

	(void)state;
	assert_int_equal(peer_parse_endpoint("node-b", h, sizeof(h), p,
					     sizeof(p)), 0);
	assert_string_equal(h, "node-b");
	assert_string_equal(p, "18515");
	assert_int_equal(peer_parse_endpoint("10.0.0.2:9000", h, sizeof(h),
					     p, sizeof(p)), 0);
	assert_string_equal(h, "10.0.0.2");
	assert_string_equal(p, "9000");
	assert_int_equal(peer_parse_endpoint("9000", h, sizeof(h), p,
					     sizeof(p)), 0);
	assert_string_equal(h, "");
	assert_string_equal(p, "9000");
	assert_int_equal(peer_parse_endpoint("[fe80::1]:7", h, sizeof(h), p,
					     sizeof(p)), 0);
	assert_string_equal(h, "fe80::1");
	assert_int_equal(peer_parse_endpoint("fe80::1", h, sizeof(h), p,
					     sizeof(p)), -EINVAL);
	assert_int_equal(peer_parse_endpoint("host:0", h, sizeof(h), p,
					     sizeof(p)), -EINVAL);
	assert_int_equal(peer_parse_endpoint("host:65536", h, sizeof(h), p,
					     sizeof(p)), -EINVAL);
	assert_int_equal(peer_parse_endpoint("host:9x", h, sizeof(h), p,
					     sizeof(p)), -EINVAL);
	assert_int_equal(peer_parse_endpoint("", h, sizeof(h), p, sizeof(p)),
			 -EINVAL);
}

/* A loopback port nobody holds right now. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* A listener in a child: exit 0 when it served a peer with `token` and
 * echoed one message back, else 10 + its -errno. */
static pid_t listener(const char *ep, const char *token, double secs)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		static uint8_t payload[PEER_MAX_PAYLOAD];
		static struct peer_buf b;
		struct peer_conn c = { .deadline_ms = now_ms() + secs * 1e3 };
		uint16_t type;
		size_t len;
		int ret = peer_listen(&c, ep, token, "node-a");

		if (!ret)
			ret = peer_recv(&c, &type, payload, &len);
		if (!ret) {
			memcpy(b.data, payload, len);
			b.len = len;
			ret = peer_send(&c, type, &b);
		}
		peer_close(&c);
		_exit(ret ? 10 + (-ret & 0x7f) : 0);
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* Over TCP: a wrong token is refused and told so, garbage is dropped, the
 * right peer then gets through; every wait ends by the deadline. */
static void test_channel(void **state)
{
	static uint8_t payload[PEER_MAX_PAYLOAD];
	static struct peer_buf b;
	struct peer_endpoint e = { .rail = 7, .nic = "rxe0", .port = 1,
				   .mtu = 3, .mech = 1, .qpn = 17 }, d;
	char ep[32];
	struct peer_conn c;
	double t0;
	uint16_t type;
	size_t len;
	pid_t pid;
	int fd;

	(void)state;
	snprintf(ep, sizeof(ep), "127.0.0.1:%d", free_port());
	pid = listener(ep, "right", 20);
	/* Wrong token: refused with the reason. */
	memset(&c, 0, sizeof(c));
	c.deadline_ms = now_ms() + 10e3;
	assert_int_equal(peer_connect(&c, ep, "wrong", "node-b", "job1"),
			 -EACCES);
	assert_non_null(strstr(c.err, "wrong token"));
	/* Not gdrcheck at all: the listener drops it and waits on. */
	memset(&c, 0, sizeof(c));
	c.deadline_ms = now_ms() + 10e3;
	{
		struct sockaddr_in a = { .sin_family = AF_INET };

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)atoi(strchr(ep, ':') + 1));
		fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&a,
					 sizeof(a)), 0);
		assert_true(write(fd, "GET / HTTP/1.1\r\n\r\n", 18) == 18);
		close(fd);
	}
	/* The right token. */
	assert_int_equal(peer_connect(&c, ep, "right", "node-b", "job1"), 0);
	assert_string_equal(c.host, "node-a");
	memset(&b, 0, sizeof(b));
	peer_endpoint_encode(&e, &b);
	assert_int_equal(peer_send(&c, PEER_ENDPOINT, &b), 0);
	assert_int_equal(peer_recv(&c, &type, payload, &len), 0);
	assert_int_equal(type, PEER_ENDPOINT);
	assert_int_equal(peer_endpoint_decode(payload, len, &d), 0);
	assert_int_equal(d.qpn, 17);
	peer_close(&c);
	assert_int_equal(reap(pid), 0);

	/* Nobody comes: the listener gives up at its deadline. */
	snprintf(ep, sizeof(ep), "127.0.0.1:%d", free_port());
	t0 = now_ms();
	pid = listener(ep, "right", 0.5);
	assert_int_equal(reap(pid), 10 + ETIMEDOUT);
	assert_true(now_ms() - t0 < 5000);

	/* A listener that accepts and then never answers: the connector's
	 * deadline ends the wait. */
	{
		struct sockaddr_in a = { .sin_family = AF_INET };
		int lfd = socket(AF_INET, SOCK_STREAM, 0);
		socklen_t l = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(listen(lfd, 1), 0);
		assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &l), 0);
		snprintf(ep, sizeof(ep), "127.0.0.1:%d", ntohs(a.sin_port));
		memset(&c, 0, sizeof(c));
		t0 = now_ms();
		c.deadline_ms = t0 + 500;
		assert_int_equal(peer_connect(&c, ep, "right", "node-b", NULL),
				 -ETIMEDOUT);
		assert_true(now_ms() - t0 < 5000);
		close(lfd);
	}
	/* Nobody listening: refused until the deadline, then said so. */
	snprintf(ep, sizeof(ep), "127.0.0.1:%d", free_port());
	memset(&c, 0, sizeof(c));
	c.deadline_ms = now_ms() + 500;
	assert_int_equal(peer_connect(&c, ep, "right", "node-b", NULL),
			 -ECONNREFUSED);
	assert_non_null(strstr(c.err, "until the deadline"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_endpoint_round_trip),
		cmocka_unit_test(test_findings_round_trip),
		cmocka_unit_test(test_field_rules),
		cmocka_unit_test(test_token_proof),
		cmocka_unit_test(test_endpoint_parse),
		cmocka_unit_test(test_channel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
