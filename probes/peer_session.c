// SPDX-License-Identifier: MIT
/*
 * Two-node mode around the node's own check (peer_session.h): the rails
 * this side offers, the bootstrap, the findings both ways, the plan both
 * sides derive alike, the transfer worker, the counters and the last word.
 */
#include "probes/peer_session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "core/clock.h"
#include "access/ibsysfs.h"
#include "access/sysroot.h"
#include "probes/probes.h"

/* A wait on the other side inside the transfers (cuInit on a big node
 * takes seconds; the other side may still be setting up). */
#define STEP_MS		20000.0
#define PEER_BYTES	(1u << 20)
#define BW_MS		200.0

static bool pair_selected(const char *pairs, int k)
{
	const char *p = pairs;

	if (!p || !strcmp(p, "all"))
		return true;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end != p && v == k)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* NCCL's first rail of GPU subject g: its NIC subject, port, GID index. */
static bool nccl_rail_of(const struct report *r, int g, int *nic, int *port,
			 int *gid_index)
{
	for (size_t i = 0; i < r->nccl.ngpus; i++) {
		const struct nccl_gpu_rails *gr = &r->nccl.gpus[i];

		if (gr->gpu != g || gr->nrails < 1)
			continue;
		*nic = gr->rail[0].nic;
		*port = gr->rail[0].port;
		*gid_index = gr->rail[0].gid_index;
		return true;
	}
	return false;
}

/* Without NCCL's rails: the GPU's first ready (GPU, port) pair. */
static bool ready_rail_of(const struct report *r, int g, int *nic, int *port)
{
	for (int p = 0; p < PATH_NCCL; p++)
		for (size_t i = 0; i < r->path[p].nready; i++) {
			const struct subject *ps;

			if (r->path[p].ready[i][0] != g)
				continue;
			ps = &r->subj[r->path[p].ready[i][1]];
			*nic = ps->parent;
			*port = atoi(strchr(ps->id, '/') ? strchr(ps->id, '/') + 1 :
				     "0");
			return *nic >= 0 && *port > 0;
		}
	return false;
}

/* The mechanisms this node proved (or would prove) on GPU subject g. */
static unsigned int mechs_of(const struct report *r, int g)
{
	static const unsigned int bit[] = {
		[PATH_DMABUF] = PEER_MECH_DMABUF,
		[PATH_PEERMEM] = PEER_MECH_PEERMEM,
	};
	unsigned int m = 0;

	for (int p = PATH_DMABUF; p <= PATH_PEERMEM; p++)
		for (size_t i = 0; i < r->path[p].nready; i++)
			if (r->path[p].ready[i][0] == g)
				m |= bit[p];
	return m;
}

/* "400 Gb/sec (4X NDR)" -> 400000 Mb/s. */
static unsigned int port_rate_mbps(struct sysroot *sr, const char *nic,
				   int port)
{
	char path[320], buf[64];
	double g;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/rate",
		 nic, port);
	if (sysroot_read_line(sr, path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lf", &g) != 1 || g <= 0 || g > 1e6)
		return 0;
	return (unsigned int)(g * 1000);
}

/* A PCIe function's link payload rate (current speed x width), Mb/s. */
static unsigned int pcie_mbps(struct sysroot *sr, const char *pci)
{
	/* Per lane after line coding: 8b/10b to Gen2, 128b/130b to Gen5,
	 * FLIT (242/256) at Gen6. */
	static const struct { double gts, mbps; } lane[] = {
		{ 2.5, 2000 }, { 5, 4000 }, { 8, 7877 }, { 16, 15754 },
		{ 32, 31508 }, { 64, 60500 },
	};
	char path[320], buf[64];
	double gts;
	long long w;

	if (!pci[0])
		return 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_speed",
		 pci);
	if (sysroot_read_line(sr, path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lf", &gts) != 1)
		return 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_width",
		 pci);
	if (sysroot_read_ll(sr, path, &w) || w < 1 || w > 32)
		return 0;
	for (size_t i = 0; i < sizeof(lane) / sizeof(lane[0]); i++)
		if (gts > lane[i].gts - 0.1 && gts < lane[i].gts + 0.1)
			return (unsigned int)(lane[i].mbps * (double)w);
	return 0;
}

static unsigned int smaller(unsigned int a, unsigned int b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* The GID NCCL addresses the port by, and what kind it is. */
static void gid_facts(struct sysroot *sr, const char *nic, int port,
		      struct peer_rail *r)
{
	char path[320], buf[80];
	unsigned int g[8];
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (r->gid_index == UINT32_MAX)
		return;
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gids/%u", nic, port,
		 r->gid_index);
	if (!sysroot_read_line(sr, path, buf, sizeof(buf)) &&
	    sscanf(buf, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &g[0], &g[1], &g[2],
		   &g[3], &g[4], &g[5], &g[6], &g[7]) == 8)
		for (int i = 0; i < 8; i++) {
			r->gid[2 * i] = (uint8_t)(g[i] >> 8);
			r->gid[2 * i + 1] = (uint8_t)g[i];
		}
	if (r->link_layer == 2) {	/* IBV_LINK_LAYER_ETHERNET */
		r->gid_family = memcmp(r->gid, v4mapped, 12) ? 6 : 4;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%u",
			 nic, port, r->gid_index);
		if (!sysroot_read_line(sr, path, buf, sizeof(buf)))
			r->gid_type = strstr(buf, "v2") ? 2 : 1;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%u",
			 nic, port, r->gid_index);
		if (!sysroot_read_line(sr, path, buf, sizeof(buf)))
			snprintf(r->netdev, sizeof(r->netdev), "%.31s", buf);
	} else {
		r->gid_type = 1;
	}
}

