// SPDX-License-Identifier: MIT
/*
 * The peer layer: what two-node mode found (probes/peer_session.c), judged
 * per rail. Each rail's report entry (report.peer) is filled here as its
 * gates decide, so JSON and text read the same facts.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "core/result.h"
#include "access/reg.h"
#include "probes/peer_session.h"
#include "probes/probes.h"

static const char *const mech_names[PEER_NMECH] = { "dmabuf", "peermem" };

static const struct peer_rail *find_rail(const struct peer_rail *r, int n,
					 uint32_t k)
{
	for (int i = 0; i < n; i++)
		if (r[i].rail == k)
			return &r[i];
	return NULL;
}

static const struct peer_rail *mine(const struct peer_session *s, int k)
{
	return find_rail(s->mine_rail, s->nmine, (uint32_t)k);
}

static const struct peer_rail *theirs(const struct peer_session *s, int k)
{
	return find_rail(s->their_rail, s->ntheirs, (uint32_t)k);
}

/* The active MTUs (bytes) both QPs were set up with, else 0 (never
 * exchanged: the rail was not tested). */
static void active_mtus(const struct peer_session *s, int k,
			unsigned int *here, unsigned int *there)
{
	int pi = peer_plan_index(s, (uint32_t)k);

	*here = *there = 0;
	if (pi < 0 || !s->vf)
		return;
	for (int i = 0; i < PEER_NMECH; i++) {
		const struct peer_xfer *x = &s->vf->peer.rails[pi].mech[i];

		if (x->have_remote) {
			*here = peer_mtu_bytes(x->local.mtu);
			*there = peer_mtu_bytes(x->remote.mtu);
			return;
		}
	}
}

/* This GPU's entry in report.peer (made with the report's rails). */
static struct peer_rail_report *rail_report(struct gdr_ctx *ctx, int k)
{
	struct peer_report *p = &ctx->rep->peer;

	for (int i = 0; i < p->nrails; i++)
		if (p->rails[i].rail == k)
			return &p->rails[i];
	return NULL;
}

/*
 * An IPv4-mapped GID as its address ("::ffff:10.0.2.15"), any other as
 * sysfs and show_gids print it: forms --redact recognises.
 */
static void gid_text(const struct peer_rail *r, char *out, size_t len)
{
	const uint8_t *g = r->gid;

	if (r->gid_family == 4) {
		snprintf(out, len, "::ffff:%u.%u.%u.%u", g[12], g[13], g[14],
			 g[15]);
		return;
	}
	snprintf(out, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4],
		 g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13],
		 g[14], g[15]);
}

static const char *gid_kind(const struct peer_rail *r)
{
	if (r->link_layer != IBV_LINK_LAYER_ETHERNET)
		return "InfiniBand";
	return r->gid_type == 2 ? "RoCE v2" : r->gid_type == 1 ? "RoCE v1" :
	       "RoCE (type unknown)";
}

static const char *layer_words(unsigned int ll)
{
	return ll == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" :
	       ll == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unknown";
}

/* "mlx5_0/1 (RoCE v2 GID 3 10.0.0.1)" */
static void describe(const struct peer_rail *r, char *out, size_t len)
{
	char gid[64] = "";

	gid_text(r, gid, sizeof(gid));
	if (r->gid_index == UINT32_MAX)
		snprintf(out, len, "%s/%u (%s)", r->nic, r->port,
			 gid_kind(r));
	else
		snprintf(out, len, "%s/%u (%s GID %u %s)", r->nic, r->port,
			 gid_kind(r), r->gid_index, gid);
}

/* --- peer.bootstrap ------------------------------------------------------- */

static enum reason_code bootstrap_code(int ret, const char **status)
{
	switch (ret) {
	case -EACCES:
		*status = "rejected";
		return C_PEER_TOKEN_REJECTED;
	case -EPROTO:
		*status = "protocol";
		return C_PEER_PROTOCOL;
	case -ECONNRESET:
	case -EPIPE:
		*status = "gone";
		return C_PEER_GONE;
	case -ETIMEDOUT:
		*status = "timeout";
		return C_PEER_TIMEOUT;
	default:
		*status = "not_reached";
		return C_PEER_NOT_REACHED;
	}
}

