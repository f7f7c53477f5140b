// SPDX-License-Identifier: MIT
/*
 * NCCL's PCI view of one GPU x NIC pair (nccl/pciview.h): the switch
 * nodes its topology holds after Broadcom flattening, a Broadcom virtual
 * switch link between the two sides, and the path's bandwidth. Pure over
 * the PCI tree (decode/pcie.h); the sysfs facts come through a reader.
 */
#include "nccl/pciview.h"

enum nccl_ptype nccl_ptype_of_class(enum topo_class c)
{
	switch (nccl_path_of(c)) {
	case NCCL_LOC: return NPT_LOC;
	case NCCL_PIX: return NPT_PIX;
	case NCCL_PXB: return NPT_PXB;
	case NCCL_PHB: return NPT_PHB;
	default: return NPT_SYS;
	}
}

/*
 * Data Direct (net_ib init.cc ncclIbInitDevices, 2.27.3+; rules in
 * nccl_data_direct): a capable mlx5 device (nic.data_direct's facts) is
 * exposed as `<dev>_dma` whose pciPath is mlx5dv_get_data_direct_sysfs_path's
 * function, so NCCL's distance, rails and GDR decision use the GPU's path to
 * that function, and it registers through mlx5dv (reg.cc). When NCCL also
 * keeps `<dev>` (2.27.x, or NCCL_IB_DATA_DIRECT=2) its rails take the nearer
 * of the two; here the pair stands for that one.
 */
void nccl_dd_apply(int ver, int64_t ib_data_direct, const struct pcitree *t,
		   int node_gpu, const struct nccl_dd_nic *nic,
		   struct nccl_pair_model *m)
{
	struct nccl_dd_out dd;
	struct pcipath p;
	int node;

	if (node_gpu < 0)
		return;
	nccl_data_direct(ver, ib_data_direct, nic->capable, &dd);
	if (!dd.dma)
		return;
	node = pcitree_find(t, nic->fn);
	if (node >= 0)
		pcitree_path(t, node_gpu, node, &p);
	/*
	 * A function the tree lacks (a sysfs the capture cut short): NCCL
	 * still uses `<dev>_dma` and mlx5dv; the NIC's own path stands in
	 * for its distance.
	 */
	if (node < 0 || !p.known || p.cls == TOPO_UNKNOWN) {
		m->dd = !dd.plain;
		return;
	}
	if (dd.plain && m->known && nccl_ptype_of_class(p.cls) > m->type)
		return;
	m->dd = true;
	m->known = true;
	m->type = nccl_ptype_of_class(p.cls);
}

static double min_bw(double a, double b)
{
	return a < b ? a : b;
}

/*
 * The PCI switch node NCCL makes for bridge b: the upstream port of its
 * switch (xml.cc walks a device's sysfs path up two levels at a time, so
 * a device hangs off the upstream port above its downstream port); -1.
 */
static int switch_of(const struct pcitree *t, int b)
{
	if (b < 0 || (size_t)b >= t->count)
		return -1;
	if (t->n[b].port_type == PCIE_TYPE_UPSTREAM)
		return b;
	if (t->n[b].port_type == PCIE_TYPE_DOWNSTREAM && t->n[b].parent >= 0 &&
	    t->n[t->n[b].parent].port_type == PCIE_TYPE_UPSTREAM)
		return t->n[b].parent;
	return -1;
}

/* Switch u's node after ncclTopoFlattenBcmSwitches: its parent or itself. */
static int flat_switch(const struct nccl_pci_view_in *in, int u)
{
	const struct pcitree *t = in->tree;
	int p = switch_of(t, t->n[u].parent);

	if (p >= 0 && nccl_bcm_flattens(in->ver, in->rd->id(in->rd->arg, p),
					in->rd->id(in->rd->arg, u)))
		return p;
	return u;
}

/* The switch nodes above tree node i, nearest first. */
static int switches_above(const struct pcitree *t, int i, int *out)
{
	int n = 0, last = -1;

	for (int b = t->n[i].parent, hops = 0; b >= 0 && hops < PCIPATH_MAX;
	     b = t->n[b].parent, hops++) {
		int u = switch_of(t, b);

		if (u >= 0 && u != last && n < PCIPATH_MAX)
			out[n++] = last = u;
	}
	return n;
}

