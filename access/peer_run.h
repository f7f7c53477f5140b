/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PEER_RUN_H
#define GDRCHECK_PEER_RUN_H

/*
 * Two-node mode's worker stage (WSTAGE_PEER): for each rail both sides
 * share and each mechanism that works on both, an RC QP between this
 * node's NIC and the other node's, over GPU buffers registered the way
 * NCCL registers them; RDMA WRITE into the other GPU and RDMA READ back,
 * in both directions, every transfer with a pattern of its own checked
 * where it landed, then a bounded bandwidth run and an 8-byte latency
 * probe. The two workers go step by step over the bootstrap channel
 * (access/peer.h), every wait bounded.
 */
#include "access/peer.h"
#include "access/vendor.h"

struct peer_plan_rail {
	int ordinal;			/* the GPU's CUDA ordinal */
	char nic[64];
	int port;
	int gid_index;			/* RoCE: NCCL's GID; -1 IB */
	unsigned int mechs;		/* PEER_MECH_* that work on both sides */
	struct peer_rail remote;	/* the other side's findings */
};

struct peer_plan {
	struct peer_conn *conn;		/* authenticated */
	bool active;			/* the connector posts first */
	int nrails;
	struct peer_plan_rail rails[PEER_MAX_RAILS];
	size_t bytes;			/* each buffer region */
	double bw_ms;			/* bound of one bandwidth run */
	double step_ms;			/* bound of one wait on the peer */
};

void peer_stage(const struct vendor_options *opt, struct vendor_facts *vf,
		struct stage_status *st);

/* Bytes of an enum ibv_mtu (1..5), 0 for anything else. */
unsigned int peer_mtu_bytes(unsigned int mtu);

#endif