static void report_rails(struct gdr_ctx *ctx, const struct peer_session *s)
{
	struct peer_report *p = &ctx->rep->peer;

	p->rails = report_alloc(ctx->rep, (ctx->inv.ngpu ? ctx->inv.ngpu : 1) *
				sizeof(*p->rails));
	for (size_t k = 0; k < ctx->inv.ngpu && k < PEER_MAX_RAILS; k++) {
		const struct peer_rail *m = mine(s, (int)k), *t = theirs(s, (int)k);
		struct peer_rail_report *rr = &p->rails[p->nrails];

		if (!m && !t)
			continue;
		memset(rr, 0, sizeof(*rr));
		rr->rail = (int)k;
		rr->gpu = s->mine_gpu[k];
		rr->gid_index = rr->peer_gid_index = -1;
		rr->ratio = -1;
		rr->xmit_bytes = rr->rcv_bytes = -1;
		rr->peer_xmit_bytes = rr->peer_rcv_bytes = -1;
		snprintf(rr->peer_host, sizeof(rr->peer_host), "%.63s",
			 s->theirs.host);
		if (m) {
			snprintf(rr->nic, sizeof(rr->nic), "%s", m->nic);
			rr->port = m->port;
			if (m->gid_index != UINT32_MAX)
				rr->gid_index = m->gid_index;
		}
		if (t) {
			snprintf(rr->peer_nic, sizeof(rr->peer_nic), "%s", t->nic);
			rr->peer_port = t->port;
			if (t->gid_index != UINT32_MAX)
				rr->peer_gid_index = t->gid_index;
		}
		active_mtus(s, (int)k, &rr->mtu, &rr->peer_mtu);
		p->nrails++;
	}
}

/* The transfers' stage, if it did not finish: what stopped it. */
static bool stage_failed(const struct peer_session *s, char *why, size_t len)
{
	const struct stage_status *st;

	if (!s->vf)
		return false;
	st = &s->vf->stage[WSTAGE_PEER];
	switch (st->state) {
	case STAGE_TIMEOUT:
		snprintf(why, len, "the worker ran past %.0f s in %s",
			 st->limit, st->call);
		return true;
	case STAGE_CRASHED:
		snprintf(why, len, "the worker died of signal %d in %s",
			 st->signal, st->call);
		return true;
	case STAGE_FAILED:
		snprintf(why, len, "the worker could not start (%s: %s)",
			 st->call, strerror(st->err));
		return true;
	case STAGE_INTERRUPTED:
	case STAGE_DEADLINE:
	case STAGE_SKIPPED_DEP:
		snprintf(why, len, "the worker did not run (%s)",
			 st->state == STAGE_DEADLINE ? "--deadline spent" :
			 st->state == STAGE_INTERRUPTED ? "interrupted" :
			 "a vendor library hung or crashed before");
		return true;
	default:
		return false;
	}
}

static void bootstrap_fill(struct gdr_ctx *ctx, const struct peer_session *s)
{
	struct peer_report *p = &ctx->rep->peer;

	p->active = true;
	p->role = s->listener ? "listener" : "connector";
	snprintf(p->endpoint, sizeof(p->endpoint), "%s", s->endpoint);
	snprintf(p->peer_host, sizeof(p->peer_host), "%s",
		 s->theirs.host[0] ? s->theirs.host : s->conn.host);
	snprintf(p->peer_addr, sizeof(p->peer_addr), "%s", s->conn.addr);
	snprintf(p->peer_verdict, sizeof(p->peer_verdict), "%s",
		 s->theirs.verdict);
	snprintf(p->peer_summary, sizeof(p->peer_summary), "%s",
		 s->theirs.summary);
	p->min_bandwidth = ctx->opt->min_bandwidth;
	p->status = "ok";
	p->verdict = V_UNKNOWN;
}

