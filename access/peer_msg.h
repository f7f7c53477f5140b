/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PEER_MSG_H
#define GDRCHECK_PEER_MSG_H

/*
 * The two-node bootstrap's messages (gdrcheck --listen / --peer), encoded
 * and decoded here without I/O, so every byte a peer sends is checked
 * before anything acts on it:
 *
 *   header   magic "GDRP", version (16 bits), type (16), payload length
 *            (32), all big-endian; a payload is at most PEER_MAX_PAYLOAD
 *   payload  fields as tag (16) / length (16) / value; a reader skips tags
 *            it does not know (a newer peer may add fields), refuses a tag
 *            seen twice, a field of the wrong length, a string with a NUL
 *            or too long for its place, and a message without a required
 *            field
 *
 * Decoders return 0, -EAGAIN (the header is not all there yet), -EBADMSG
 * (not gdrcheck's magic, a malformed payload), -EPROTONOSUPPORT (another
 * protocol version) or -EMSGSIZE (a payload over the limit).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PEER_MAGIC		0x47445250u	/* "GDRP" */
#define PEER_VERSION		1
#define PEER_HDR_LEN		12
#define PEER_MAX_PAYLOAD	65536
#define PEER_NONCE_LEN		16
#define PEER_MAC_LEN		32

enum peer_type {
	PEER_HELLO = 1,		/* connector -> listener: who, a nonce */
	PEER_CHALLENGE,		/* listener -> connector: its nonce */
	PEER_PROOF,		/* connector: HMAC-SHA256(token, nonces) */
	PEER_ENDPOINT,		/* one rail's QP and buffer, each side */
	PEER_RESULT,		/* one rail's outcome as the sender saw it */
	PEER_ERROR,		/* a refusal, with its reason */
	PEER_BYE,
	PEER_FINDINGS,		/* what the sender's own gate chain found */
	PEER_RAIL,		/* one rail of the sender, after FINDINGS */
	PEER_TYPE_MAX
};

struct peer_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t len;
};

int peer_hdr_decode(const uint8_t *buf, size_t len, struct peer_hdr *h);
void peer_hdr_encode(uint8_t out[PEER_HDR_LEN], uint16_t type, uint32_t len);

/* A payload being built; `failed` once a field did not fit. */
struct peer_buf {
	uint8_t data[PEER_MAX_PAYLOAD];
	size_t len;
	bool failed;
};

void peer_put_bytes(struct peer_buf *b, uint16_t tag, const void *v,
		    size_t len);
void peer_put_u32(struct peer_buf *b, uint16_t tag, uint32_t v);
void peer_put_u64(struct peer_buf *b, uint16_t tag, uint64_t v);
void peer_put_str(struct peer_buf *b, uint16_t tag, const char *s);

struct peer_hello {
	uint16_t min_version, max_version;
	char host[256];
	char run_id[64];		/* the sweep's or Slurm job's id */
	uint8_t nonce[PEER_NONCE_LEN];
};

struct peer_challenge {
	uint8_t nonce[PEER_NONCE_LEN];
};

struct peer_proof {
	uint8_t mac[PEER_MAC_LEN];
};

/* One side of a rail: what the other side needs to reach it. */
struct peer_endpoint {
	uint32_t rail;			/* index in the sweep's rail list */
	char gpu_pci[32];		/* the GPU whose buffer it is */
	char nic[64];			/* RDMA device */
	uint8_t port;
	uint8_t link_layer;		/* IBV_LINK_LAYER_* */
	uint16_t lid;
	uint8_t gid[16];
	uint8_t gid_index;
	uint8_t gid_type;		/* 0 IB/RoCE v1, 1 RoCE v2 */
	uint8_t mtu;			/* enum ibv_mtu, active */
	uint8_t mech;			/* 1 DMA-BUF, 2 peermem */
	uint32_t qpn, psn;
	uint32_t rkey;
	uint64_t addr, len;
	uint32_t pattern;		/* the transfer's pattern seed */
};