/*
 * Broadcom virtual switch links (2.22.3+: xml.cc getBcmLinks, since
 * 2.30.7 src/os/linux.cc ncclOsGetBcmLinks): a PCI node whose vendor is
 * 0x1000 gets a pcilink to every bus id listed (and present) in
 * /sys/kernel/pci_switch_link/virtual_switch_links/<busid>/, which
 * topo.cc ncclTopoAddPciLinks turns into a LINK_LOC (LOC_BW) link to that
 * PCI switch node. A path from the GPU's switches to the NIC's over such a
 * link is a PCI -> PCI hop: PXB (paths.cc ncclTopoSetPaths), shorter than
 * the way through the CPU. NCCL adds the link one way per listing and
 * fails (no reverse link) when only one side lists it: both are required
 * here. Returns the number of the GPU's / NIC's switches climbed (*gu,
 * *nu, the linked ones included), or false.
 */
static bool bcm_virtual_link(const struct nccl_pci_view_in *in, int *gsw,
			     int *gu, int *nsw, int *nu)
{
	const struct nccl_pci_reader *rd = in->rd;
	int ng = switches_above(in->tree, in->node_gpu, gsw);
	int nn = switches_above(in->tree, in->node_nic, nsw);

	if (!nccl_bcm_virtual_links(in->ver))
		return false;
	for (int i = 0; i < ng; i++)
		for (int j = 0; j < nn; j++)
			if (rd->bcm_link(rd->arg, gsw[i], nsw[j]) &&
			    rd->bcm_link(rd->arg, nsw[j], gsw[i])) {
				*gu = i + 1;
				*nu = j + 1;
				return true;
			}
	return false;
}

/*
 * A pair as NCCL's topology has it: the PCI switch nodes on the path after
 * Broadcom flattening (one level: the merged parent's id is changed so it
 * is not merged again), PXB -> PIX when one is left; and the path's
 * bandwidth, the narrowest link on it (paths.cc ncclTopoSetPaths bw =
 * min(path bw, link bw)): the GPU's and NIC's PCI links, the uplink of
 * every switch climbed (not the one the path turns at, nor a merged one),
 * the port's speed (NIC -> NET link); a Broadcom virtual switch link
 * between the two sides (bcm_virtual_link) replaces the way through the
 * CPU. Not modelled: the CPU interconnect of a SYS path (topo.cc
 * ncclTopoConnectCpus), NVLink/C2C links.
 */
bool nccl_pci_view(const struct nccl_pci_view_in *in,
		   struct nccl_pair_model *m, struct nccl_pci_bw *out)
{
	const struct pcitree *t = in->tree;
	const struct pcipath *pp = in->path;
	double (*link_bw)(void *, int, bool) = in->rd->link_bw;
	void *arg = in->rd->arg;
	int sw[PCIPATH_MAX], fl[PCIPATH_MAX], nsw = 0, nfl = 0;
	int gsw[PCIPATH_MAX], nsw2[PCIPATH_MAX], gu = 0, nu = 0;
	int turn = switch_of(t, pp->turn), ng, nn;
	double bw, gbw, nbw;

	m->pci_type = m->type;
	m->bw = 0;
	m->bw_gpu_cpu = m->bw_cpu_net = 0;
	if (!m->known || in->node_gpu < 0 || in->node_nic < 0)
		return false;
	/*
	 * Data Direct (nccl_dd_apply): NCCL's device is the `_dma`
	 * function, not the one in->path leads to; its switches are not
	 * re-walked here, and its width is the GPU's link and the port's.
	 */
	for (int i = 0; i < pp->nbridges && !m->dd; i++) {
		int u = switch_of(t, pp->bridges[i]), k, f;

		if (u < 0)
			continue;
		for (k = 0; k < nsw && sw[k] != u; k++)
			;
		if (k < nsw)
			continue;
		sw[nsw++] = u;
		f = flat_switch(in, u);
		m->bcm |= f != u;
		for (k = 0; k < nfl && fl[k] != f; k++)
			;
		if (k == nfl)
			fl[nfl++] = f;
	}
	if (m->bcm && pp->turn >= 0 &&
	    (m->type == NPT_PIX || m->type == NPT_PXB))
		m->type = nccl_pci_switch_path(nfl);
	/* Say so only where the merge changed the type. */
	m->bcm = m->type != m->pci_type;