void gate_peer_bootstrap(struct gdr_ctx *ctx, const struct target *t)
{
	const struct peer_session *s = ctx->peer;
	struct peer_report *p = &ctx->rep->peer;
	const char *role;
	char why[400];
	struct result *r;
	int ret;

	(void)t;
	if (!s)
		return;
	bootstrap_fill(ctx, s);
	role = p->role;
	ret = s->conn_ret ? s->conn_ret : s->exchange_ret;
	if (ret) {
		enum reason_code c = bootstrap_code(ret, &p->status);

		/* Nobody (right) came before the deadline: not reached. */
		if (s->conn_ret == -ETIMEDOUT) {
			c = C_PEER_NOT_REACHED;
			p->status = "not_reached";
		}

		r = emit(ctx, ctx->host, ST_ERROR, c, "%s %s: %s", role,
			 s->endpoint, s->conn_ret ? s->conn.err :
			 s->exchange_err);
		ev_str(r, "endpoint", "%s", s->endpoint);
		ev_int(r, "errno", -ret);
		return;
	}
	report_rails(ctx, s);
	if (stage_failed(s, why, sizeof(why))) {
		p->status = "stage_failed";
		emit(ctx, ctx->host, ST_ERROR, C_PEER_STAGE_FAILED, "%s", why);
		return;
	}
	ret = s->vf && s->vf->peer.conn_err ? s->vf->peer.conn_err :
	      s->final_ret;
	if (ret) {
		enum reason_code c = bootstrap_code(ret, &p->status);

		emit(ctx, ctx->host, ST_ERROR, c == C_PEER_NOT_REACHED ?
		     C_PEER_GONE : c, "%s (%s) during the transfers: %s",
		     p->peer_host, p->peer_addr, s->vf && s->vf->peer.conn_err ?
		     s->vf->peer.conn_error : s->final_err);
		if (c == C_PEER_NOT_REACHED)
			p->status = "gone";
		return;
	}
	if (!strcmp(s->theirs.verdict, "READY") ||
	    !strcmp(s->theirs.verdict, "READY-UNPROVEN")) {
		r = emit(ctx, ctx->host, ST_PASS, C_PEER_CONNECTED,
			 "%s (%s) as %s: the peer's own check says %s", p->peer_host,
			 p->peer_addr, role, s->theirs.verdict);
	} else {
		r = emit(ctx, ctx->host, ST_WARN, C_PEER_NOT_READY,
			 "%s (%s) as %s: the peer's own check says %s (%s): "
			 "rails it cannot offer are not tested", p->peer_host,
			 p->peer_addr, role, s->theirs.verdict, s->theirs.summary);
		remedy_PEER_NOT_READY(r);
	}
	ev_str(r, "peer_host", "%s", p->peer_host);
	ev_str(r, "peer_verdict", "%s", s->theirs.verdict);
	ev_int(r, "rails_planned", s->plan.nrails);
	/* Where the proven secret came from (a job id is guessable). */
	ev_str(r, "token_source", "%s", ctx->opt->token_source ?
	       ctx->opt->token_source : "unknown");
}

/* --- peer.link ------------------------------------------------------------ */

/* Rails not compared: why, or NULL. */
static const char *untested(const struct peer_session *s, int k, char *buf,
			    size_t len)
{
	const struct peer_rail *m = mine(s, k), *t = theirs(s, k);

	if (!m)
		return s->mine_why[k][0] ? s->mine_why[k] : "no rail here";
	if (!t) {
		snprintf(buf, len, "%.64s offers no rail for GPU%d (its own "
			 "check: %.200s)", s->theirs.host, k, s->theirs.summary);
		return buf;
	}
	if (!(m->mechs & t->mechs)) {
		snprintf(buf, len, "no mechanism works on both (here: %s%s%s, "
			 "%s: %s%s%s)", m->mechs & PEER_MECH_DMABUF ? "dmabuf " :
			 "", m->mechs & PEER_MECH_PEERMEM ? "peermem" : "",
			 m->mechs ? "" : "none", s->theirs.host,
			 t->mechs & PEER_MECH_DMABUF ? "dmabuf " : "",
			 t->mechs & PEER_MECH_PEERMEM ? "peermem" : "",
			 t->mechs ? "" : "none");
		return buf;
	}
	return NULL;
}

static bool same_subnet(const uint8_t a[4], const uint8_t b[4],
			unsigned int prefix)
{
	uint32_t x, y, mask;

	if (!prefix || prefix > 32)
		return true;
	memcpy(&x, a, 4);
	memcpy(&y, b, 4);
	mask = htonl(prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> prefix));
	return (x & mask) == (y & mask);
}

/* The peer's rail k sits in this side's rail j subnet or fabric (j != k):
 * j, else -1. */
static int crossed_with(const struct peer_session *s, const struct peer_rail *t)
{
	for (int i = 0; i < s->nmine; i++) {
		const struct peer_rail *m = &s->mine_rail[i];

		if (m->rail == t->rail || m->link_layer != t->link_layer)
			continue;
		if (m->link_layer == IBV_LINK_LAYER_INFINIBAND &&
		    !memcmp(m->gid, t->gid, 8))
			return (int)m->rail;
		if (m->gid_family == 4 && t->gid_family == 4 && m->prefix_len &&
		    same_subnet(m->gid + 12, t->gid + 12, m->prefix_len))
			return (int)m->rail;
	}
	return -1;
}

