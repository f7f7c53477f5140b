// SPDX-License-Identifier: MIT
/*
 * NCCL's path rewrites, GDR decisions and rail choice over the node's
 * pairs (see nccl/model.h): P2C, PXN, ncclTopoCheckGdr and the mechanism
 * both ways, the no-GDR detour through the CPU, and the rails
 * ncclTopoGetLocal gives each GPU. Pure: the facts come in typed
 * (struct nccl_node), the pair models are updated in place.
 */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "nccl/model.h"

static int pair_at(const struct nccl_node *nd, size_t gpu, size_t nic)
{
	return nd->pair_at[gpu * nd->nnic + nic];
}

static double min_bw(double a, double b)
{
	return a < b ? a : b;
}

/*
 * ncclTopoGetLocalNet's localGpuCount for a GPU whose first local NIC is
 * nic: the GPUs nearest that NIC by its own paths. paths: room for ngpu.
 */
static int net_local_gpus(const struct nccl_node *nd,
			  const struct nccl_pair_model *pm, int nic,
			  struct nccl_net_path *paths)
{
	int nc = 0;
	bool bw_known = true;

	for (size_t h = 0; h < nd->ngpu; h++) {
		int pi = pair_at(nd, h, (size_t)nic);

		/* NCCL's system holds the GPUs whose path it knows. */
		if (pi < 0 || !pm[pi].used)
			continue;
		paths[nc].type = pm[pi].net_type;
		paths[nc].bw = pm[pi].net_bw;
		bw_known &= paths[nc].bw > 0;
		nc++;
	}
	/* As for the GPU's side: a width unread compares the types alone. */
	for (int k = 0; k < nc && !bw_known; k++)
		paths[k].bw = 1.0;
	return nc ? nccl_net_local_gpus(nd->ver, paths, nc) : 0;
}

/* Each GPU's nearest NICs (ncclTopoGetLocal): locals[g * nnic + k]. */
static void local_nets(const struct nccl_node *nd,
		       const struct nccl_pair_model *pm, int *locals,
		       int *nlocal, struct nccl_net_path *paths)
{
	size_t ng = nd->ngpu, nn = nd->nnic;
	int *cand = xcalloc(nn + 1, sizeof(int));
	/* As many equally near NICs as the node has (an SR-IOV host: 256). */
	int *loc = xcalloc(nn + 1, sizeof(int));

	for (size_t g = 0; g < ng; g++) {
		int nc = 0;
		bool bw_known = true;

		for (size_t n = 0; n < nn; n++) {
			int pi = pair_at(nd, g, n);

			if (pi < 0 || !pm[pi].used)
				continue;
			cand[nc] = (int)n;
			paths[nc].type = pm[pi].type;
			paths[nc].bw = pm[pi].bw;
			bw_known &= pm[pi].bw > 0;
			nc++;
		}
		/* A port rate unread: compare the types alone (equal widths). */
		for (int k = 0; k < nc && !bw_known; k++)
			paths[k].bw = 1.0;
		nlocal[g] = nc ? nccl_local_nets(nd->ver, paths, nc, loc) : 0;
		for (int k = 0; k < nlocal[g]; k++)
			locals[g * nn + (size_t)k] = cand[loc[k]];
	}
	free(cand);
	free(loc);
}

/*
 * Rails from the pairs' current path types: ncclTopoGetLocal (the nearest
 * NICs) then ncclTopoGetLocalNet. NCCL runs it on gpu->paths[NET] after
 * ncclTopoComputePaths, so after the PXN rewrite and the no-GDR re-route
 * (paths.cc; topo.cc; apply_nogdr). The GPU count it divides by is
 * seen from the first local NIC (net_type/net_bw), where PXN is not: a GPU
 * reaching its NICs by PXN usually shares them with one GPU only.
 */
