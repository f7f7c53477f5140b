// SPDX-License-Identifier: MIT
/*
 * Layer 4: topology. The PCIe path between each GPU and each RDMA device,
 * classified as nvidia-smi does (PIX/PXB/PHB/NODE/SYS) and as NCCL does
 * (LOC/PIX/PXB/PHB/SYS), and what NCCL would decide for the pair.
 *
 * What NCCL decides for each pair (topo.nccl, topo.nccl_config, data.nccl)
 * lives in probes/nccl.c (the model: probes/nccl_state.c over nccl/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/cuda_api.h"
#include "access/mlx5.h"
#include "access/pci.h"
#include "access/sysroot.h"
#include "decode/parse.h"
#include "core/xalloc.h"
#include "decode/pcie.h"
#include "probes/probes.h"

void gate_topo_tree(struct gdr_ctx *ctx, const struct target *t)
{
	const struct pcitree *tr = &ctx->tree;
	size_t bridges = 0, roots = 0, inferred = 0, rootless = 0, numa_bad = 0;
	size_t first_rootless = 0, first_numa = 0;
	/* As many host bridges as functions at most: no fixed cap. */
	const char **seen = xcalloc(tr->count + 1, sizeof(*seen));
	/* A guest? The platform class says (cpuinfo flag, DMI names). */
	int hv = ctx_platform(ctx)->vm;
	struct result *r;

	for (size_t i = 0; i < tr->count; i++) {
		size_t k;

		bridges += tr->n[i].bridge;
		inferred += tr->n[i].bridge && tr->n[i].type_inferred;
		if (tr->n[i].numa_bad && !numa_bad++)
			first_numa = i;
		if (!tr->n[i].root[0]) {
			if (!rootless++)
				first_rootless = i;
			continue;	/* no host bridge to count */
		}
		for (k = 0; k < roots && strcmp(seen[k], tr->n[i].root); k++)
			;
		if (k == roots)
			seen[roots++] = tr->n[i].root;
	}
	free(seen);
	if (!tr->count) {
		r = emit(ctx, ctx->host, ST_ERROR, C_PCI_TREE_UNREADABLE,
			 "no PCI function readable under /sys/bus/pci/devices%s%s",
			 ctx->inv.pci_errno ? ": " : "",
			 ctx->inv.pci_errno ? strerror(ctx->inv.pci_errno) : "");
		if (ctx->inv.pci_errno)
			ev_int(r, "errno", ctx->inv.pci_errno);
		return;
	}
	{
		size_t bad = 0, first = 0;

		for (size_t i = 0; i < tr->count; i++)
			if (tr->n[i].class_bad && !bad++)
				first = i;
		if (tr->unresolved || bad) {
			r = emit(ctx, ctx->host, ST_ERROR, C_PCI_TREE_INCOMPLETE,
				 "the PCIe tree is incomplete: %d unresolvable "
				 "entr%s%s%s%s, %zu function(s) with a malformed "
				 "class%s%s%s", tr->unresolved,
				 tr->unresolved == 1 ? "y" : "ies",
				 tr->unresolved ? " (" : "", tr->first_unresolved,
				 tr->unresolved ? ")" : "", bad,
				 bad ? " (" : "", bad ? tr->n[first].bdf : "",
				 bad ? "/class)" : "");
			ev_int(r, "functions", (long long)tr->count);
			return;
		}
	}
	if (rootless) {
		/* Every real PCI function hangs below a pciDDDD:BB directory. */
		r = emit(ctx, ctx->host, ST_ERROR, C_NO_HOST_BRIDGE,
			 "%zu PCI function(s) with no host bridge in their "
			 "sysfs path (first: %s): the tree cannot be placed",
			 rootless, tr->n[first_rootless].bdf);
		ev_int(r, "functions", (long long)tr->count);
		ev_int(r, "functions_without_host_bridge", (long long)rootless);
		return;
	}
	if (hv == 1)
		r = emit(ctx, ctx->host, ST_WARN, C_VIRTUAL_MACHINE,
			 "under a hypervisor: this PCIe tree (%zu functions, "
			 "%zu bridges) is the guest's view, not the host's; "
			 "GPU-NIC distances below may not be real", tr->count,
			 bridges);
	else if (numa_bad)
		r = emit(ctx, ctx->host, ST_WARN, C_NUMA_NODE_OUT_OF_RANGE,
			 "%zu PCI functions, %zu host bridge(s); %zu with a "
			 "numa_node outside -1..%d (first: %s = %lld), taken "
			 "as unknown", tr->count, roots, numa_bad,
			 (tr->numa_nodes > 0 ? tr->numa_nodes : NUMA_NODES_MAX) - 1,
			 tr->n[first_numa].bdf, tr->n[first_numa].numa_raw);
	else
		r = emit(ctx, ctx->host, ST_PASS, C_PCI_TREE,
			 "%zu PCI functions, %zu bridges, %zu host bridge(s), "
			 "%d NUMA node(s)", tr->count, bridges, roots,
			 tr->numa_nodes);
	if (hv == 1)
		remedy_PCI_TREE(r);
	ev_int(r, "functions", (long long)tr->count);
	ev_int(r, "bridges", (long long)bridges);
	ev_int(r, "bridge_types_inferred", (long long)inferred);
	ev_int(r, "host_bridges", (long long)roots);
	ev_int(r, "numa_nodes", tr->numa_nodes);
	ev_str(r, "hypervisor", "%s", hv < 0 ? "unknown" : hv ? "yes" : "no");
	ev_str(r, "libpci", "%s", ctx->pci_open_err ? "unavailable" : pci_method(ctx->pci));
	if (numa_bad) {
		/* Out-of-domain nodes count as "unknown" in every path. */
		ev_int(r, "numa_node_out_of_range", (long long)numa_bad);
		ev_str(r, "numa_node_out_of_range_first", "%s/numa_node=%lld",
		       tr->n[first_numa].bdf, tr->n[first_numa].numa_raw);
	}
}