/* Kernel tables of a few hundred lines (routes, ARP), up to this much. */
#define NET_TABLE_MAX	(1u << 20)

/* A /proc/net table below the sysroot, malloc'd; NULL: unreadable. */
static char *net_table(struct sysroot *sr, const char *path)
{
	char *buf = malloc(NET_TABLE_MAX);

	if (buf && sysroot_read(sr, path, buf, NET_TABLE_MAX) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/*
 * The prefix length of @dev's connected route holding @ip in /proc/net/route
 * (@routes, read once per run): 0 when none, -1 when unreadable.
 */
static int route_prefix(const char *routes, const char *dev,
			const uint8_t ip[4])
{
	const char *line;
	uint32_t addr;

	if (!routes)
		return -1;
	memcpy(&addr, ip, 4);
	for (line = routes; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char ifname[32];
		unsigned int dst, gw, flags, mask;

		if (sscanf(line, "%31s %x %x %x %*d %*d %*d %x", ifname, &dst,
			   &gw, &flags, &mask) != 5 || strcmp(ifname, dev) ||
		    gw || !mask || (addr & mask) != dst)
			continue;
		return __builtin_popcount(mask);
	}
	return 0;
}

static void rail_facts(struct gdr_ctx *ctx, struct peer_session *s,
		       const char *nic, int port, const char *gpu_pci,
		       const char *nic_pci, struct peer_rail *r)
{
	struct sysroot *sr = ctx->sr;
	char path[320], buf[64];
	long long v;

	snprintf(r->nic, sizeof(r->nic), "%s", nic);
	snprintf(r->gpu_pci, sizeof(r->gpu_pci), "%s", gpu_pci);
	r->port = (uint8_t)port;
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/link_layer", nic, port);
	if (!sysroot_read_line(sr, path, buf, sizeof(buf)))
		r->link_layer = !strcmp(buf, "Ethernet") ? 2 :
				!strcmp(buf, "InfiniBand") ? 1 : 0;
	v = ib_port_state(sr, nic, port);
	r->state = v > 0 && v < 8 ? (uint8_t)v : 0;
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/pkeys/0", nic, port);
	if (!sysroot_read_ll(sr, path, &v) && v >= 0 && v <= 0xffff)
		r->pkey = (uint16_t)v;
	r->rate_mbps = port_rate_mbps(sr, nic, port);
	r->pcie_mbps = smaller(pcie_mbps(sr, gpu_pci), pcie_mbps(sr, nic_pci));
	if (r->link_layer == 2 && r->gid_index == UINT32_MAX) {
		struct gid_scan gs;

		/* No choice from NCCL's model: its default, RoCE v2 first. */
		ib_scan_gids(sr, nic, port, &gs);
		if (gs.v2 >= 0 || gs.v1 >= 0)
			r->gid_index = (uint32_t)(gs.v2 >= 0 ? gs.v2 : gs.v1);
	}
	gid_facts(sr, nic, port, r);
	if (r->netdev[0]) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", r->netdev);
		if (!sysroot_read_ll(sr, path, &v) && v > 0 && v < 1 << 20)
			r->netdev_mtu = (uint32_t)v;
		if (r->gid_family == 4) {
			int prefix;

			if (!s->routes_read) {
				s->routes = net_table(sr, "/proc/net/route");
				s->routes_read = true;
			}
			prefix = route_prefix(s->routes, r->netdev, r->gid + 12);

			r->prefix_len = prefix > 0 ? (uint32_t)prefix : 0;
		}
	}
}

/* This side's rail of GPU k, or why it has none (s->mine_why[k]). */
static void offer_rail(struct gdr_ctx *ctx, struct peer_session *s, int k)
{
	const struct report *r = ctx->rep;
	const struct inv_gpu *g = &ctx->inv.gpu[k];
	struct peer_rail *pr = &s->mine_rail[s->nmine];
	int nic = -1, port = 0, gid = -1;
	const struct inv_nic *in = NULL;

	s->mine_gpu[k] = g->subject;
	s->mine_nic[k] = -1;
	if (!pair_selected(ctx->opt->pairs, k)) {
		snprintf(s->mine_why[k], sizeof(s->mine_why[k]),
			 "not in --pairs %s", ctx->opt->pairs);
		return;
	}
	if (!nccl_rail_of(r, g->subject, &nic, &port, &gid) &&
	    !ready_rail_of(r, g->subject, &nic, &port)) {
		snprintf(s->mine_why[k], sizeof(s->mine_why[k]), "no rail here "
			 "(NCCL's model names none and no GPU-NIC pair is "
			 "ready)");
		return;
	}
	for (size_t i = 0; i < ctx->inv.nnic; i++)
		if (ctx->inv.nic[i].subject == nic)
			in = &ctx->inv.nic[i];
	if (!in) {
		snprintf(s->mine_why[k], sizeof(s->mine_why[k]), "its rail's "
			 "NIC is not in the inventory");
		return;
	}
	memset(pr, 0, sizeof(*pr));
	pr->rail = (uint32_t)k;
	pr->gid_index = gid >= 0 ? (uint32_t)gid : UINT32_MAX;
	rail_facts(ctx, s, in->name, port, g->pci, in->pci, pr);
	/* Without a CUDA ordinal no buffer: nothing to offer. */
	pr->mechs = g->cuda >= 0 ? (uint8_t)mechs_of(r, g->subject) : 0;
	s->mine_nic[k] = nic;
	s->nmine++;
}

static void findings_of(const struct report *r, struct peer_session *s)
{
	struct peer_findings *f = &s->mine;

	snprintf(f->host, sizeof(f->host), "%s", r->meta.hostname);
	snprintf(f->verdict, sizeof(f->verdict), "%s",
		 verdict_name(r->overall));
	snprintf(f->summary, sizeof(f->summary), "dmabuf %s, peermem %s, "
		 "nccl %s (exit %d)", verdict_name(r->path[PATH_DMABUF].verdict),
		 verdict_name(r->path[PATH_PEERMEM].verdict),
		 verdict_name(r->path[PATH_NCCL].verdict), r->exit_code);
	f->exit_code = (uint32_t)r->exit_code;
	f->nrails = (uint32_t)s->nmine;
	snprintf(f->nccl_version, sizeof(f->nccl_version), "%s",
		 r->nccl.version);
}

static int send_findings(struct peer_session *s)
{
	struct peer_buf b = { .len = 0 };
	int ret;

	peer_findings_encode(&s->mine, &b);
	ret = peer_send(&s->conn, PEER_FINDINGS, &b);
	for (int i = 0; !ret && i < s->nmine; i++) {
		b.len = 0;
		peer_rail_encode(&s->mine_rail[i], &b);
		ret = peer_send(&s->conn, PEER_RAIL, &b);
	}
	return ret;
}

__attribute__((format(printf, 3, 4)))
static int broke(struct peer_session *s, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->exchange_err, sizeof(s->exchange_err), fmt, ap);
	va_end(ap);
	return ret;
}