static void pick_rails(const struct nccl_node *nd, struct nccl_pair_model *pm)
{
	size_t ng = nd->ngpu, nn = nd->nnic;
	int *locals = xcalloc(ng * nn + 1, sizeof(int));
	int *nlocal = xcalloc(ng + 1, sizeof(int));
	struct nccl_net_path *paths = xcalloc((nn > ng ? nn : ng) + 1,
					      sizeof(*paths));

	for (size_t i = 0; i < nd->npair; i++)
		pm[i].rail = false;
	local_nets(nd, pm, locals, nlocal, paths);
	for (size_t g = 0; g < ng; g++) {
		struct nccl_rail_in ri;
		int lg, same = 0, same_idx = 0;

		if (!nlocal[g])
			continue;
		lg = net_local_gpus(nd, pm, locals[g * nn], paths);
		for (size_t h = 0; h < ng; h++) {
			bool eq = nlocal[h] == nlocal[g];

			for (int k = 0; k < nlocal[h]; k++)
				eq &= locals[h * nn + (size_t)k] ==
				      locals[g * nn + (size_t)k];
			if (eq) {
				if (h < g)
					same_idx++;
				same++;
			}
		}
		memset(&ri, 0, sizeof(ri));
		ri.ver = nd->ver;
		ri.gpu_dev = nd->gpu[g].dev;
		ri.local_nets = nlocal[g];
		ri.local_gpus = lg ? lg : 1;
		ri.same_set_index = same_idx;
		ri.same_set_count = same;
		ri.policy = nccl_netdevs_parse(nd->netdevs_policy,
					       &ri.policy_max);
		for (int ch = 0; ch < nlocal[g]; ch++) {
			const int *mine = &locals[g * nn];
			int k;

			ri.channel = ch;
			k = nccl_rail_pick(&ri);
			if (k >= 0 && k < nlocal[g])
				pm[pair_at(nd, g, (size_t)mine[k])].rail = true;
		}
	}
	free(locals);
	free(nlocal);
	free(paths);
}

/*
 * paths.cc ncclTopoComputePaths, "update the GPU -> NIC path in the case
 * of C2C + PHB" (2.27.3-2.30.7, rule in nccl_p2c_path): on a GPU whose CPU
 * path is C2C, a NIC behind the same CPU (NIC->CPU PHB) is P2C. It runs
 * after ncclTopoSetPaths and before PXN; since 2.29.2 only for the GPU's
 * ncclTopoGetLocal NICs, taken from the PCI-walk types. The NIC's path to
 * the GPU's CPU: SYS when the pair crosses CPUs, else PHB.
 */
static void apply_p2c(const struct nccl_node *nd, struct nccl_pair_model *pm)
{
	size_t nn = nd->nnic;
	struct nccl_net_path *paths = xcalloc(nn + 1, sizeof(*paths));
	int *cand = xcalloc(nn + 1, sizeof(int));
	int *loc = xcalloc(nn + 1, sizeof(int));
	bool *local = xcalloc(nn + 1, sizeof(bool));

	for (size_t g = 0; g < nd->ngpu; g++) {
		enum nccl_ptype gc = nd->gpu[g].cpu_path;
		int nc = 0, nl;

		if (gc != NPT_C2C)
			continue;
		for (size_t n = 0; n < nn; n++) {
			int pi = pair_at(nd, g, n);

			local[n] = false;
			if (pi < 0 || !pm[pi].used)
				continue;
			cand[nc] = (int)n;
			paths[nc].type = pm[pi].type;
			paths[nc].bw = 1.0;	/* bandwidths not modelled */
			nc++;
		}
		nl = nc ? nccl_local_nets(nd->ver, paths, nc, loc) : 0;
		for (int k = 0; k < nl; k++)
			local[cand[loc[k]]] = true;
		for (size_t n = 0; n < nn; n++) {
			int pi = pair_at(nd, g, n);
			struct nccl_pair_model *m;

			if (pi < 0 || !pm[pi].used)
				continue;
			m = &pm[pi];
			m->type = nccl_p2c_path(nd->ver, m->type, gc,
						m->type == NPT_SYS ? NPT_SYS :
						NPT_PHB, local[n]);
			if (nccl_rewrite_net_side(nd->ver, NCCL_RW_P2C))
				m->net_type = m->type;
		}
	}
	free(paths);
	free(cand);
	free(loc);
	free(local);
}

/*
 * ncclTopoCheckGdr both ways for one pair (relay_dist: the PXN relay's
 * distance, NPT_DIS for none), and the mechanism each way.
 */