static bool apart(const struct peer_rail *m, const struct peer_rail *t)
{
	if (m->link_layer == IBV_LINK_LAYER_INFINIBAND)
		return memcmp(m->gid, t->gid, 8) != 0;
	return m->gid_family == 4 && t->gid_family == 4 &&
	       !same_subnet(m->gid + 12, t->gid + 12, m->prefix_len);
}

static struct result *link_mismatch(struct gdr_ctx *ctx, int subj,
				    const struct peer_session *s,
				    const struct peer_rail *m,
				    const struct peer_rail *t,
				    const char *here, const char *there)
{
	char gm[64], gt[64];
	int j;

	if (m->link_layer && t->link_layer && m->link_layer != t->link_layer)
		return emit(ctx, subj, ST_BLOCKED, C_LINK_LAYER_MISMATCH,
			    "%s is %s, the peer's %s is %s: they cannot talk",
			    here, layer_words(m->link_layer), there,
			    layer_words(t->link_layer));
	if (m->link_layer == IBV_LINK_LAYER_ETHERNET && m->gid_type &&
	    t->gid_type && m->gid_type != t->gid_type)
		return emit(ctx, subj, ST_BLOCKED, C_GID_TYPE_MISMATCH,
			    "NCCL addresses %s by a %s GID (index %u), the "
			    "peer's %s by a %s GID (index %u): the packets are "
			    "not understood", m->nic, gid_kind(m), m->gid_index,
			    t->nic, gid_kind(t), t->gid_index);
	gid_text(m, gm, sizeof(gm));
	gid_text(t, gt, sizeof(gt));
	if (m->link_layer == IBV_LINK_LAYER_ETHERNET && m->gid_family &&
	    t->gid_family && m->gid_family != t->gid_family)
		return emit(ctx, subj, ST_BLOCKED, C_GID_FAMILY_MISMATCH,
			    "NCCL's GID on %s is IPv%u %s (index %u), the "
			    "peer's on %s is IPv%u %s (index %u): IPv4 cannot "
			    "reach IPv6", m->nic, m->gid_family, gm,
			    m->gid_index, t->nic, t->gid_family, gt,
			    t->gid_index);
	if (m->link_layer == IBV_LINK_LAYER_INFINIBAND && m->pkey && t->pkey &&
	    (m->pkey & 0x7fff) != (t->pkey & 0x7fff))
		return emit(ctx, subj, ST_BLOCKED, C_PKEY_MISMATCH,
			    "P_Key 0x%04x here, 0x%04x on the peer's %s: they "
			    "are in different partitions", m->pkey, t->pkey,
			    there);
	if (!apart(m, t))
		return NULL;
	j = crossed_with(s, t);
	if (j >= 0)
		return emit(ctx, subj, ST_BLOCKED, C_RAIL_CROSSED,
			    "%s meets the peer's %s (its rail for GPU%u), not "
			    "its rail for GPU%u: the rails are cabled or "
			    "addressed crosswise (%s is in this node's GPU%d "
			    "rail's %s)", here, there, t->rail, t->rail, gt, j,
			    m->link_layer == IBV_LINK_LAYER_INFINIBAND ?
			    "fabric" : "subnet");
	return emit(ctx, subj, m->link_layer == IBV_LINK_LAYER_INFINIBAND ?
		    ST_WARN : ST_BLOCKED, C_SUBNET_MISMATCH,
		    "%s and the peer's %s are in different subnets (%s, %s"
		    "%s%u): %s", here, there, gm, gt,
		    m->link_layer == IBV_LINK_LAYER_INFINIBAND ? "" : " not in /",
		    m->link_layer == IBV_LINK_LAYER_INFINIBAND ? 0 : m->prefix_len,
		    m->link_layer == IBV_LINK_LAYER_INFINIBAND ?
		    "only a router joins them" :
		    "RoCE traffic between them needs a route");
}

/* Active MTUs as the QPs saw them, else the netdevs'. */
static void mtus(const struct peer_session *s, int k, unsigned int *here,
		 unsigned int *there)
{
	const struct peer_rail *m = mine(s, k), *t = theirs(s, k);

	active_mtus(s, k, here, there);
	if (*here && *there)
		return;
	*here = m ? m->netdev_mtu : 0;
	*there = t ? t->netdev_mtu : 0;
}

