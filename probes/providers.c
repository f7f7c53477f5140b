// SPDX-License-Identifier: MIT
/*
 * Non-Mellanox RDMA providers (AWS EFA, Broadcom bnxt_re) and virtual
 * machines (issue 16): rules that replace the generic ConnectX/x86 advice
 * where it does not apply. The sources each rule follows are in the
 * comments above the GATE rows in gate/gates.def.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/pcie.h"
#include "nccl/rules.h"
#include "probes/probes.h"

#define EFA_VENDOR		0x1d0f	/* Amazon */
#define EFA_DEVICE_GEN1		0xefa0

/* EFA generation from the PCI device id: efa0..efa3 are gen 1..4. */
static int efa_gen(unsigned int device)
{
	if (device >= EFA_DEVICE_GEN1 && device <= 0xefaf)
		return (int)(device - EFA_DEVICE_GEN1) + 1;
	return 0;
}

/* The driver bound to a PCI function; 0 or -errno. */
static int pci_driver(struct sysroot *sr, const char *bdf, char *buf,
		      size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	return sysroot_link_name(sr, path, buf, len);
}

enum provider {
	PROV_OTHER = 0,
	PROV_EFA,
	PROV_BNXT_RE,
};

/*
 * Which provider serves an RDMA device: its PCI function's driver ("efa";
 * "bnxt_en", whose RDMA auxiliary device is bnxt_re), else the ibdev name
 * ("efa_0", "bnxt_re0") for devices without a readable PCI function.
 */
static enum provider nic_provider(struct gdr_ctx *ctx, const struct inv_nic *n,
				  char *drv, size_t len, int *err)
{
	*err = 0;
	drv[0] = '\0';
	if (n->pci[0])
		*err = pci_driver(ctx->sr, n->pci, drv, len);
	if (!n->pci[0] || *err) {
		if (!strncmp(n->name, "efa", 3))
			return PROV_EFA;
		if (!strncmp(n->name, "bnxt_re", 7))
			return PROV_BNXT_RE;
		return PROV_OTHER;
	}
	if (!strcmp(drv, "efa"))
		return PROV_EFA;
	if (!strcmp(drv, "bnxt_en") || !strcmp(drv, "bnxt_re"))
		return PROV_BNXT_RE;
	return PROV_OTHER;
}

bool nic_is_efa(struct gdr_ctx *ctx, const struct inv_nic *n)
{
	char drv[64];
	int err;

	return nic_provider(ctx, n, drv, sizeof(drv), &err) == PROV_EFA;
}

const char *nic_non_mlx5(struct gdr_ctx *ctx, const struct inv_nic *n)
{
	char drv[64];
	int err;

	switch (nic_provider(ctx, n, drv, sizeof(drv), &err)) {
	case PROV_EFA:
		return "an AWS EFA";
	case PROV_BNXT_RE:
		return "a Broadcom bnxt_re device";
	default:
		return NULL;
	}
}

/*
 * Is every RDMA device an EFA? Then GPU memory reaches ibv_reg_mr through
 * the efa driver's own p2p provider, not an ib_core peer-memory client.
 * Counts the EFAs whose device/p2p names a provider; the first in first.
 */
bool node_efa_only(struct gdr_ctx *ctx, size_t *with_p2p, char *first,
		   size_t len)
{
	char path[256], p2p[128];
	size_t efa = 0;

	*with_p2p = 0;
	first[0] = '\0';
	for (size_t i = 0; i < ctx->inv.nnic; i++) {
		const struct inv_nic *n = &ctx->inv.nic[i];

		if (!nic_is_efa(ctx, n))
			continue;
		efa++;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/device/p2p", n->name);
		if (sysroot_read(ctx->sr, path, p2p, sizeof(p2p)) < 0)
			continue;
		p2p[strcspn(p2p, "\n")] = '\0';
		if (p2p[0] && !(*with_p2p)++)
			snprintf(first, len, "%s: %s", n->name, p2p);
	}
	return efa && efa == ctx->inv.nnic;
}