static int recv_findings(struct peer_session *s)
{
	uint8_t *buf = malloc(PEER_MAX_PAYLOAD);
	uint16_t type;
	size_t len;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = peer_recv(&s->conn, &type, buf, &len);
	if (!ret && (type != PEER_FINDINGS ||
		     peer_findings_decode(buf, len, &s->theirs)))
		ret = broke(s, -EPROTO, "the peer's findings do not decode "
			    "(message type %u)", type);
	if (!ret && s->theirs.nrails > PEER_MAX_RAILS)
		ret = broke(s, -EPROTO, "the peer offers %u rails (at most %d)",
			    s->theirs.nrails, PEER_MAX_RAILS);
	for (uint32_t i = 0; !ret && i < s->theirs.nrails; i++) {
		struct peer_rail *r = &s->their_rail[i];

		ret = peer_recv(&s->conn, &type, buf, &len);
		if (!ret && (type != PEER_RAIL || peer_rail_decode(buf, len, r)))
			ret = broke(s, -EPROTO, "the peer's rail %u does not "
				    "decode", i);
		for (uint32_t j = 0; !ret && j < i; j++)
			if (s->their_rail[j].rail == r->rail)
				ret = broke(s, -EPROTO, "the peer offers rail "
					    "%u twice", r->rail);
		if (!ret)
			s->ntheirs++;
	}
	free(buf);
	if (ret && !s->exchange_err[0])
		broke(s, ret, "%s", s->conn.err);
	return ret;
}

