// SPDX-License-Identifier: MIT
/*
 * The NCCL model of one run (see probes/nccl_state.h): built on first use
 * from the facts probes/nccl_facts.c gathers, with the pure rules of
 * nccl/ (nccl/netdev.c: the ports NCCL opens and NIC fusion; nccl/pciview.c:
 * its PCI view; nccl/model.c: paths, GDR decisions and rails), run as
 * built and as it is; then the report's typed facts (struct nccl_facts).
 * Emits nothing: the gates are probes/nccl.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/mlx5.h"
#include "core/xalloc.h"
#include "nccl/rules.h"
#include "probes/nccl_state.h"
#include "probes/probes.h"

#define MAX_GIDS 256

static void nccl_state_free(struct gdr_ctx *ctx);
static void fill_facts(struct gdr_ctx *ctx, struct nccl_state *s);

const char *nccl_get(const struct nccl_state *s, const char *name)
{
	return nccl_conf_get(&s->conf, name, NULL, NULL);
}

void nccl_ver_string(int ver, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d.%d", ver / 10000, ver / 100 % 100, ver % 100);
}

const char *nccl_mech_name(enum nccl_mech m)
{
	return m == NCCL_MECH_DMABUF ? "dmabuf" :
	       m == NCCL_MECH_PEERMEM ? "peermem" : "host";
}

int nccl_pair_index(const struct gdr_ctx *ctx, int gpu, int nic)
{
	return ctx->nccl->pair_at[(size_t)gpu * ctx->inv.nnic + (size_t)nic];
}

/* Data Direct (nccl_dd_apply) from the NIC's libmlx5 facts. */
static void dd_apply(const struct gdr_ctx *ctx, const struct nccl_state *s,
		     const struct inv_pair *pr, struct nccl_pair_model *m)
{
	const struct verbs_nic *v = ctx_verbs_nic(ctx, pr->nic);
	const char *fn;
	struct nccl_dd_nic dn;

	if (!v)
		return;
	fn = strrchr(v->dd_path, '/');
	dn.capable = mlx5_data_direct(v);
	dn.fn = fn ? fn + 1 : v->dd_path;
	nccl_dd_apply(s->ver, s->set.ib_data_direct, &ctx->tree, pr->node_gpu, &dn,
		      m);
}

/* The device name NCCL gives the pair's NIC. */
const char *nccl_nic_name(const struct gdr_ctx *ctx, int pi, char *buf,
			  size_t len)
{
	int nic = ctx->inv.pair[pi].nic;
	const char *name = ctx->nccl->fuse ? ctx->nccl->fuse[nic].name :
			   ctx->inv.nic[nic].name;

	snprintf(buf, len, "%s%s", name, ctx->nccl->pm[pi].dd ? "_dma" : "");
	return buf;
}

/*
 * NCCL's PCI view of the pair (nccl_pci_view), then the port's rate: the
 * NIC -> NET link. Not modelled: the CPU interconnect of a SYS path
 * (topo.cc ncclTopoConnectCpus), NVLink/C2C links.
 */
static void pci_view(struct gdr_ctx *ctx, struct nccl_state *s,
		     const struct inv_pair *pr, struct nccl_pair_model *m)
{
	const struct nccl_pci_view_in in = {
		s->ver, &ctx->tree, &pr->path, pr->node_gpu, pr->node_nic, &s->rd,
	};
	const struct nccl_port_facts *pf;
	struct nccl_pci_bw b;

	if (!nccl_pci_view(&in, m, &b))
		return;
	if (m->port < 0)
		return;
	/* A fused device: its ports' speeds summed (ncclIbMakeVDevice). */
	if (s->fuse[pr->nic].ports > 1 && s->fuse[pr->nic].mbps > 0) {
		nccl_pci_view_port(m, &b, (int)s->fuse[pr->nic].mbps);
		return;
	}
	pf = nccl_port_of(s, pr->nic, m->port);
	if (!pf || !pf->rate_read)
		return;
	nccl_pci_view_port(m, &b, nccl_port_mbps(s->ver, pf));
}

/*
 * The NCCL settings ncclIbGetGidIndex reads, for platform.provider: the
 * version modelled, NCCL_IB_GID_INDEX and NCCL_IB_ADDR_FAMILY (envIbAddrFamily,
 * net_ib.cc from v2.21.5-1: "AF_INET6" selects IPv6, anything else AF_INET).
 */