struct peer_result {
	uint32_t rail;
	int32_t status;			/* 0 ok, else -errno or a wc status */
	uint64_t bytes;
	uint64_t nsec;
	char detail[256];
	/* The rail's port counters moved by the run, in bytes (the final
	 * exchange; UINT64_MAX: unreadable). */
	uint64_t xmit_bytes, rcv_bytes;
};

/* The sender's own verdict, before any rail is tested. */
struct peer_findings {
	char host[256];
	char verdict[16];		/* "READY", "BLOCKED", ... */
	char summary[256];		/* its first line, for the other report */
	uint32_t exit_code;
	uint32_t nrails;		/* PEER_RAIL messages that follow */
	char nccl_version[16];
};

/* One rail as its side sees it: GPU k and the NIC NCCL would use for it. */
#define PEER_MECH_DMABUF	1u
#define PEER_MECH_PEERMEM	2u
struct peer_rail {
	uint32_t rail;			/* GPU index k (PCI order) */
	char gpu_pci[32];
	char nic[64];
	uint8_t port;
	uint8_t link_layer;		/* IBV_LINK_LAYER_*; 0 unknown */
	uint8_t gid_type;		/* 0 unknown, 1 IB/RoCE v1, 2 RoCE v2 */
	uint8_t gid_family;		/* 0 none, 4 IPv4-mapped, 6 IPv6 */
	uint8_t gid[16];
	uint32_t gid_index;		/* UINT32_MAX: none (IB) */
	uint32_t rate_mbps;		/* port rate; 0 unknown */
	uint32_t pcie_mbps;		/* the smaller PCIe link on GPU<->NIC */
	uint32_t netdev_mtu;		/* RoCE: the netdev's MTU; 0 unknown */
	uint32_t prefix_len;		/* RoCE IPv4: the address's prefix */
	uint16_t pkey;			/* P_Key at index 0 */
	uint8_t mechs;			/* PEER_MECH_* usable on this side */
	uint8_t state;			/* IBV_PORT_* */
	char netdev[32];
};

struct peer_error {
	int32_t code;			/* -errno */
	char reason[256];
};

int peer_hello_decode(const uint8_t *p, size_t len, struct peer_hello *m);
void peer_hello_encode(const struct peer_hello *m, struct peer_buf *b);
int peer_challenge_decode(const uint8_t *p, size_t len,
			  struct peer_challenge *m);
void peer_challenge_encode(const struct peer_challenge *m,
			   struct peer_buf *b);
int peer_proof_decode(const uint8_t *p, size_t len, struct peer_proof *m);
void peer_proof_encode(const struct peer_proof *m, struct peer_buf *b);
int peer_endpoint_decode(const uint8_t *p, size_t len,
			 struct peer_endpoint *m);
void peer_endpoint_encode(const struct peer_endpoint *m, struct peer_buf *b);
int peer_result_decode(const uint8_t *p, size_t len, struct peer_result *m);
void peer_result_encode(const struct peer_result *m, struct peer_buf *b);
int peer_error_decode(const uint8_t *p, size_t len, struct peer_error *m);
void peer_error_encode(const struct peer_error *m, struct peer_buf *b);
int peer_findings_decode(const uint8_t *p, size_t len,
			 struct peer_findings *m);
void peer_findings_encode(const struct peer_findings *m, struct peer_buf *b);
int peer_rail_decode(const uint8_t *p, size_t len, struct peer_rail *m);
void peer_rail_encode(const struct peer_rail *m, struct peer_buf *b);

/* The connector's proof: HMAC-SHA256(token, "gdrcheck-peer-1" || listener
 * nonce || connector nonce), so the token never crosses the wire. */
void peer_proof_compute(const char *token,
			const uint8_t listener_nonce[PEER_NONCE_LEN],
			const uint8_t connector_nonce[PEER_NONCE_LEN],
			uint8_t mac[PEER_MAC_LEN]);
/* Constant-time comparison of two MACs. */
bool peer_mac_equal(const uint8_t a[PEER_MAC_LEN],
		    const uint8_t b[PEER_MAC_LEN]);

#endif