void gate_peer_link(struct gdr_ctx *ctx, const struct target *t)
{
	const struct peer_session *s = ctx->peer;
	int k = t->gpu, subj = ctx->inv.gpu[k].subject;
	const struct peer_rail *m, *th;
	char buf[400], here[160], there[200], gm[64], gt[64];
	unsigned int mtu_here, mtu_there;
	const char *why;
	struct result *r;

	if (!s || k >= PEER_MAX_RAILS)
		return;
	why = untested(s, k, buf, sizeof(buf));
	if (why) {
		emit(ctx, subj, ST_SKIP, C_RAIL_NOT_TESTED,
		     "not tested against the peer: %s", why);
		return;
	}
	m = mine(s, k);
	th = theirs(s, k);
	describe(m, here, sizeof(here));
	describe(th, buf, sizeof(buf));
	snprintf(there, sizeof(there), "%.60s:%.130s", s->theirs.host, buf);
	mtus(s, k, &mtu_here, &mtu_there);
	r = link_mismatch(ctx, subj, s, m, th, here, there);
	if (!r && mtu_here && mtu_there && mtu_here != mtu_there) {
		r = emit(ctx, subj, ST_WARN, C_MTU_MISMATCH,
			 "active MTU %u here (%s), %u on the peer's %s: traffic "
			 "runs at the smaller", mtu_here, m->nic, mtu_there,
			 there);
	}
	if (!r)
		r = emit(ctx, subj, ST_PASS, C_LINK_MATCH,
			 "%s <-> peer's %s: link layer, GID type/family, "
			 "subnet, P_Key and MTU agree", here, there);
	switch (r->code_index) {
	case C_LINK_LAYER_MISMATCH: remedy_LINK_LAYER_MISMATCH(r); break;
	case C_GID_TYPE_MISMATCH: remedy_GID_TYPE_MISMATCH(r); break;
	case C_GID_FAMILY_MISMATCH: remedy_GID_FAMILY_MISMATCH(r); break;
	case C_PKEY_MISMATCH: remedy_PKEY_MISMATCH(r); break;
	case C_RAIL_CROSSED: remedy_RAIL_CROSSED(r); break;
	case C_SUBNET_MISMATCH: remedy_SUBNET_MISMATCH(r); break;
	case C_MTU_MISMATCH:
		remedy_MTU_MISMATCH(r, m->netdev[0] ? "ip link set dev "
				    "<netdev> mtu N on both nodes" : "the subnet "
				    "manager's MTU for this partition");
		break;
	default: break;
	}
	gid_text(m, gm, sizeof(gm));
	gid_text(th, gt, sizeof(gt));
	ev_str(r, "nic", "%s", m->nic);
	ev_int(r, "port", m->port);
	ev_str(r, "peer_nic", "%s", th->nic);
	ev_int(r, "peer_port", th->port);
	ev_str(r, "link_layer", "%s", layer_words(m->link_layer));
	ev_str(r, "gid", "%s", gm);
	ev_str(r, "peer_gid", "%s", gt);
	ev_str(r, "gid_type", "%s", gid_kind(m));
	ev_str(r, "peer_gid_type", "%s", gid_kind(th));
	ev_int(r, "mtu", mtu_here);
	ev_int(r, "peer_mtu", mtu_there);
}

/* --- peer.connect --------------------------------------------------------- */

static int plan_rail(struct gdr_ctx *ctx, int k, int subj)
{
	const struct peer_session *s = ctx->peer;
	int pi = peer_plan_index(s, (uint32_t)k);
	char buf[400];
	const char *why;

	if (pi >= 0 && s->vf && s->vf->peer.ran)
		return pi;
	why = untested(s, k, buf, sizeof(buf));
	emit(ctx, subj, ST_SKIP, C_RAIL_NOT_TESTED,
	     "not tested against the peer: %s", why ? why :
	     "the transfers did not run");
	return -1;
}

/* How the QP of one mechanism came out (enum reason_code). */
static enum reason_code connect_code(const struct peer_xfer *x)
{
	/* No endpoint came back: one side could not set the rail up. */
	if (!x->have_remote)
		return C_RAIL_SETUP_FAILED;
	if (!x->connected || !strncmp(x->peer_error, "ibv_modify_qp", 13))
		return C_QP_TRANSITION;
	if (x->wc_status == IBV_WC_RETRY_EXC_ERR ||
	    x->peer_status == IBV_WC_RETRY_EXC_ERR)
		return C_QP_RETRY_EXCEEDED;
	if (x->timeout && !x->write_ok && !x->read_ok)
		return C_QP_TIMEOUT;
	return C_QP_CONNECTED;
}