void nccl_gid_settings(struct gdr_ctx *ctx, int *ver, int64_t *gid_index,
		       int *family)
{
	const struct nccl_state *s = nccl_model(ctx);

	*ver = s->ver;
	*gid_index = s->set.gid_index;
	*family = nccl_addr_family(s->ver, nccl_get(s, "NCCL_IB_ADDR_FAMILY"));
}

/*
 * Does the modelled NCCL use inventory pair pair's NIC as `<dev>_dma`
 * (Data Direct, dd_apply)? topo.best_nic measures such a NIC where NCCL
 * does.
 */
bool nccl_pair_dd(struct gdr_ctx *ctx, int pair)
{
	const struct nccl_state *s = nccl_model(ctx);

	return pair >= 0 && (size_t)pair < ctx->inv.npair && s->pm &&
	       s->pm[pair].dd;
}

const char *nccl_pair_bcm_near(struct gdr_ctx *ctx, int pair)
{
	const struct nccl_state *s = nccl_model(ctx);
	const struct nccl_pair_model *m;

	if (pair < 0 || (size_t)pair >= ctx->inv.npair || !s->pm)
		return NULL;
	m = &s->pm[pair];
	if (!m->known || !(m->bcm || m->vlink) || m->type > NPT_PXB)
		return NULL;
	return nccl_ptype_name(m->type);
}

/*
 * Does the modelled NCCL export pair's dma-buf with the PCIe (BAR1) mapping
 * type (gdrMode PCI, net.cc: CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)
 * for either direction? platform.iommu_group: only that mapping is refused
 * across IOMMU groups.
 */
bool nccl_pair_pcie_mapping(struct gdr_ctx *ctx, int pair)
{
	const struct nccl_state *s = nccl_model(ctx);

	return pair >= 0 && (size_t)pair < ctx->inv.npair && s->pm &&
	       (s->pm[pair].wr.mode == NCCL_GDR_PCI ||
		s->pm[pair].rd.mode == NCCL_GDR_PCI);
}

/* NIC fusion this pass (nccl_fuse) over the ports NCCL opens. */
static void fuse_pass(struct nccl_state *s)
{
	const struct nccl_fuse_in in = {
		.ver = s->ver,
		.set = &s->set,
		.as_built = s->as_built,
		.merge_nics = nccl_get(s, "NCCL_IB_MERGE_NICS"),
		.merge_level = nccl_get(s, "NCCL_NET_MERGE_LEVEL"),
		.merge_vfs = nccl_get(s, "NCCL_IB_MERGE_VFS"),
		.nics = s->nics,
		.nnic = s->nnic,
	};

	nccl_fuse(&in, s->fuse);
}

/* ncclIbGetGidIndex (nccl_gid_index) on the port's GID table; -1 none. */
static int gid_of(const struct nccl_state *s, int nic, int port)
{
	static struct nccl_gid tbl[MAX_GIDS];
	struct nccl_gid_in in;
	int n = nccl_facts_gid_table(s, nic, port, tbl, MAX_GIDS), idx = -1;

	if (!n)
		return -1;
	memset(&in, 0, sizeof(in));
	in.ver = s->ver;
	in.gid_index = s->set.gid_index;
	in.roce_ver = s->set.roce_ver;
	in.flid_index = 1;
	in.family = nccl_addr_family(s->ver, nccl_get(s, "NCCL_IB_ADDR_FAMILY"));
	in.tbl = tbl;
	in.n = n;
	return nccl_gid_index(&in, &idx) ? -1 : idx;
}

/*
 * One pass of the model over every pair: NCCL's devices (ACTIVE ports,
 * unless as_built), the rails, PXN, the GDR decisions. Run twice on a node
 * with a port that is not ACTIVE: as built, then as it is now.
 */