static void decide(const struct nccl_node *nd, size_t pair,
		   struct nccl_pair_model *m, enum nccl_ptype relay_dist)
{
	const struct nccl_gpu_facts *g = &nd->gpu[nd->pair_gpu[pair]];
	const struct nccl_nic_facts *n = &nd->nic[nd->pair_nic[pair]];
	struct nccl_mech_out probe;
	struct nccl_gdr_in in;

	nccl_mechanism(nd->ver, true, g->comm_dmabuf, n->dmabuf, nd->peermem,
		       &probe);
	memset(&in, 0, sizeof(in));
	in.ver = nd->ver;
	in.net_gdr = probe.net_gdr;
	in.gpu_gdr = g->gdr;
	/*
	 * Only an answered compute capability inside its domain counts; else
	 * the read rule falls back to the newest GPUs' (cc >= 8: on), and the
	 * result says it assumed.
	 */
	m->cc_unknown = g->cc_unknown;
	in.cc = g->cc;
	in.ngpus = (int)nd->ngpu;
	in.nvlink_peer = nd->npeers[nd->pair_gpu[pair]] > 0;
	in.dist = m->type;
	in.relay_dist = relay_dist;
	in.cpu_c2c = g->c2c;
	in.gdr_read = nd->gdr_read;
	in.gdr_c2c = nd->gdr_c2c;
	in.level_set = nd->level_set;
	in.level = nd->level;
	in.read = true;
	m->err = nccl_gdr_decide(&in, &m->rd);
	in.read = false;
	m->err |= nccl_gdr_decide(&in, &m->wr);
	nccl_mechanism(nd->ver, m->rd.mode != NCCL_GDR_DISABLED,
		       g->comm_dmabuf, n->dmabuf, nd->peermem, &m->mrd);
	nccl_mechanism(nd->ver, m->wr.mode != NCCL_GDR_DISABLED,
		       g->comm_dmabuf, n->dmabuf, nd->peermem, &m->mwr);
	/* Unknown is not no (issue 23): the GPU's inputs, then the NIC's. */
	m->undecided = m->wr.mode == NCCL_GDR_DISABLED &&
		       m->wr.why == NCCL_GDR_NO_SUPPORT ?
		       (g->unknown ? g->unknown : n->unknown) : NULL;
}

/* Does pair i send through NVLink peer p's rail to the same NIC? */
static bool pxn_through(const struct nccl_node *nd,
			struct nccl_pair_model *pm, size_t i, int p)
{
	struct nccl_pair_model *m = &pm[i];
	struct nccl_pxn_in x;
	int pi;

	if (p < 0 || (size_t)p >= nd->ngpu || p == nd->pair_gpu[i])
		return false;
	pi = pair_at(nd, (size_t)p, (size_t)nd->pair_nic[i]);
	if (pi < 0 || !pm[pi].rail || pm[pi].relay >= 0)
		return false;
	memset(&x, 0, sizeof(x));
	x.ver = nd->ver;
	x.pxn_disable = nd->pxn_disable;
	x.pxn_c2c = nd->pxn_c2c;
	x.gpu_net = m->type;
	x.gpu_net_bw = m->bw;
	x.peer_net = pm[pi].type;
	x.peer_net_bw = pm[pi].bw;
	x.peer_nvlink = true;
	x.same_system = true;
	x.peer_is_relay = true;
	x.peer_gdr_read = pm[pi].rd.mode != NCCL_GDR_DISABLED;
	if (!nccl_pxn_applies(&x))
		return false;
	m->relay = p;
	m->relay_dist = pm[pi].type;
	m->type = NPT_PXN;
	/* min(NVLink, relay->NIC): the relay's path. */
	m->bw = pm[pi].bw;
	if (nccl_rewrite_net_side(nd->ver, NCCL_RW_PXN)) {
		m->net_type = m->type;
		m->net_bw = m->bw;
	}
	return true;
}

/*
 * PXN (paths.cc ncclTopoComputePaths): the relay is the NIC's local
 * GPU (ncclTopoGetLocalGpu, from the NIC->GPU paths PXN never
 * rewrites: here the GPUs the NIC is a rail of before PXN), and
 * ncclTopoCheckGdr(relay, NIC, read) must pass (2.30.3+); so the
 * pre-PXN rails and their GDR decisions come first.
 */