static void gate_efa(struct gdr_ctx *ctx, const struct inv_nic *n)
{
	char path[256], p2p[128];
	long long dev = 0;
	struct result *r;
	int gen, ret;
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", n->pci);
	if (!n->pci[0] || sysroot_read_ll(ctx->sr, path, &dev) < 0)
		dev = 0;
	gen = efa_gen((unsigned int)dev);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/p2p",
		 n->name);
	len = sysroot_read(ctx->sr, path, p2p, sizeof(p2p));
	ret = len < 0 ? (int)len : 0;
	if (!ret) {
		p2p[strcspn(p2p, "\n")] = '\0';
		if (p2p[0]) {
			r = emit(ctx, n->subject, ST_PASS, C_EFA_P2P,
				 "EFA gen %d (0x%04llx): device/p2p names GPU "
				 "memory provider \"%s\"; NCCL runs on "
				 "aws-ofi-nccl (NCCL_NET ofi), not on IB verbs "
				 "or nvidia_peermem", gen, dev, p2p);
		} else {
			r = emit(ctx, n->subject, ST_WARN, C_EFA_P2P_NONE,
				 "EFA gen %d (0x%04llx): device/p2p is empty: "
				 "the efa driver found no GPU memory provider "
				 "(nvidia.ko not loaded when it looked)", gen,
				 dev);
			remedy_EFA_P2P_NONE(r, n->name);
		}
	} else if (gen >= 1 && gen <= 3) {
		r = emit(ctx, n->subject, ST_WARN, C_EFA_DMABUF_OLD_GEN,
			 "EFA gen %d (0x%04llx): no device/p2p (in-tree efa "
			 "driver) and aws-ofi-nccl 1.14-1.19.1 leaves dma-buf "
			 "off on EFA gen 1-3: no GPUDirect path", gen, dev);
		remedy_EFA_DMABUF_OLD_GEN(r, n->name);
	} else {
		r = emit(ctx, n->subject, ST_PASS, C_EFA_DMABUF,
			 "EFA gen %d (0x%04llx): no device/p2p (in-tree efa "
			 "driver): GPU memory through dma-buf MRs, "
			 "aws-ofi-nccl's default on this generation", gen, dev);
	}
	ev_str(r, "provider", "efa");
	ev_str(r, "pci_device", "0x%04llx", dev);
	ev_int(r, "efa_generation", gen);
	ev_str(r, "p2p", "%s", ret ? sysroot_strerror(-ret) : p2p);
	ev_str(r, "dmabuf_default", "%s", gen >= 1 && gen <= 3 ?
	       "off in aws-ofi-nccl 1.14-1.19.1 (gen 1-3), on from 1.19.2" :
	       "on in aws-ofi-nccl >= 1.14");
	ev_str(r, "nccl_transport", "aws-ofi-nccl (NCCL_NET ofi, libfabric "
	       "FI_HMEM): gdrcheck's IB-verbs NCCL model does not apply");
}

/* One GID from sysfs ("fe80:0000:...": eight groups of four hex digits). */
static bool gid_parse(const char *s, uint8_t g[16])
{
	unsigned int w[8];

	if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &w[0], &w[1], &w[2],
		   &w[3], &w[4], &w[5], &w[6], &w[7]) != 8)
		return false;
	for (int i = 0; i < 8; i++) {
		g[2 * i] = (uint8_t)(w[i] >> 8);
		g[2 * i + 1] = (uint8_t)w[i];
	}
	return true;
}

#define GID_MAX 64

/* A RoCE port's GID table, and what NCCL makes of it. */
struct gid_scan {
	struct nccl_gid tbl[GID_MAX];
	int n;
	int configured;		/* valid or link-local, as NCCL counts */
	int v4;			/* IPv4-mapped (getGidAddrFamily AF_INET) */
	int global;		/* valid IPv6 GIDs */
	int nccl_v4;		/* NCCL's pick with this node's settings; -1 */
	int nccl_v6;		/* NCCL's pick with NCCL_IB_ADDR_FAMILY=AF_INET6 */
	char first[64];		/* GID 0 as sysfs writes it */
};

/*
 * Read the table the way ncclIbGetGidIndex queries it (indices 0..n-1) and
 * ask the NCCL rule (nccl/rules.c nccl_gid_index) for both families.
 */