static void model_pass(struct gdr_ctx *ctx, struct nccl_state *s,
		       const struct nccl_node *nd)
{
	const struct inventory *inv = &ctx->inv;

	memset(s->pm, 0, (inv->npair ? inv->npair : 1) * sizeof(*s->pm));
	for (size_t i = 0; i < inv->ngpu * inv->nnic; i++)
		s->pair_at[i] = -1;
	fuse_pass(s);
	for (size_t i = 0; i < inv->npair; i++) {
		const struct inv_pair *pr = &inv->pair[i];
		struct nccl_pair_model *m = &s->pm[i];

		s->pair_at[(size_t)pr->gpu * inv->nnic + (size_t)pr->nic] = (int)i;
		m->relay = -1;
		m->gid_index = -1;
		m->known = pr->path.known && pr->path.cls != TOPO_UNKNOWN;
		m->type = m->known ? nccl_ptype_of_class(pr->path.cls) : NPT_DIS;
		dd_apply(ctx, s, pr, m);
		m->port = nccl_first_port(&s->set, &s->nics[pr->nic],
					  s->as_built);
		/* A NIC fused into another's device is no device of its own. */
		m->used = s->set.ib_used && m->known && m->port >= 0 &&
			  s->fuse[pr->nic].lead == pr->nic;
		pci_view(ctx, s, pr, m);
		/* ncclTopoSetPaths: every link has the same width both ways. */
		m->net_type = m->type;
		m->net_bw = m->bw;
	}

	nccl_model_paths(nd, s->pm);
	for (size_t i = 0; i < inv->npair; i++)
		if (s->pm[i].used && s->pm[i].rail)
			s->pm[i].gid_index = gid_of(s, inv->pair[i].nic,
						    s->pm[i].port);
}

/*
 * A Grace GPU's local CPU as NCCL 2.19.3-2.26.1 searches it
 * (nccl_local_cpu_circle): the search recurses until the stack runs out,
 * and NCCL of that release dies in ncclTopoGetSystem, before any rail.
 */
static void local_cpu_check(struct gdr_ctx *ctx, struct nccl_state *s)
{
	const struct inventory *inv = &ctx->inv;
	int *members = xcalloc(inv->npair * 2 + 1, sizeof(int));
	size_t n = 0;

	s->circle_gpu = s->circle_switch = -1;
	if (!nccl_local_cpu_search_circles(s->ver)) {
		free(members);
		return;
	}
	for (size_t i = 0; i < inv->npair; i++) {
		members[n++] = inv->pair[i].node_gpu;
		if (s->pm[i].used)
			members[n++] = inv->pair[i].node_nic;
	}
	for (size_t i = 0; i < inv->npair && s->circle_gpu < 0; i++) {
		int g = inv->pair[i].gpu, at;

		if (gpu_is_c2c(ctx, g) != 1)
			continue;
		at = nccl_local_cpu_circle(&ctx->tree, &s->rd, members, n,
					   inv->pair[i].node_gpu);
		if (at >= 0) {
			s->circle_gpu = g;
			s->circle_switch = at;
		}
	}
	/* No communicator, no rails. */
	for (size_t i = 0; s->circle_gpu >= 0 && i < inv->npair; i++)
		s->pm[i].rail = false;
	free(members);
}

struct nccl_state *nccl_model(struct gdr_ctx *ctx)
{
	const struct inventory *inv = &ctx->inv;
	struct nccl_node nd;
	struct nccl_state *s;

	if (ctx->nccl)
		return ctx->nccl;
	s = xcalloc(1, sizeof(*s));
	ctx->nccl = s;
	ctx_at_end(ctx, nccl_state_free);	/* after the last gate */
	nccl_facts_release(ctx, s);
	nccl_facts_node_files(ctx, s);
	s->pm = xcalloc(inv->npair ? inv->npair : 1, sizeof(*s->pm));
	s->pair_at = xcalloc(inv->ngpu * inv->nnic + 1, sizeof(int));
	s->fuse = xcalloc(inv->nnic + 1, sizeof(*s->fuse));
	nccl_facts_node(ctx, s, &nd);
	if (nccl_ports_down(&s->set, s->nics, inv->nnic)) {
		s->as_built = true;
		model_pass(ctx, s, &nd);
		s->built = xcalloc(inv->npair + 1, sizeof(*s->built));
		for (size_t i = 0; i < inv->npair; i++) {
			s->built[i].rail = s->pm[i].used && s->pm[i].rail;
			s->built[i].port = s->pm[i].port;
		}
		s->as_built = false;
	}
	model_pass(ctx, s, &nd);
	local_cpu_check(ctx, s);
	nccl_facts_node_free(&nd);
	fill_facts(ctx, s);
	return s;
}

/*
 * Is NCCL there for the node's jobs (--require auto)? A library found or
 * named, a release named, or an NCCL_* setting NCCL would read. The
 * assumed newest release of a node without any of these is not NCCL.
 */
static void nccl_found(const struct nccl_state *s, struct nccl_facts *f)
{
	enum nccl_conf_src src;
	const char *set;

	if (s->vcode != C_NCCL_NOT_FOUND && s->vcode != C_NOT_REPLAYED) {
		f->found = true;
		snprintf(f->found_how, sizeof(f->found_how), "%s", s->vsrc);
		return;
	}
	set = nccl_conf_first_setting(&s->conf, &src);
	if (!set)
		return;
	f->found = true;
	snprintf(f->found_how, sizeof(f->found_how), "%.*s set (%s)",
		 (int)strcspn(set, "="), set, nccl_conf_src_name(src));
}