/* s after the *used bytes of buf (len bytes), truncated to fit. */
static void append(char *buf, size_t len, size_t *used, const char *s)
{
	size_t n = strlen(s);

	if (n > len - 1 - *used)
		n = len - 1 - *used;
	memcpy(buf + *used, s, n);
	*used += n;
	buf[*used] = '\0';
}

/*
 * "0000:02:00.0 (downstream port), 0000:01:00.0 (upstream port), ...":
 * once per GPU x NIC pair, so put together without printf.
 */
static void bridges_string(const struct gdr_ctx *ctx, const struct pcipath *p,
			   char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nbridges; i++) {
		const struct pcinode *n = &ctx->tree.n[p->bridges[i]];

		if (i)
			append(buf, len, &used, ", ");
		append(buf, len, &used, n->bdf);
		append(buf, len, &used, " (");
		append(buf, len, &used, pcie_port_type_name(n->port_type));
		append(buf, len, &used, n->type_inferred ? "?)" : ")");
	}
	if (!buf[0])
		append(buf, len, &used, "none");
}

/* A node's NUMA node; one outside the domain as what sysfs said. */
static void numa_evidence(struct result *r, const char *key,
			  const struct pcinode *n)
{
	if (n->numa_bad)
		ev_str(r, key, "out of range: %lld", n->numa_raw);
	else
		ev_int(r, key, n->numa);
}

