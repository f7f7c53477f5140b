/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PEER_SESSION_H
#define GDRCHECK_PEER_SESSION_H

/*
 * Two-node mode around the node's own check (gdrcheck --listen / --peer):
 * after the gate chain and the verdict, reach the other node over the
 * bootstrap channel, exchange both verdicts and rails, run the transfers
 * (the WSTAGE_PEER worker, access/peer_run.h) with the port counters read
 * before and after, and exchange what each side saw. The peer.* gates
 * (probes/peer.c) judge what this leaves in ctx->peer.
 */
#include "access/peer_run.h"
#include "gate/context.h"

/* One side's port counters, in bytes (or packets: in_packets). */
struct peer_counters {
	bool read;
	bool in_packets;	/* only hw_counters' packet counts exist */
	unsigned long long xmit, rcv;
};

struct peer_session {
	bool listener;
	const char *endpoint;
	struct peer_conn conn;
	int conn_ret;			/* listen/connect: 0 or -errno */
	int exchange_ret;		/* the findings: 0 or -errno */
	char exchange_err[320];
	struct peer_findings mine, theirs;
	int nmine, ntheirs;
	struct peer_rail mine_rail[PEER_MAX_RAILS];
	struct peer_rail their_rail[PEER_MAX_RAILS];
	/* This side's rail k: the GPU subject and its NIC subject. */
	int mine_gpu[PEER_MAX_RAILS], mine_nic[PEER_MAX_RAILS];
	char mine_why[PEER_MAX_RAILS][96];	/* a GPU without a rail: why */
	struct peer_plan plan;
	struct vendor_facts *vf;	/* the transfer stage's, or NULL */
	struct peer_counters before[PEER_MAX_RAILS], after[PEER_MAX_RAILS];
	/* The other side's word on each plan rail (the final exchange). */
	struct peer_result their_end[PEER_MAX_RAILS];
	bool have_their_end[PEER_MAX_RAILS];
	int final_ret;
	char final_err[320];
	/* /proc/net/route, read once when a rail is RoCE IPv4; NULL when
	 * unreadable (or not read: routes_read). */
	char *routes;
	bool routes_read;
	/* RoCE IPv4: the route and neighbour of each plan rail's peer address
	 * as the kernel saw them after the transfers ("" when not RoCE v4). */
	char neigh[PEER_MAX_RAILS][160];
};

/* Run two-node mode (nothing when neither --listen nor --peer). */
void peer_session_run(struct gdr_ctx *ctx, const struct vendor_options *vo);
void peer_session_free(struct gdr_ctx *ctx);

/* The plan index of this side's rail k, or -1. */
int peer_plan_index(const struct peer_session *s, uint32_t rail);

#endif