/* The same plan on both sides: rails both offer, in rail order, with the
 * mechanisms that work on both. */
static void make_plan(struct gdr_ctx *ctx, struct peer_session *s)
{
	struct peer_plan *p = &s->plan;

	p->conn = &s->conn;
	p->active = !s->listener;
	p->bytes = ctx->opt->reg_bytes ? ctx->opt->reg_bytes : PEER_BYTES;
	p->bw_ms = BW_MS;
	p->step_ms = STEP_MS;
	for (int i = 0; i < s->nmine; i++) {
		const struct peer_rail *m = &s->mine_rail[i];

		for (int j = 0; j < s->ntheirs; j++) {
			const struct peer_rail *t = &s->their_rail[j];
			struct peer_plan_rail *pr = &p->rails[p->nrails];

			if (t->rail != m->rail || !(m->mechs & t->mechs))
				continue;
			/* offer_rail offered mechanisms only with one */
			pr->ordinal = ctx->vf->cuda.gpus[
				ctx->inv.gpu[m->rail].cuda].ordinal;
			snprintf(pr->nic, sizeof(pr->nic), "%s", m->nic);
			pr->port = m->port;
			pr->gid_index = m->gid_index == UINT32_MAX ? -1 :
					(int)m->gid_index;
			pr->mechs = m->mechs & t->mechs;
			pr->remote = *t;
			p->nrails++;
		}
	}
}

int peer_plan_index(const struct peer_session *s, uint32_t rail)
{
	for (int i = 0; i < s->plan.nrails; i++)
		if (s->plan.rails[i].remote.rail == rail)
			return i;
	return -1;
}

static bool read_counter(struct sysroot *sr, const char *nic, int port,
			 const char *name, unsigned long long *v)
{
	char path[320];
	long long x;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/%s",
		 nic, port, name);
	if (sysroot_read_ll(sr, path, &x) || x < 0)
		return false;
	*v = (unsigned long long)x;
	return true;
}

/* port_xmit_data counts 4-byte words; rxe has only packet counts. */
static void counters_of(struct sysroot *sr, const struct peer_plan_rail *pr,
			struct peer_counters *c)
{
	memset(c, 0, sizeof(*c));
	if (read_counter(sr, pr->nic, pr->port, "counters/port_xmit_data",
			 &c->xmit) &&
	    read_counter(sr, pr->nic, pr->port, "counters/port_rcv_data",
			 &c->rcv)) {
		c->xmit *= 4;
		c->rcv *= 4;
		c->read = true;
		return;
	}
	c->in_packets = true;
	c->read = read_counter(sr, pr->nic, pr->port, "hw_counters/sent_pkts",
			       &c->xmit) &&
		  read_counter(sr, pr->nic, pr->port, "hw_counters/rcvd_pkts",
			       &c->rcv);
}

/* What the kernel holds for @ip on @dev: its connected route, its ARP
 * entry (@arp: /proc/net/arp, NULL when unreadable). */
static void neighbour_of(const struct peer_session *s, const char *arp,
			 const char *dev, const uint8_t ip[4], char *out,
			 size_t len)
{
	int prefix = route_prefix(s->routes, dev, ip);
	const char *where = prefix < 0 ? "(routes unreadable)" :
			    prefix ? "is on a connected route" :
			    "is not on a connected route";
	const char *line;
	char want[20];

	snprintf(want, sizeof(want), "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
	if (!arp) {
		snprintf(out, len, "%s %s from %s; ARP table unreadable", want,
			 where, dev);
		return;
	}
	snprintf(out, len, "%s %s from %s; no ARP entry for it on %s", want,
		 where, dev, dev);
	for (line = arp; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char addr[64], hw[64], ifname[32];
		unsigned int type, flags;

		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %31s", addr, &type,
			   &flags, hw, ifname) != 5 || strcmp(addr, want) ||
		    strcmp(ifname, dev))
			continue;
		snprintf(out, len, "%s %s from %s; ARP on %s: %s", want,
			 where, dev, dev, flags & 0x2 ?
			 "resolved" : "incomplete (no answer)");
		return;
	}
}