void gate_topo_path(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct inv_nic *nic = &ctx->inv.nic[pr->nic];
	const struct inv_gpu *gpu = &ctx->inv.gpu[pr->gpu];
	const struct pcipath *p = &pr->path;
	char br[1024];
	struct result *r;

	if (nic->pci_err) {
		emit(ctx, pr->subject, ST_ERROR, C_NIC_PCI_UNRESOLVABLE,
		     "cannot follow %s's sysfs device link "
		     "(/sys/class/infiniband/%s/device): %s", nic->name,
		     nic->name, strerror(nic->pci_err));
		return;
	}
	if (!nic->pci[0]) {
		emit(ctx, pr->subject, ST_SKIP, C_NIC_NOT_PCI,
		     "%s has no PCI function (software RDMA device without a "
		     "PCI netdev): no PCIe path", nic->name);
		return;
	}
	if (!gpu->pci[0]) {
		const struct cuda_gpu *g = ctx_cuda_gpu(ctx, pr->gpu);

		emit(ctx, pr->subject, ST_ERROR, C_GPU_PCI_UNKNOWN,
		     "the GPU's PCI address is unknown%s%s%s",
		     g && g->enum_call.called ? " (" : "",
		     g && g->enum_call.called ? g->enum_fn : "",
		     g && g->enum_call.called ? " failed)" : "");
		return;
	}
	if (pr->node_gpu < 0 || pr->node_nic < 0) {
		emit(ctx, pr->subject, ST_ERROR, C_PATH_UNKNOWN,
		     "%s not found under /sys/bus/pci/devices",
		     pr->node_gpu < 0 ? gpu->pci : nic->pci);
		return;
	}
	if (p->suspect >= 0) {
		emit(ctx, pr->subject, ST_ERROR, C_PATH_UNTRUSTED,
		     "%s/class is unreadable or malformed: it may be a bridge, "
		     "so the path cannot be classified",
		     ctx->tree.n[p->suspect].bdf);
		return;
	}
	if (p->rootless >= 0) {
		r = emit(ctx, pr->subject, ST_ERROR, C_NO_HOST_BRIDGE,
			 "%s has no host bridge (pciDDDD:BB) in its sysfs path: "
			 "the distance cannot be classified",
			 ctx->tree.n[p->rootless].bdf);
		ev_str(r, "function", "%s", ctx->tree.n[p->rootless].bdf);
		return;
	}
	bridges_string(ctx, p, br, sizeof(br));
	/*
	 * The PCIe path and nvidia-smi's class only: NCCL's path type for
	 * the pair (P2C on Grace C2C, the Data Direct function's path,
	 * Broadcom flattening, PXN) is the NCCL model's, which topo.nccl
	 * states; a label derived here from the class alone contradicted it.
	 */
	r = emit(ctx, pr->subject, ST_PASS, C_PCIE_PATH,
		 "%s: %s%s", topo_class_name(p->cls),
		 p->turn >= 0 ? "turns at " : "through the root complex",
		 p->turn >= 0 ? ctx->tree.n[p->turn].bdf : "");
	fact_distance(r, p->cls);
	ev_str(r, "nvidia_smi", "%s", topo_class_name(p->cls));
	ev_str(r, "gpu_pci", "%s", gpu->pci);
	ev_str(r, "nic_pci", "%s", nic->pci);
	if (strcmp(nic->pci_via, "device"))
		ev_str(r, "nic_pci_via", "%s", nic->pci_via);
	ev_str(r, "bridges", "%s", br);
	ev_int(r, "switch_units", p->units);
	numa_evidence(r, "gpu_numa", &ctx->tree.n[pr->node_gpu]);
	numa_evidence(r, "nic_numa", &ctx->tree.n[pr->node_nic]);
}

/*
 * The distance that counts for pair p: its PCIe path, or, where the NCCL
 * model uses the device as `<dev>_dma` (libmlx5's Data Direct function,
 * nic.data_direct; the release and NCCL_IB_DATA_DIRECT decide: net_ib
 * init.cc ncclIbInitDevices, 2.27.3+), the path to that function, which
 * is where NCCL measures it from. *dd gets that function ("" for the NIC
 * itself).
 */
static enum topo_class best_nic_class(struct gdr_ctx *ctx,
				      const struct inv_pair *p, char *dd,
				      size_t len)
{
	const struct verbs_nic *v = ctx_verbs_nic(ctx, p->nic);
	enum topo_class cls = p->path.cls;
	struct pcipath dp;
	const char *fn;
	int node;

	dd[0] = '\0';
	if (!v || !mlx5_data_direct(v) || p->node_gpu < 0 ||
	    !nccl_pair_dd(ctx, (int)(p - ctx->inv.pair)))
		return cls;
	fn = strrchr(v->dd_path, '/');
	fn = fn ? fn + 1 : v->dd_path;
	node = pcitree_find(&ctx->tree, fn);
	if (node < 0)
		return cls;
	pcitree_path(&ctx->tree, p->node_gpu, node, &dp);
	if (!dp.known || dp.cls == TOPO_UNKNOWN)
		return cls;
	snprintf(dd, len, "%.31s", fn);
	return dp.cls;
}