static int gid_scan(struct sysroot *sr, const struct nccl_gid_in *node,
		    const char *dev, int port, struct gid_scan *s)
{
	char path[256], line[64], type[32];
	struct nccl_gid_in in;

	memset(s, 0, sizeof(*s));
	s->nccl_v4 = s->nccl_v6 = -1;
	for (s->n = 0; s->n < GID_MAX; s->n++) {
		struct nccl_gid *g = &s->tbl[s->n];
		bool zero = true;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gids/%d", dev,
			 port, s->n);
		if (sysroot_read_line(sr, path, line, sizeof(line)) < 0)
			break;
		if (!s->n)
			snprintf(s->first, sizeof(s->first), "%s", line);
		if (!gid_parse(line, g->raw))
			memset(g->raw, 0, sizeof(g->raw));
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
			 dev, port, s->n);
		g->roce_ver = sysroot_read_line(sr, path, type,
						sizeof(type)) < 0 ? -1 :
			      strstr(type, "v2") ? 2 :
			      strstr(type, "IB/RoCE v1") ? 1 : 0;
		for (int k = 0; k < 16; k++)
			zero = zero && !g->raw[k];
		if (zero)
			continue;
		s->configured++;
		if (nccl_gid_family(g->raw) == NCCL_AF_INET)
			s->v4++;
		else if (nccl_gid_valid(g->raw))
			s->global++;
	}
	if (!s->n)
		return -ENOENT;
	in = *node;		/* this node's settings */
	in.tbl = s->tbl;
	in.n = s->n;
	if (nccl_gid_index(&in, &s->nccl_v4))
		s->nccl_v4 = -1;
	in.gid_index = -1;	/* NCCL_IB_ADDR_FAMILY exists from 2.21.5 */
	in.ver = in.ver < NCCL_VER(2, 21, 5) ? NCCL_VER(2, 21, 5) : in.ver;
	in.family = NCCL_AF_INET6;
	if (nccl_gid_index(&in, &s->nccl_v6))
		s->nccl_v6 = -1;
	return 0;
}

static void gate_bnxt(struct gdr_ctx *ctx, const struct inv_nic *n)
{
	const struct verbs_nic *vn = n->verbs >= 0 ?
		&ctx->vf->verbs.nics[n->verbs] : NULL;
	char dmabuf[128], path[256], ll[32];
	int v6_port = 0, v6_idx = -1;
	const struct gid_scan *s = NULL;
	struct nccl_gid_in node;
	struct gid_scan g;
	bool no_dmabuf = false;
	struct result *r;

	if (vn && vn->probe_run && vn->probe_errno == EOPNOTSUPP) {
		no_dmabuf = true;
		snprintf(dmabuf, sizeof(dmabuf), "ibv_reg_dmabuf_mr(fd=-1) "
			 "returned EOPNOTSUPP");
	} else if (vn && vn->probe_run) {
		snprintf(dmabuf, sizeof(dmabuf), "implemented (ibv_reg_dmabuf_mr"
			 "(fd=-1): %s)", vn->probe_errno ?
			 strerrorname_np(vn->probe_errno) : "0");
	} else if (ctx->vf->verbs.lib.loaded &&
		   !ctx->vf->verbs.have_reg_dmabuf_mr) {
		no_dmabuf = true;
		snprintf(dmabuf, sizeof(dmabuf), "libibverbs without "
			 "ibv_reg_dmabuf_mr");
	} else {
		snprintf(dmabuf, sizeof(dmabuf), "not probed (see "
			 "mech.dmabuf_provider); needs rdma-core >= 48");
	}
	memset(&node, 0, sizeof(node));
	nccl_gid_settings(ctx, &node.ver, &node.gid_index, &node.family);
	node.roce_ver = 2;
	node.flid_index = 1;
	for (size_t p = 0; p < n->nports && v6_idx < 0; p++) {
		int num = n->ports[p].num;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/link_layer",
			 n->name, num);
		if (sysroot_read_line(ctx->sr, path, ll, sizeof(ll)) ||
		    strcmp(ll, "Ethernet") || gid_scan(ctx->sr, &node, n->name,
						       num, &g))
			continue;
		/* Only IPv6 GIDs, and NCCL's pick is not a global one. */
		if (!g.v4 && g.global && g.nccl_v6 >= 0 &&
		    (g.nccl_v4 < 0 || g.nccl_v4 >= g.n ||
		     !nccl_gid_valid(g.tbl[g.nccl_v4].raw))) {
			s = &g;
			v6_port = num;
			v6_idx = g.nccl_v6;
		}
	}
	if (v6_idx >= 0) {
		r = emit(ctx, n->subject, ST_WARN, C_GID_IPV6_ONLY,
			 "%s port %d: only IPv6 GIDs (%d configured, none "
			 "IPv4-mapped): NCCL picks GID index %d (%s), not a "
			 "global one, unless told otherwise", n->name, v6_port,
			 s->configured, s->nccl_v4 < 0 ? 0 : s->nccl_v4,
			 s->nccl_v4 <= 0 ? s->first : "see gids/");
		remedy_GID_IPV6_ONLY(r, v6_idx, n->name, v6_port);
		ev_int(r, "port", v6_port);
		ev_int(r, "nccl_gid_index", s->nccl_v4);
		ev_int(r, "nccl_gid_index_af_inet6", v6_idx);
		ev_str(r, "nccl_rule", "ncclIbGetGidIndex (net_ib.cc "
		       "v2.21.5-1..v2.28.9-1, net_ib/connect.cc v2.30.7-1) "
		       "moves off index 0 only to a GID of NCCL_IB_ADDR_FAMILY "
		       "(AF_INET by default); before 2.21.5 NCCL_IB_GID_INDEX "
		       "(default 0)");
	} else if (no_dmabuf) {
		r = emit(ctx, n->subject, ST_WARN, C_BNXT_RE_NO_DMABUF,
			 "bnxt_re: the provider lacks ibv_reg_dmabuf_mr (%s): "
			 "rdma-core < 48", dmabuf);
		remedy_BNXT_RE_NO_DMABUF(r);
	} else {
		r = emit(ctx, n->subject, ST_PASS, C_BNXT_RE_OK,
			 "bnxt_re: dma-buf MRs %s; NCCL's GID choice is not "
			 "left on a link-local GID of an IPv6-only port",
			 dmabuf);
	}
	ev_str(r, "provider", "bnxt_re");
	ev_str(r, "dmabuf", "%s", dmabuf);
	ev_str(r, "dmabuf_rule", "bnxt_re implements reg_dmabuf_mr from "
	       "rdma-core 48 (rdma-core#1373)");
}