static bool apply_pxn(const struct nccl_node *nd, struct nccl_pair_model *pm)
{
	bool any_pxn = false;

	for (size_t i = 0; i < nd->npair; i++) {
		int g = nd->pair_gpu[i];

		if (!pm[i].used)
			continue;
		for (int k = 0; k < nd->npeers[g] && pm[i].relay < 0; k++)
			any_pxn |= pxn_through(nd, pm, i,
				nd->peers[(size_t)g * nd->ngpu + (size_t)k]);
	}
	return any_pxn;
}

/*
 * paths.cc ncclTopoComputePaths' last step, "Update path when we dont
 * want to / can't use GPU Direct RDMA" (rule in nccl_nogdr_path; after the
 * PXN step of the same pair, before ncclTopoGetLocal picks the rails): a
 * pair whose write-direction check (ncclTopoCheckGdr read=0, decided in
 * m->wr) fails is diverted through the GPU's local CPU, GPU->CPU (C2C,
 * NVL or PHB: gpu_cpu) then CPU->NIC (PHB on the GPU's CPU, SYS
 * across CPUs); its bandwidth is the smaller half (addInterStep). A PXN
 * pair so diverted loses its relay. The decisions stay those of the path
 * NCCL checked (they are off both ways: a write failure fails the read
 * check too), so a TOO_FAR result names the PCI distance that caused it.
 * NCCL's GPU index order (NIC-major loop, a relay's path re-routed before
 * or after the PXN test) does not change the outcome: a relay whose own
 * pair fails the write check fails PXN's read check (2.30.3+) and gives
 * its peer's PXN path the same distance to fail with (before). Returns
 * whether a type or bandwidth changed (the rails must be picked again).
 */
static bool apply_nogdr(const struct nccl_node *nd, struct nccl_pair_model *pm)
{
	bool changed = false;

	for (size_t i = 0; i < nd->npair; i++) {
		struct nccl_pair_model *m = &pm[i];
		enum nccl_ptype gc, t;
		double bw = 0;

		if (!m->used || m->err)
			continue;
		gc = nd->gpu[nd->pair_gpu[i]].cpu_path;
		if (!nccl_nogdr_path(nd->ver, m->type,
				     m->wr.mode != NCCL_GDR_DISABLED, gc,
				     m->pci_type == NPT_SYS ? NPT_SYS : NPT_PHB,
				     &t))
			continue;
		/* C2C/NVL to the CPU: NVLink widths are not modelled. */
		if (m->bw > 0)
			bw = gc == NPT_PHB ? min_bw(m->bw_gpu_cpu, m->bw_cpu_net) :
			     m->bw_cpu_net;
		changed |= t != m->type || bw != m->bw;
		m->nogdr = true;
		m->nogdr_from = m->type;
		m->type = t;
		m->bw = bw;
		/* addInterStep merges both halves alike either way. */
		if (nccl_rewrite_net_side(nd->ver, NCCL_RW_NOGDR)) {
			changed |= t != m->net_type || bw != m->net_bw;
			m->net_type = t;
			m->net_bw = bw;
		}
		m->relay = -1;
		m->relay_dist = NPT_DIS;
	}
	return changed;
}

void nccl_model_paths(const struct nccl_node *nd, struct nccl_pair_model *pm)
{
	bool any_pxn;

	apply_p2c(nd, pm);
	pick_rails(nd, pm);
	/* PXN needs the pre-PXN rails' GDR decisions (apply_pxn). */
	for (size_t i = 0; i < nd->npair; i++) {
		pm[i].relay_dist = NPT_DIS;
		if (pm[i].used && pm[i].rail)
			decide(nd, i, &pm[i], NPT_DIS);
	}
	any_pxn = apply_pxn(nd, pm);
	/*
	 * ncclTopoGetLocal then reads the rewritten GPU->NIC paths: a GPU
	 * with no near NIC gets the PXN NICs as rails (PXN < PHB, equal
	 * widths). Then the GDR decision of every pair, a PXN one with its
	 * relay's distance (ncclTopoCheckGdr).
	 */
	if (any_pxn)
		pick_rails(nd, pm);
	for (size_t i = 0; i < nd->npair; i++)
		if (pm[i].used)
			decide(nd, i, &pm[i], pm[i].relay_dist);
	if (apply_nogdr(nd, pm))
		pick_rails(nd, pm);
}