static void run_transfers(struct gdr_ctx *ctx, struct peer_session *s,
			  const struct vendor_options *vo)
{
	struct vendor_options v = *vo;
	double left = (vo->run_deadline_ms - now_ms()) / 1e3;
	char *arp = NULL;
	bool arp_read = false;

	s->vf = calloc(1, sizeof(*s->vf));
	if (!s->vf)
		return;
	for (int i = 0; i < s->plan.nrails; i++)
		counters_of(ctx->sr, &s->plan.rails[i], &s->before[i]);
	v.skip_cuda = v.skip_export = v.skip_verbs = v.skip_nvml = true;
	v.skip_registration = true;
	v.peer_plan = &s->plan;
	v.spare_child = 0;
	if (vo->run_deadline_ms > 0 && left > v.stage_timeout)
		v.stage_timeout = left;
	vendor_collect(&v, s->vf);
	for (int i = 0; i < s->plan.nrails; i++) {
		const struct peer_rail *t = &s->plan.rails[i].remote;
		const struct peer_rail *m = NULL;

		counters_of(ctx->sr, &s->plan.rails[i], &s->after[i]);
		for (int j = 0; j < s->nmine; j++)
			if (s->mine_rail[j].rail == t->rail)
				m = &s->mine_rail[j];
		if (!m || !m->netdev[0] || m->gid_family != 4 ||
		    t->gid_family != 4)
			continue;
		if (!arp_read) {
			arp = net_table(ctx->sr, "/proc/net/arp");
			arp_read = true;
		}
		neighbour_of(s, arp, m->netdev, t->gid + 12, s->neigh[i],
			     sizeof(s->neigh[i]));
	}
	free(arp);
}

static uint64_t moved(const struct peer_counters *a,
		      const struct peer_counters *b, bool xmit)
{
	if (!a->read || !b->read)
		return UINT64_MAX;
	return xmit ? b->xmit - a->xmit : b->rcv - a->rcv;
}

/* Each side's counters to the other, then BYE. */
static void final_exchange(struct peer_session *s)
{
	uint8_t *buf;
	uint16_t type;
	size_t len;
	int ret = 0;

	for (int i = 0; !ret && i < s->plan.nrails; i++) {
		struct peer_result r = { .rail = s->plan.rails[i].remote.rail };
		struct peer_buf b = { .len = 0 };

		r.xmit_bytes = moved(&s->before[i], &s->after[i], true);
		r.rcv_bytes = moved(&s->before[i], &s->after[i], false);
		snprintf(r.detail, sizeof(r.detail), "%s",
			 s->before[i].in_packets ? "packets" : "bytes");
		peer_result_encode(&r, &b);
		ret = peer_send(&s->conn, PEER_RESULT, &b);
	}
	buf = malloc(PEER_MAX_PAYLOAD);
	for (int i = 0; !ret && buf && i < s->plan.nrails; i++) {
		struct peer_result r;
		int k;

		ret = peer_recv(&s->conn, &type, buf, &len);
		if (ret)
			break;
		if (type != PEER_RESULT || peer_result_decode(buf, len, &r)) {
			ret = -EPROTO;
			snprintf(s->conn.err, sizeof(s->conn.err), "the peer's "
				 "counters do not decode (type %u)", type);
			break;
		}
		k = peer_plan_index(s, r.rail);
		if (k >= 0) {
			s->their_end[k] = r;
			s->have_their_end[k] = true;
		}
	}
	free(buf);
	s->final_ret = ret;
	if (ret)
		snprintf(s->final_err, sizeof(s->final_err), "%s", s->conn.err);
}

static int bootstrap(struct gdr_ctx *ctx, struct peer_session *s,
		     const struct vendor_options *vo)
{
	const char *job = getenv("SLURM_JOB_ID");

	s->conn.deadline_ms = vo->run_deadline_ms;
	if (s->listener)
		return peer_listen(&s->conn, s->endpoint, ctx->opt->token,
				   ctx->rep->meta.hostname);
	return peer_connect(&s->conn, s->endpoint, ctx->opt->token,
			    ctx->rep->meta.hostname, job ? job : "");
}