static void xfer_failure(const struct peer_xfer *x, char *out, size_t len)
{
	if (x->peer_error[0] && !x->step[0])
		snprintf(out, len, "on the peer: %s", x->peer_error);
	else if (x->wc_status > 0)
		snprintf(out, len, "%s: %s", x->step,
			 wc_status_meaning(x->wc_status));
	else if (x->cu.called)
		snprintf(out, len, "%s: %s", x->step, x->cu.name);
	else
		snprintf(out, len, "%s: %s", x->step[0] ? x->step : "?",
			 strerror(x->err ? x->err : EIO));
}

void gate_peer_connect(struct gdr_ctx *ctx, const struct target *t)
{
	const struct peer_session *s = ctx->peer;
	int k = t->gpu, subj = ctx->inv.gpu[k].subject, pi;
	const struct peer_rail *m = mine(s, k), *th = theirs(s, k);
	char what[400];
	struct result *r = NULL;

	if (!s || k >= PEER_MAX_RAILS || (pi = plan_rail(ctx, k, subj)) < 0)
		return;
	for (int i = 0; i < PEER_NMECH && !r; i++) {
		const struct peer_xfer *x = &s->vf->peer.rails[pi].mech[i];
		enum reason_code c;

		if (!x->tried)
			continue;
		c = connect_code(x);
		xfer_failure(x, what, sizeof(what));
		switch (c) {
		case C_QP_RETRY_EXCEEDED:
			if (x->wc_status == IBV_WC_RETRY_EXC_ERR)
				r = emit(ctx, subj, ST_BLOCKED, c, "%s %s/%u -> "
					 "%s:%s/%u: no answer (transport retries "
					 "exceeded on this side's WRITE)",
					 mech_names[i], m->nic, m->port,
					 s->theirs.host, th->nic, th->port);
			else
				r = emit(ctx, subj, ST_BLOCKED, c, "%s %s:%s/%u -> "
					 "%s/%u (here): no answer (transport "
					 "retries exceeded on the peer's WRITE)",
					 mech_names[i], s->theirs.host, th->nic,
					 th->port, m->nic, m->port);
			remedy_QP_RETRY_EXCEEDED(r);
			break;
		case C_QP_TIMEOUT:
			r = emit(ctx, subj, ST_BLOCKED, c, "%s %s/%u -> %s:%s/%u: "
				 "no completion within %.0f s (%s)", mech_names[i],
				 m->nic, m->port, s->theirs.host, th->nic,
				 th->port, 3.0, what);
			remedy_QP_TIMEOUT(r);
			break;
		case C_QP_TRANSITION:
			r = emit(ctx, subj, ST_BLOCKED, c, "%s on %s/%u: %s (the "
				 "QP could not be connected to %s:%s/%u)",
				 mech_names[i], m->nic, m->port, what,
				 s->theirs.host, th->nic, th->port);
			remedy_QP_TRANSITION(r);
			break;
		case C_RAIL_SETUP_FAILED:
			r = emit(ctx, subj, ST_BLOCKED, c, "%s could not be set up "
				 "on %s: %s", mech_names[i], x->step[0] ?
				 m->nic : th->nic, what);
			remedy_RAIL_SETUP_FAILED(r);
			break;
		default:
			break;
		}
		if (r) {
			ev_str(r, "mechanism", "%s", mech_names[i]);
			if (s->neigh[pi][0])
				ev_str(r, "neighbour", "%s", s->neigh[pi]);
		}
	}
	if (!r)
		r = emit(ctx, subj, ST_PASS, C_QP_CONNECTED, "RC QP %s/%u <-> "
			 "%s:%s/%u (path MTU %u): connected, the far end answers",
			 m->nic, m->port, s->theirs.host, th->nic, th->port,
			 s->vf->peer.rails[pi].mech[0].path_mtu ?
			 s->vf->peer.rails[pi].mech[0].path_mtu :
			 s->vf->peer.rails[pi].mech[1].path_mtu);
	ev_str(r, "nic", "%s", m->nic);
	ev_str(r, "peer_nic", "%s", th->nic);
}

/* --- peer.transfer -------------------------------------------------------- */

static long long delta(const struct peer_counters *a,
		       const struct peer_counters *b, bool xmit)
{
	if (!a->read || !b->read)
		return -1;
	return (long long)(xmit ? b->xmit - a->xmit : b->rcv - a->rcv);
}

static long long their_delta(uint64_t v)
{
	return v == UINT64_MAX || v > (uint64_t)INT64_MAX ? -1 : (long long)v;
}