void gate_topo_best_nic(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_gpu *gpu = &ctx->inv.gpu[t->gpu];
	enum topo_class best = TOPO_UNKNOWN;
	const char *bcm = NULL, *bcm_nic = NULL;
	char names[512] = "", dd[32];
	struct result *r;
	size_t used = 0;
	int ndd = 0;

	if (!ctx->inv.nnic) {
		emit(ctx, gpu->subject, ST_SKIP, C_NO_RDMA_DEVICE,
		     "no RDMA device to pair with");
		return;
	}
	for (size_t i = 0; i < ctx->inv.npair; i++) {
		enum topo_class c;

		if (ctx->inv.pair[i].gpu != t->gpu)
			continue;
		c = best_nic_class(ctx, &ctx->inv.pair[i], dd, sizeof(dd));
		if (c < best)
			best = c;
	}
	if (best == TOPO_UNKNOWN) {
		emit(ctx, gpu->subject, ST_SKIP, C_PATH_UNKNOWN,
		     "no PCIe path to any RDMA device is known");
		return;
	}
	for (size_t i = 0; i < ctx->inv.npair; i++) {
		const struct inv_pair *p = &ctx->inv.pair[i];
		const char *name = ctx->inv.nic[p->nic].name;

		if (p->gpu != t->gpu || used >= sizeof(names) ||
		    best_nic_class(ctx, p, dd, sizeof(dd)) != best)
			continue;
		if (dd[0]) {
			ndd++;
			used += (size_t)snprintf(names + used, sizeof(names) - used,
						 "%s%s_dma at %s's Data Direct "
						 "function %s", used ? ", " : "",
						 name, name, dd);
		} else {
			used += (size_t)snprintf(names + used, sizeof(names) - used,
						 "%s%s", used ? ", " : "", name);
		}
	}
	for (size_t i = 0; i < ctx->inv.npair && !bcm; i++)
		if (ctx->inv.pair[i].gpu == t->gpu &&
		    (bcm = nccl_pair_bcm_near(ctx, (int)i)))
			bcm_nic = ctx->inv.nic[ctx->inv.pair[i].nic].name;
	if (nccl_path_of(best) == NCCL_PHB && gpu_is_c2c(ctx, t->gpu) == 1) {
		/*
		 * A Grace GPU (NVLink-C2C to its CPU) with the NIC behind
		 * the same CPU: NCCL's path is P2C (paths.cc
		 * ncclTopoComputePaths, 2.27.3+), inside its default GDR
		 * reach (NCCL_NET_GDR_C2C, default 1 since 2.27.3; level P2C
		 * since 2.29.2). topo.nccl judges the release at hand.
		 */
		r = emit(ctx, gpu->subject, ST_PASS, C_NEAR_NIC,
			 "nearest RDMA device: %s (%s, through the CPU the GPU "
			 "reaches over NVLink-C2C: NCCL's P2C, within NCCL's "
			 "default GDR reach since 2.27.3)", names,
			 topo_class_name(best));
		ev_bool(r, "c2c", true);
	} else if (nccl_path_of(best) == NCCL_PHB &&
		   gpu_is_c2c(ctx, t->gpu) < 0 &&
		   (ctx_platform(ctx)->kind == PLAT_KIND_GRACE ||
		    ctx_platform(ctx)->kind == PLAT_KIND_GRACE_DIRECT_NIC)) {
		/*
		 * Grace without NVML's answer: the x86 advice (move a NIC
		 * under the GPU's switch) would be wrong when the GPU is
		 * C2C-attached, as Grace GPUs are; say what decides it.
		 */
		r = emit(ctx, gpu->subject, ST_SKIP, C_NEAR_NIC_C2C_UNKNOWN,
			 "nearest RDMA device: %s (%s, through the CPU) on %s: "
			 "whether the GPU reaches that CPU over NVLink-C2C is "
			 "not known (gpu.nvml)", names, topo_class_name(best),
			 ctx_platform(ctx)->describe);
		remedy_NEAR_NIC_C2C_UNKNOWN(r);
	} else if (nccl_path_of(best) > NCCL_PXB && bcm) {
		/*
		 * NCCL merges Broadcom PEX sub-switches and virtual switch
		 * links (topo.nccl): the PCIe tree's PHB is its PXB, within
		 * its default reach (nccl-bcm-vlink warned here while
		 * topo.nccl PASSed the same rail with GDR both ways).
		 */
		r = emit(ctx, gpu->subject, ST_PASS, C_NEAR_NIC,
			 "nearest RDMA device: %s (%s in the PCIe tree, %s for "
			 "NCCL, which merges the Broadcom switches between "
			 "them)", bcm_nic, topo_class_name(best), bcm);
	} else if (nccl_path_of(best) > NCCL_PXB) {
		r = emit(ctx, gpu->subject, ST_WARN, C_NO_NEAR_NIC,
			 "nearest RDMA device %s is %s away: beyond NCCL's default "
			 "GDR level PXB", names, topo_class_name(best));
		remedy_NO_NEAR_NIC(r);
	} else {
		r = emit(ctx, gpu->subject, ST_PASS, C_NEAR_NIC,
			 "nearest RDMA device: %s (%s)", names,
			 topo_class_name(best));
	}
	ev_str(r, "best", "%s", names);
	ev_str(r, "distance", "%s", topo_class_name(best));
	if (ndd)
		ev_bool(r, "data_direct", true);
}