static void rail_line(char **w, char *end, const char *side,
		      const struct peer_rail *r)
{
	*w += snprintf(*w, (size_t)(end - *w), "%s rail %u gpu %s nic %s port %u "
		       "link_layer %u gid_index %d gid_type %u gid_family %u "
		       "mtu %u rate_mbps %u pcie_mbps %u pkey 0x%04x mechs %u\n",
		       side, r->rail, r->gpu_pci, r->nic, r->port, r->link_layer,
		       r->gid_index == UINT32_MAX ? -1 : (int)r->gid_index,
		       r->gid_type, r->gid_family, r->netdev_mtu, r->rate_mbps,
		       r->pcie_mbps, r->pkey, r->mechs);
	if (*w > end)
		*w = end;
}

/* --capture: what the two sides told each other (/gdrcheck/peer). */
static void capture_exchange(struct gdr_ctx *ctx, const struct peer_session *s)
{
	size_t len = 4096 + 512 * (size_t)(s->nmine + s->ntheirs +
					   2 * s->plan.nrails);
	char *text = malloc(len), *w = text, *end = text + len - 1;

	if (!text)
		return;
	w += snprintf(w, len, "role %s\nconnect %d %s\nexchange %d\n"
		      "peer %s verdict %s\n", s->listener ? "listener" :
		      "connector", s->conn_ret, s->conn.err, s->exchange_ret,
		      s->theirs.host, s->theirs.verdict);
	for (int i = 0; i < s->nmine; i++)
		rail_line(&w, end, "mine", &s->mine_rail[i]);
	for (int i = 0; i < s->ntheirs; i++)
		rail_line(&w, end, "theirs", &s->their_rail[i]);
	for (int i = 0; s->vf && i < s->plan.nrails; i++)
		for (int m = 0; m < PEER_NMECH && w < end; m++) {
			const struct peer_xfer *x = &s->vf->peer.rails[i].mech[m];

			if (!x->tried)
				continue;
			w += snprintf(w, (size_t)(end - w), "xfer rail %u mech %d "
				      "ok %d step '%s' err %d wc %d peer '%s' "
				      "gbps %.3f lat_us %.1f\n",
				      s->plan.rails[i].remote.rail, m, x->ok,
				      x->step, x->err, x->wc_status,
				      x->peer_error, x->gbps, x->lat_us);
		}
	if (w > end)
		w = end;
	*w = '\0';
	capfact_write(ctx, "peer", text);
	free(text);
}

void peer_session_run(struct gdr_ctx *ctx, const struct vendor_options *vo)
{
	struct peer_session *s;

	if (!ctx->opt->listen && !ctx->opt->peer)
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	ctx->peer = s;
	s->conn.fd = -1;
	s->listener = ctx->opt->listen != NULL;
	s->endpoint = s->listener ? ctx->opt->listen : ctx->opt->peer;
	for (size_t k = 0; k < ctx->inv.ngpu && k < PEER_MAX_RAILS; k++)
		offer_rail(ctx, s, (int)k);
	findings_of(ctx->rep, s);
	s->conn_ret = bootstrap(ctx, s, vo);
	if (!s->conn_ret) {
		/* Both send first: a few kB, well inside the sockets' buffers. */
		s->exchange_ret = send_findings(s);
		if (s->exchange_ret)
			broke(s, s->exchange_ret, "%s", s->conn.err);
		else
			s->exchange_ret = recv_findings(s);
	}
	if (!s->conn_ret && !s->exchange_ret) {
		make_plan(ctx, s);
		if (s->plan.nrails)
			run_transfers(ctx, s, vo);
		if (!s->plan.nrails ||
		    (s->vf && s->vf->stage[WSTAGE_PEER].state == STAGE_DONE &&
		     !s->vf->peer.conn_err))
			final_exchange(s);
		else
			/* Mid-protocol (a worker killed or crashed, the channel
			 * broken): hang up now, so the other side's wait ends
			 * with PEER_GONE instead of its step timeout. */
			peer_close(&s->conn);
	}
	capture_exchange(ctx, s);
}

void peer_session_free(struct gdr_ctx *ctx)
{
	struct peer_session *s = ctx->peer;

	if (!s)
		return;
	peer_close(&s->conn);
	free(s->routes);
	if (s->vf) {
		vendor_facts_free(s->vf);
		free(s->vf);
	}
	free(s);
	ctx->peer = NULL;
}