static void fill_mech(struct peer_mech_report *mr, const struct peer_xfer *x,
		      int i)
{
	mr->mechanism = mech_names[i];
	mr->tried = x->tried;
	mr->ok = x->ok;
	mr->write_ok = x->write_ok;
	mr->read_ok = x->read_ok;
	mr->write_verified = x->write_verified;
	mr->read_verified = x->read_verified;
	mr->peer_write_verified = x->peer_write_verified;
	mr->peer_read_verified = x->peer_read_verified;
	mr->gbps = x->gbps;
	mr->peer_gbps = x->peer_gbps;
	mr->lat_us = x->lat_us;
	mr->failed_step = NULL;
}

/* What a mechanism's transfers got wrong, or "" (all verified). */
static enum reason_code transfer_code(const struct peer_xfer *x, char *out,
				      size_t len)
{
	if (x->ok) {
		out[0] = '\0';
		return C_WIRE_VERIFIED;
	}
	if (x->write_ok && !x->write_verified && !x->peer_error[0])
		snprintf(out, len, "this side's WRITE completed but did not "
			 "land in the peer's GPU memory as sent");
	else if (x->read_ok && !x->read_verified)
		snprintf(out, len, "this side's READ completed but brought "
			 "other bytes than the peer's GPU holds");
	else if (x->fault && x->peer_read_verified && !x->peer_write_verified)
		snprintf(out, len, "the peer's WRITE completed but did not land "
			 "here as sent");
	else {
		xfer_failure(x, out, len);
		return C_TRANSFER_FAILED;
	}
	return C_DATA_NOT_VERIFIED;
}

static void counters_words(const struct peer_rail_report *rr,
			   const char *unit, char *out, size_t len,
			   bool *unmoved)
{
	*unmoved = rr->xmit_bytes == 0 || rr->rcv_bytes == 0 ||
		   rr->peer_xmit_bytes == 0 || rr->peer_rcv_bytes == 0;
	snprintf(out, len, "port counters, %s: here %s%lld out, %lld in; on "
		 "the peer %lld out, %lld in", unit, rr->xmit_bytes < 0 ?
		 "unreadable, " : "", rr->xmit_bytes, rr->rcv_bytes,
		 rr->peer_xmit_bytes, rr->peer_rcv_bytes);
}

void gate_peer_transfer(struct gdr_ctx *ctx, const struct target *t)
{
	const struct peer_session *s = ctx->peer;
	int k = t->gpu, subj = ctx->inv.gpu[k].subject, pi;
	const struct peer_rail *m = mine(s, k), *th = theirs(s, k);
	struct peer_rail_report *rr = rail_report(ctx, k);
	char words[400] = "", verified[64] = "", cw[200];
	enum reason_code bad = C_WIRE_VERIFIED;
	struct result *r;
	bool unmoved;

	if (!s || k >= PEER_MAX_RAILS || (pi = plan_rail(ctx, k, subj)) < 0 ||
	    !rr)
		return;
	rr->xmit_bytes = delta(&s->before[pi], &s->after[pi], true);
	rr->rcv_bytes = delta(&s->before[pi], &s->after[pi], false);
	if (s->have_their_end[pi]) {
		rr->peer_xmit_bytes = their_delta(s->their_end[pi].xmit_bytes);
		rr->peer_rcv_bytes = their_delta(s->their_end[pi].rcv_bytes);
	}
	for (int i = 0; i < PEER_NMECH; i++) {
		const struct peer_xfer *x = &s->vf->peer.rails[pi].mech[i];
		enum reason_code c;
		char w[320];

		if (!x->tried)
			continue;
		fill_mech(&rr->mech[rr->nmech++], x, i);
		rr->path_mtu = x->path_mtu ? x->path_mtu : rr->path_mtu;
		c = transfer_code(x, w, sizeof(w));
		if (c == C_WIRE_VERIFIED) {
			snprintf(verified + strlen(verified),
				 sizeof(verified) - strlen(verified), "%s%s",
				 verified[0] ? ", " : "", mech_names[i]);
		} else if (bad == C_WIRE_VERIFIED) {
			bad = c;
			snprintf(words, sizeof(words), "%s: %s", mech_names[i], w);
		}
	}
	if (bad != C_WIRE_VERIFIED) {
		r = emit(ctx, subj, ST_BLOCKED, bad, "%s/%u <-> %s:%s/%u (%s): "
			 "%s", m->nic, m->port, s->theirs.host, th->nic,
			 th->port, s->listener ? "listener" : "connector", words);
		if (bad == C_DATA_NOT_VERIFIED)
			remedy_DATA_NOT_VERIFIED(r);
		else
			remedy_TRANSFER_FAILED(r);
		return;
	}
	counters_words(rr, s->before[pi].in_packets ? "packets" : "bytes", cw,
		       sizeof(cw), &unmoved);
	if (unmoved) {
		r = emit(ctx, subj, ST_WARN, C_COUNTERS_UNMOVED, "%s/%u <-> "
			 "%s:%s/%u: verified (%s), but %s: the bytes may not "
			 "have crossed the wire", m->nic, m->port, s->theirs.host,
			 th->nic, th->port, verified, cw);
		remedy_COUNTERS_UNMOVED(r);
	} else {
		r = emit(ctx, subj, ST_PASS, C_WIRE_VERIFIED, "%s/%u <-> "
			 "%s:%s/%u: WRITE and READ both ways verified (%s), "
			 "the port counters moved (%s)", m->nic, m->port,
			 s->theirs.host, th->nic, th->port, verified, cw);
	}
	ev_int(r, "xmit", rr->xmit_bytes);
	ev_int(r, "rcv", rr->rcv_bytes);
	ev_int(r, "peer_xmit", rr->peer_xmit_bytes);
	ev_int(r, "peer_rcv", rr->peer_rcv_bytes);
	ev_str(r, "counter_unit", "%s", s->before[pi].in_packets ?
	       "packets" : "bytes");
}