	bw = link_bw(arg, in->node_gpu, in->ver >= NCCL_VER(2, 30, 7));
	if (!m->dd)
		bw = min_bw(bw, link_bw(arg, in->node_nic, false));
	if (!m->dd && pp->turn < 0 &&
	    bcm_virtual_link(in, gsw, &gu, nsw2, &nu)) {
		/* Up to the linked switches only; their uplinks unused. */
		m->vlink = true;
		m->type = NPT_PXB;
		for (int k = 0; k + 1 < gu; k++)
			if (flat_switch(in, gsw[k]) == gsw[k])
				bw = min_bw(bw, link_bw(arg, gsw[k], false));
		for (int k = 0; k + 1 < nu; k++)
			if (flat_switch(in, nsw2[k]) == nsw2[k])
				bw = min_bw(bw, link_bw(arg, nsw2[k], false));
	} else {
		for (int k = 0; k < nsw; k++)
			if (sw[k] != turn && flat_switch(in, sw[k]) == sw[k])
				bw = min_bw(bw, link_bw(arg, sw[k], false));
	}
	/*
	 * The same pair through the CPU (ncclTopoComputePaths' no-GDR step,
	 * addInterStep: min(GPU->CPU bw, CPU->NET bw)): every switch uplink
	 * on both sides, the turn's included, no virtual link.
	 */
	gbw = link_bw(arg, in->node_gpu, in->ver >= NCCL_VER(2, 30, 7));
	ng = switches_above(t, in->node_gpu, gsw);
	for (int k = 0; k < ng; k++)
		if (flat_switch(in, gsw[k]) == gsw[k])
			gbw = min_bw(gbw, link_bw(arg, gsw[k], false));
	nbw = 0;
	if (!m->dd) {
		nbw = link_bw(arg, in->node_nic, false);
		nn = switches_above(t, in->node_nic, nsw2);
		for (int k = 0; k < nn; k++)
			if (flat_switch(in, nsw2[k]) == nsw2[k])
				nbw = min_bw(nbw, link_bw(arg, nsw2[k],
							  false));
	}
	out->path = bw;
	out->gpu_cpu = gbw;
	out->nic_cpu = nbw;
	return true;
}

/* The port's rate joins the path: the NIC -> NET link (nccl_net_bw). */
void nccl_pci_view_port(struct nccl_pair_model *m,
			const struct nccl_pci_bw *b, int mbps)
{
	if (mbps > 0) {
		m->bw = min_bw(b->path, nccl_net_bw(mbps));
		m->bw_gpu_cpu = b->gpu_cpu;
		m->bw_cpu_net = m->dd ? nccl_net_bw(mbps) :
				min_bw(b->nic_cpu, nccl_net_bw(mbps));
	}
}

/* The node NCCL hangs tree node i off: a switch node, or -1 (the CPU). */
static int nccl_parent(const struct pcitree *t, int i)
{
	return switch_of(t, t->n[i].parent);
}

int nccl_local_cpu_circle(const struct pcitree *t,
			  const struct nccl_pci_reader *rd, const int *members,
			  size_t n, int gpu)
{
	int s = gpu >= 0 && (size_t)gpu < t->count ? nccl_parent(t, gpu) : -1;

	for (int depth = 0; s >= 0 && depth < PCIPATH_MAX; depth++) {
		double up = rd->link_bw(rd->arg, s, false), widest = 0;

		/* s's children: the members below it and the switch nodes
		 * between them and s, one link each. */
		for (size_t k = 0; k < n; k++) {
			int c = members[k], hops = 0;

			if (c < 0 || (size_t)c >= t->count)
				continue;
			while (c >= 0 && nccl_parent(t, c) != s &&
			       hops++ < PCIPATH_MAX)
				c = nccl_parent(t, c);
			if (c >= 0 && nccl_parent(t, c) == s) {
				double bw = rd->link_bw(rd->arg, c, false);

				if (bw > widest)
					widest = bw;
			}
		}
		if (up > 0 && widest >= up)
			return s;
		s = nccl_parent(t, s);
	}
	return -1;
}
