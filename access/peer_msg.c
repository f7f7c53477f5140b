// SPDX-License-Identifier: MIT
/*
 * The two-node bootstrap's messages: the header and the tag/length/value
 * fields of each message type, both ways (see peer_msg.h).
 */
#include "access/peer_msg.h"

#include <errno.h>
#include <string.h>

#include "core/sha256.h"

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

int peer_hdr_decode(const uint8_t *buf, size_t len, struct peer_hdr *h)
{
	if (len < PEER_HDR_LEN)
		return -EAGAIN;
	if (be32(buf) != PEER_MAGIC)
		return -EBADMSG;
	h->version = be16(buf + 4);
	h->type = be16(buf + 6);
	h->len = be32(buf + 8);
	if (h->version != PEER_VERSION)
		return -EPROTONOSUPPORT;
	if (!h->type || h->type >= PEER_TYPE_MAX)
		return -EBADMSG;
	if (h->len > PEER_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

void peer_hdr_encode(uint8_t out[PEER_HDR_LEN], uint16_t type, uint32_t len)
{
	put_be32(out, PEER_MAGIC);
	put_be16(out + 4, PEER_VERSION);
	put_be16(out + 6, type);
	put_be32(out + 8, len);
}

void peer_put_bytes(struct peer_buf *b, uint16_t tag, const void *v,
		    size_t len)
{
	if (b->failed || len > UINT16_MAX ||
	    b->len + 4 + len > sizeof(b->data)) {
		b->failed = true;
		return;
	}
	put_be16(b->data + b->len, tag);
	put_be16(b->data + b->len + 2, (uint16_t)len);
	if (len)
		memcpy(b->data + b->len + 4, v, len);
	b->len += 4 + len;
}

void peer_put_u32(struct peer_buf *b, uint16_t tag, uint32_t v)
{
	uint8_t be[4];

	put_be32(be, v);
	peer_put_bytes(b, tag, be, sizeof(be));
}

void peer_put_u64(struct peer_buf *b, uint16_t tag, uint64_t v)
{
	uint8_t be[8];

	put_be32(be, (uint32_t)(v >> 32));
	put_be32(be + 4, (uint32_t)v);
	peer_put_bytes(b, tag, be, sizeof(be));
}

void peer_put_str(struct peer_buf *b, uint16_t tag, const char *s)
{
	peer_put_bytes(b, tag, s, strlen(s));
}

/*
 * A message's fields: where each goes, its kind and its size. A table per
 * message type keeps the checks in one place (decode_fields).
 */
enum fkind { F_U8, F_U16, F_U32, F_U64, F_BYTES, F_STR };

struct field {
	uint16_t tag;
	enum fkind kind;
	size_t off, size;	/* F_BYTES: exact length; F_STR: buffer size */
	bool required;
};

#define FLD(t, k, type, member, req) \
	{ .tag = (t), .kind = (k), .off = offsetof(type, member), \
	  .size = sizeof(((type *)0)->member), .required = (req) }

static size_t kind_size(enum fkind k)
{
	return k == F_U8 ? 1 : k == F_U16 ? 2 : k == F_U32 ? 4 : 8;
}

static int store(const struct field *f, void *msg, const uint8_t *v,
		 size_t len)
{
	uint8_t *dst = (uint8_t *)msg + f->off;
	uint16_t x16;
	uint32_t x32;
	uint64_t x64;

	if (f->kind == F_STR) {
		if (len >= f->size || memchr(v, '\0', len))
			return -EBADMSG;
		memcpy(dst, v, len);
		dst[len] = '\0';
		return 0;
	}
	if (len != (f->kind == F_BYTES ? f->size : kind_size(f->kind)))
		return -EBADMSG;
	switch (f->kind) {
	case F_U8:
		dst[0] = v[0];
		break;
	case F_U16:
		x16 = be16(v);
		memcpy(dst, &x16, sizeof(x16));
		break;
	case F_U32:
		x32 = be32(v);
		memcpy(dst, &x32, sizeof(x32));
		break;
	case F_U64:
		x64 = be64(v);
		memcpy(dst, &x64, sizeof(x64));
		break;
	default:
		memcpy(dst, v, len);
		break;
	}
	return 0;
}

static int decode_fields(const struct field *fs, size_t nf, const uint8_t *p,
			 size_t len, void *msg, size_t msg_size)
{
	uint64_t seen = 0;
	size_t off = 0;

	memset(msg, 0, msg_size);
	while (off < len) {
		uint16_t tag, flen;
		int ret;

		if (len - off < 4)
			return -EBADMSG;
		tag = be16(p + off);
		flen = be16(p + off + 2);
		off += 4;
		if (flen > len - off)
			return -EBADMSG;
		for (size_t i = 0; i < nf; i++) {
			if (fs[i].tag != tag)
				continue;
			if (seen & 1ULL << i)
				return -EBADMSG;	/* a tag twice */
			seen |= 1ULL << i;
			ret = store(&fs[i], msg, p + off, flen);
			if (ret)
				return ret;
		}
		off += flen;			/* unknown tags: skipped */
	}
	for (size_t i = 0; i < nf; i++)
		if (fs[i].required && !(seen & 1ULL << i))
			return -EBADMSG;
	return 0;
}

static void encode_fields(const struct field *fs, size_t nf, const void *msg,
			  struct peer_buf *b)
{
	const uint8_t *src;

	for (size_t i = 0; i < nf; i++) {
		src = (const uint8_t *)msg + fs[i].off;
		switch (fs[i].kind) {
		case F_STR:
			peer_put_bytes(b, fs[i].tag, src,
				       strnlen((const char *)src, fs[i].size - 1));
			break;
		case F_BYTES:
			peer_put_bytes(b, fs[i].tag, src, fs[i].size);
			break;
		case F_U8:
			peer_put_bytes(b, fs[i].tag, src, 1);
			break;
		case F_U16: {
			uint16_t v;
			uint8_t be[2];

			memcpy(&v, src, sizeof(v));
			put_be16(be, v);
			peer_put_bytes(b, fs[i].tag, be, sizeof(be));
			break;
		}
		case F_U32: {
			uint32_t v;

			memcpy(&v, src, sizeof(v));
			peer_put_u32(b, fs[i].tag, v);
			break;
		}
		case F_U64: {
			uint64_t v;

			memcpy(&v, src, sizeof(v));
			peer_put_u64(b, fs[i].tag, v);
			break;
		}
		}
	}
}

static const struct field hello_fields[] = {
	FLD(1, F_U16, struct peer_hello, min_version, true),
	FLD(2, F_U16, struct peer_hello, max_version, true),
	FLD(3, F_STR, struct peer_hello, host, true),
	FLD(4, F_STR, struct peer_hello, run_id, false),
	FLD(5, F_BYTES, struct peer_hello, nonce, true),
};

static const struct field challenge_fields[] = {
	FLD(1, F_BYTES, struct peer_challenge, nonce, true),
};

static const struct field proof_fields[] = {
	FLD(1, F_BYTES, struct peer_proof, mac, true),
};

static const struct field endpoint_fields[] = {
	FLD(1, F_U32, struct peer_endpoint, rail, true),
	FLD(2, F_STR, struct peer_endpoint, gpu_pci, false),
	FLD(3, F_STR, struct peer_endpoint, nic, true),
	FLD(4, F_U8, struct peer_endpoint, port, true),
	FLD(5, F_U8, struct peer_endpoint, link_layer, true),
	FLD(6, F_U16, struct peer_endpoint, lid, false),
	FLD(7, F_BYTES, struct peer_endpoint, gid, false),
	FLD(8, F_U8, struct peer_endpoint, gid_index, false),
	FLD(9, F_U8, struct peer_endpoint, gid_type, false),
	FLD(10, F_U8, struct peer_endpoint, mtu, true),
	FLD(11, F_U8, struct peer_endpoint, mech, true),
	FLD(12, F_U32, struct peer_endpoint, qpn, true),
	FLD(13, F_U32, struct peer_endpoint, psn, true),
	FLD(14, F_U32, struct peer_endpoint, rkey, true),
	FLD(15, F_U64, struct peer_endpoint, addr, true),
	FLD(16, F_U64, struct peer_endpoint, len, true),
	FLD(17, F_U32, struct peer_endpoint, pattern, true),
};

static const struct field result_fields[] = {
	FLD(1, F_U32, struct peer_result, rail, true),
	FLD(2, F_U32, struct peer_result, status, true),
	FLD(3, F_U64, struct peer_result, bytes, false),
	FLD(4, F_U64, struct peer_result, nsec, false),
	FLD(5, F_STR, struct peer_result, detail, false),
	FLD(6, F_U64, struct peer_result, xmit_bytes, false),
	FLD(7, F_U64, struct peer_result, rcv_bytes, false),
};

static const struct field findings_fields[] = {
	FLD(1, F_STR, struct peer_findings, host, true),
	FLD(2, F_STR, struct peer_findings, verdict, true),
	FLD(3, F_STR, struct peer_findings, summary, false),
	FLD(4, F_U32, struct peer_findings, exit_code, true),
	FLD(5, F_U32, struct peer_findings, nrails, true),
	FLD(6, F_STR, struct peer_findings, nccl_version, false),
};

static const struct field rail_fields[] = {
	FLD(1, F_U32, struct peer_rail, rail, true),
	FLD(2, F_STR, struct peer_rail, gpu_pci, false),
	FLD(3, F_STR, struct peer_rail, nic, true),
	FLD(4, F_U8, struct peer_rail, port, true),
	FLD(5, F_U8, struct peer_rail, link_layer, false),
	FLD(6, F_U8, struct peer_rail, gid_type, false),
	FLD(7, F_U8, struct peer_rail, gid_family, false),
	FLD(8, F_BYTES, struct peer_rail, gid, false),
	FLD(9, F_U32, struct peer_rail, gid_index, false),
	FLD(10, F_U32, struct peer_rail, rate_mbps, false),
	FLD(11, F_U32, struct peer_rail, pcie_mbps, false),
	FLD(12, F_U32, struct peer_rail, netdev_mtu, false),
	FLD(13, F_U32, struct peer_rail, prefix_len, false),
	FLD(14, F_U16, struct peer_rail, pkey, false),
	FLD(15, F_U8, struct peer_rail, mechs, true),
	FLD(16, F_U8, struct peer_rail, state, false),
	FLD(17, F_STR, struct peer_rail, netdev, false),
};

static const struct field error_fields[] = {
	FLD(1, F_U32, struct peer_error, code, true),
	FLD(2, F_STR, struct peer_error, reason, false),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One decoder and one encoder per message type, from its table. */
#define PEER_CODEC(name, fields)					\
int peer_##name##_decode(const uint8_t *p, size_t len,			\
			 struct peer_##name *m)				\
{									\
	return decode_fields(fields, N(fields), p, len, m, sizeof(*m));	\
}									\
void peer_##name##_encode(const struct peer_##name *m,			\
			  struct peer_buf *b)				\
{									\
	encode_fields(fields, N(fields), m, b);				\
}

PEER_CODEC(hello, hello_fields)
PEER_CODEC(challenge, challenge_fields)
PEER_CODEC(proof, proof_fields)
PEER_CODEC(endpoint, endpoint_fields)
PEER_CODEC(result, result_fields)
PEER_CODEC(error, error_fields)
PEER_CODEC(findings, findings_fields)
PEER_CODEC(rail, rail_fields)

void peer_proof_compute(const char *token,
			const uint8_t listener_nonce[PEER_NONCE_LEN],
			const uint8_t connector_nonce[PEER_NONCE_LEN],
			uint8_t mac[PEER_MAC_LEN])
{
	static const char label[] = "gdrcheck-peer-1";
	uint8_t msg[sizeof(label) - 1 + 2 * PEER_NONCE_LEN];

	memcpy(msg, label, sizeof(label) - 1);
	memcpy(msg + sizeof(label) - 1, listener_nonce, PEER_NONCE_LEN);
	memcpy(msg + sizeof(label) - 1 + PEER_NONCE_LEN, connector_nonce,
	       PEER_NONCE_LEN);
	hmac_sha256(token, strlen(token), msg, sizeof(msg), mac);
}

bool peer_mac_equal(const uint8_t a[PEER_MAC_LEN],
		    const uint8_t b[PEER_MAC_LEN])
{
	uint8_t diff = 0;

	for (int i = 0; i < PEER_MAC_LEN; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}