/* --- peer.bandwidth ------------------------------------------------------- */

void gate_peer_bandwidth(struct gdr_ctx *ctx, const struct target *t)
{
	const struct peer_session *s = ctx->peer;
	int k = t->gpu, subj = ctx->inv.gpu[k].subject, pi;
	const struct peer_rail *m = mine(s, k), *th = theirs(s, k);
	struct peer_rail_report *rr = rail_report(ctx, k);
	double best = 0, lat = 0, limit;
	const char *mech = "?";
	unsigned int lim;
	struct result *r;

	if (!s || k >= PEER_MAX_RAILS || (pi = plan_rail(ctx, k, subj)) < 0 ||
	    !rr)
		return;
	for (int i = 0; i < PEER_NMECH; i++) {
		const struct peer_xfer *x = &s->vf->peer.rails[pi].mech[i];

		if (x->ok && x->gbps > best) {
			best = x->gbps;
			lat = x->lat_us;
			mech = mech_names[i];
		}
	}
	lim = m->rate_mbps;
	lim = !lim || (th->rate_mbps && th->rate_mbps < lim) ? th->rate_mbps : lim;
	lim = !lim || (m->pcie_mbps && m->pcie_mbps < lim) ? m->pcie_mbps : lim;
	lim = !lim || (th->pcie_mbps && th->pcie_mbps < lim) ? th->pcie_mbps : lim;
	limit = lim / 1000.0;
	rr->limit_gbps = limit;
	if (best <= 0 || limit <= 0) {
		r = emit(ctx, subj, ST_SKIP, C_BANDWIDTH_UNKNOWN, "%s/%u -> "
			 "%s:%s/%u: %.2f Gb/s; no limit to judge it by (%s)",
			 m->nic, m->port, s->theirs.host, th->nic, th->port,
			 best, best <= 0 ? "no bandwidth run" :
			 "port rates and PCIe links unread");
		return;
	}
	rr->ratio = best / limit;
	if (rr->ratio < ctx->opt->min_bandwidth) {
		r = emit(ctx, subj, ST_BLOCKED, C_BANDWIDTH_LOW, "%s/%u -> "
			 "%s:%s/%u: %.2f Gb/s of %.3g Gb/s (%.3f, below "
			 "--min-bandwidth %.2f; %s)", m->nic, m->port,
			 s->theirs.host, th->nic, th->port, best, limit,
			 rr->ratio, ctx->opt->min_bandwidth, mech);
		remedy_BANDWIDTH_LOW(r);
	} else {
		r = emit(ctx, subj, ST_PASS, C_BANDWIDTH_OK, "%s/%u -> %s:%s/%u: "
			 "%.2f Gb/s of %.3g Gb/s (%.3f; %s), 8-byte WRITE "
			 "%.1f us", m->nic, m->port, s->theirs.host, th->nic,
			 th->port, best, limit, rr->ratio, mech, lat);
	}
	ev_real(r, "gbps", best);
	ev_real(r, "limit_gbps", limit);
	ev_real(r, "ratio", rr->ratio);
	ev_real(r, "latency_us", lat);
}