void gate_platform_provider(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *n = &ctx->inv.nic[t->nic];
	char drv[64];
	int err;

	switch (nic_provider(ctx, n, drv, sizeof(drv), &err)) {
	case PROV_EFA:
		gate_efa(ctx, n);
		return;
	case PROV_BNXT_RE:
		gate_bnxt(ctx, n);
		return;
	case PROV_OTHER:
		break;
	}
	if (!n->pci[0] || err) {
		struct result *r = emit(ctx, n->subject, ST_SKIP,
					C_PROVIDER_UNREADABLE,
					"%s: the PCI function or its driver "
					"is unreadable (%s): provider unknown",
					n->name, !n->pci[0] ? "no PCI function"
					: sysroot_strerror(-err));

		ev_str(r, "pci", "%s", n->pci[0] ? n->pci : "none");
		return;
	}
	emit(ctx, n->subject, ST_SKIP, C_PROVIDER_NOT_APPLICABLE,
	     "%s: driver %s: the EFA and bnxt_re rules do not apply", n->name,
	     drv);
}

#define PCI_EXT_CAP_ID_ATS	0x000f
#define ATS_CTRL		0x06	/* ATS Control register */
#define ATS_CTRL_ENABLE		0x8000
#define PCI_EXP_DEVCTL		0x08	/* in the PCI Express capability */
#define PCI_EXP_DEVCTL_RELAX_EN	0x0010

/* A NIC's ATS and relaxed-ordering state, decoded read-only. */
struct nic_pcie {
	int err;		/* -errno reading config space */
	int walk;		/* a PCIE_* error finding the capabilities */
	bool ats;		/* ATS extended capability present */
	bool ats_enabled;
	bool relaxed;		/* Device Control: Enable Relaxed Ordering */
};

static void nic_pcie_read(struct sysroot *sr, const char *bdf,
			  struct nic_pcie *np)
{
	uint8_t cfg[PCI_CFG_MAX];
	char path[128];
	ssize_t len;
	int exp, ats;

	memset(np, 0, sizeof(*np));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	len = sysroot_read_bin(sr, path, cfg, sizeof(cfg));
	if (len < 0) {
		np->err = (int)len;
		return;
	}
	/* sysroot_read_bin records nothing: a replay needs these bytes. */
	sysroot_record_file(sr, path, (const char *)cfg, (size_t)len);
	exp = pci_find_cap(cfg, (size_t)len, PCI_CAP_ID_EXP);
	if (exp < 0 || (size_t)exp + PCI_EXP_DEVCTL + 2 > (size_t)len) {
		np->walk = exp < 0 ? exp : PCIE_TRUNCATED;
		return;
	}
	np->relaxed = (cfg[exp + PCI_EXP_DEVCTL] |
		       cfg[exp + PCI_EXP_DEVCTL + 1] << 8) &
		      PCI_EXP_DEVCTL_RELAX_EN;
	if (len <= 0x100) {
		np->walk = PCIE_NO_LIST; /* 64 or 256 bytes: no extended space */
		return;
	}
	ats = pci_find_ext_cap(cfg, (size_t)len, PCI_EXT_CAP_ID_ATS);
	if (ats == PCIE_NOT_FOUND)
		return;
	if (ats < 0 || (size_t)ats + ATS_CTRL + 2 > (size_t)len) {
		np->walk = ats < 0 ? ats : PCIE_TRUNCATED;
		return;
	}
	np->ats = true;
	np->ats_enabled = (cfg[ats + ATS_CTRL] | cfg[ats + ATS_CTRL + 1] << 8) &
			  ATS_CTRL_ENABLE;
}