/* The typed facts of the report: the rails of every GPU. */
static void fill_facts(struct gdr_ctx *ctx, struct nccl_state *s)
{
	struct nccl_facts *f = &ctx->rep->nccl;
	const struct inventory *inv = &ctx->inv;

	f->modelled = true;
	snprintf(f->version, sizeof(f->version), "%s", s->version);
	snprintf(f->version_source, sizeof(f->version_source), "%s", s->vsrc);
	f->version_assumed = s->vcode == C_NCCL_NOT_FOUND ||
			     s->vcode == C_NCCL_VERSION_UNREADABLE ||
			     s->vcode == C_NOT_REPLAYED;
	nccl_found(s, f);
	f->ofi_only = inv->nnic > 0;
	for (size_t n = 0; n < inv->nnic; n++)
		f->ofi_only &= nic_is_efa(ctx, &inv->nic[n]);
	f->ngpus = inv->ngpu;
	/* report_alloc does not clear: every rail count starts at 0. */
	f->gpus = report_alloc(ctx->rep, (inv->ngpu ? inv->ngpu : 1) *
			       sizeof(*f->gpus));
	memset(f->gpus, 0, (inv->ngpu ? inv->ngpu : 1) * sizeof(*f->gpus));
	for (size_t g = 0; g < inv->ngpu; g++) {
		struct nccl_gpu_rails *gr = &f->gpus[g];

		size_t want = 0;

		gr->gpu = inv->gpu[g].subject;
		/* As many rails as the model gives the GPU: no fixed cap (an
		 * SR-IOV node has dozens of equally near VFs). */
		for (size_t n = 0; n < inv->nnic; n++) {
			int pi = nccl_pair_index(ctx, (int)g, (int)n);

			want += pi >= 0 && s->pm[pi].rail && s->pm[pi].used;
		}
		gr->rail = report_alloc(ctx->rep, (want ? want : 1) *
					sizeof(*gr->rail));
		memset(gr->rail, 0, (want ? want : 1) * sizeof(*gr->rail));
		for (size_t n = 0; n < inv->nnic; n++) {
			int pi = nccl_pair_index(ctx, (int)g, (int)n);
			const struct nccl_pair_model *m;
			struct nccl_rail *r;

			if (pi < 0 || !s->pm[pi].rail || !s->pm[pi].used ||
			    (size_t)gr->nrails >= want)
				continue;
			m = &s->pm[pi];
			r = &gr->rail[gr->nrails++];
			r->nic = inv->nic[n].subject;
			r->port = m->port;
			r->gid_index = m->gid_index;
			r->path = nccl_ptype_name(m->type);
			r->relay_gpu = m->relay >= 0 ? inv->gpu[m->relay].subject : -1;
			r->gdr_send = m->rd.mode != NCCL_GDR_DISABLED;
			r->gdr_recv = m->wr.mode != NCCL_GDR_DISABLED;
			r->undecided = m->undecided != NULL;
			r->hidden = ctx_gpu_hidden(ctx, (int)g);
			r->mech_send = m->undecided ? "unknown" :
				       nccl_mech_name(m->mrd.mech);
			r->mech_recv = m->undecided ? "unknown" :
				       nccl_mech_name(m->mwr.mech);
			r->no_fallback = m->mrd.no_fallback || m->mwr.no_fallback;
			r->data_direct = m->dd;
			r->fused_ports = s->fuse[n].ports;
			if (m->dd || s->fuse[n].ports > 1) {
				char nm[192];

				char *dup;

				nccl_nic_name(ctx, pi, nm, sizeof(nm));
				dup = report_alloc(ctx->rep, strlen(nm) + 1);
				memcpy(dup, nm, strlen(nm) + 1);
				r->nccl_device = dup;
			}
			r->proof = "unproven";
		}
	}
}

/* The model's working state, freed after the gates (ctx_end). */
static void nccl_state_free(struct gdr_ctx *ctx)
{
	struct nccl_state *s = ctx->nccl;

	if (!s)
		return;
	nccl_facts_free(s);
	free(s->pm);
	free(s->pair_at);
	free(s->fuse);
	free(s->built);
	free(s);
	ctx->nccl = NULL;
}