void gate_platform_vm(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *p = &ctx->inv.pair[t->pair];
	const struct inv_gpu *g = &ctx->inv.gpu[p->gpu];
	const struct inv_nic *n = &ctx->inv.nic[p->nic];
	const struct platform_class *pc = ctx_platform(ctx);
	const char *why = pc->vm_why[0] ? pc->vm_why :
		"neither a cpuinfo hypervisor flag nor a hypervisor's DMI name";
	struct nic_pcie np;
	struct result *r;
	bool flat;

	/* The guest fact has one owner: platform.class. */
	if (pc->vm != 1) {
		r = emit(ctx, p->subject, ST_SKIP, C_VM_NOT_GUEST,
			 "%s (%s, see platform.class): the VM rules do not "
			 "apply", pc->vm == 0 ? "not a virtual machine" :
			 "not known to be a virtual machine", why);
		return;
	}
	/* An end on the root bus: no switch above it, NCCL counts PHB. */
	flat = p->node_gpu >= 0 && p->node_nic >= 0 &&
	       (ctx->tree.n[p->node_gpu].parent < 0 ||
		ctx->tree.n[p->node_nic].parent < 0);
	nic_pcie_read(ctx->sr, n->pci, &np);
	if (flat) {
		bool gr = ctx->tree.n[p->node_gpu].parent < 0;
		bool nr = ctx->tree.n[p->node_nic].parent < 0;

		r = emit(ctx, p->subject, ST_WARN, C_VM_FLAT_TREE,
			 "guest: %s%s%s%s on the root bus of %s (no switch "
			 "above it): NCCL sees PHB or farther and leaves "
			 "GPUDirect RDMA off", gr ? "GPU " : "",
			 gr ? g->pci : "", gr && nr ? " and NIC " :
			 nr ? "NIC " : "", nr ? n->pci : "",
			 ctx->tree.n[gr ? p->node_gpu : p->node_nic].root);
		remedy_VM_FLAT_TREE(r);
		if (nic_is_efa(ctx, n))
			ev_str(r, "efa", "aws-ofi-nccl (platform-aws builds) "
			       "writes NCCL_TOPO_FILE itself on known "
			       "instance types");
	} else if (np.err || np.walk) {
		r = emit(ctx, p->subject, ST_SKIP, C_VM_NIC_CONFIG_UNREADABLE,
			 "guest: %s config space unreadable or without a "
			 "PCIe capability (%s): ATS and relaxed ordering "
			 "unknown", n->pci, np.err ? sysroot_strerror(-np.err) :
			 pcie_walk_error(np.walk));
		remedy_VM_NIC_CONFIG_UNREADABLE(r);
	} else if (!np.ats_enabled) {
		r = emit(ctx, p->subject, ST_WARN, C_VM_ATS_OFF,
			 "guest: NIC %s has no ATS enabled (%s): with ACS on "
			 "the host its writes to GPU %s go up to the root "
			 "complex", n->pci, np.ats ? "capability present, "
			 "Enable clear" : "no ATS capability in the guest's "
			 "view", g->pci);
		remedy_VM_ATS_OFF(r, n->pci);
	} else if (!np.relaxed) {
		r = emit(ctx, p->subject, ST_WARN, C_VM_RELAXED_ORDERING_OFF,
			 "guest: NIC %s has ATS enabled but relaxed ordering "
			 "off in its Device Control: ACS+ATS peer writes to "
			 "GPU %s are serialised", n->pci, g->pci);
		remedy_VM_RELAXED_ORDERING_OFF(r, n->pci);
	} else {
		r = emit(ctx, p->subject, ST_PASS, C_VM_OK,
			 "guest: NIC %s has ATS and relaxed ordering enabled; "
			 "neither GPU nor NIC is on the root bus", n->pci);
	}
	ev_str(r, "guest", "%s", why);
	ev_bool(r, "flat_tree", flat);
	if (!flat && !np.err && !np.walk) {
		ev_str(r, "nic_ats", "%s", !np.ats ? "absent" :
		       np.ats_enabled ? "enabled" : "disabled");
		ev_bool(r, "nic_relaxed_ordering", np.relaxed);
	}
}
