/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_PCIVIEW_H
#define GDRCHECK_NCCL_PCIVIEW_H

/*
 * A pair's path as NCCL's topology has it (topo.cc, paths.cc): its type,
 * the Data Direct function standing for the NIC, the PCI switch nodes
 * after Broadcom flattening, a Broadcom virtual switch link, the narrowest
 * link on the way. Pure over the PCI tree and path
 * (decode/pcie.h); what sysfs says of a node comes through a reader the
 * caller fills (probes/nccl_facts.c reads each fact once, on demand).
 */
#include <stdbool.h>
#include <stdint.h>

#include "decode/pcie.h"
#include "nccl/model.h"

/* NCCL's path type of a PCI distance class (nccl_path_of). */
enum nccl_ptype nccl_ptype_of_class(enum topo_class c);

/* What Data Direct reads of a NIC (nic.data_direct, from libmlx5). */
struct nccl_dd_nic {
	bool capable;			/* mlx5_data_direct */
	const char *fn;			/* the Data Direct function's BDF */
};

/*
 * Whether NCCL uses the NIC as `<dev>_dma` for the GPU at tree node
 * node_gpu, and then the pair's distance: the GPU's path to that function.
 */
void nccl_dd_apply(int ver, int64_t ib_data_direct, const struct pcitree *t,
		   int node_gpu, const struct nccl_dd_nic *nic,
		   struct nccl_pair_model *m);

struct nccl_pci_reader {
	void *arg;
	/* ncclTopoGetIntDevice's id of node's four sysfs ids (nccl_pci_id) */
	uint64_t (*id)(void *arg, int node);
	/*
	 * The link NCCL gives node towards its parent, GB/s (nccl_pci_bw);
	 * nvml: the current link, as NCCL 2.30.7 reads a GPU's from NVML.
	 */
	double (*link_bw)(void *arg, int node, bool nvml);
	/* Does switch a's virtual_switch_links directory name switch b? */
	bool (*bcm_link)(void *arg, int a, int b);
};

struct nccl_pci_view_in {
	int ver;
	const struct pcitree *tree;
	const struct pcipath *path;	/* GPU to NIC (pcitree_path) */
	int node_gpu, node_nic;		/* tree indices, -1 unknown */
	const struct nccl_pci_reader *rd;
};

/* The bandwidths before the port's, GB/s; 0 unknown. */
struct nccl_pci_bw {
	double path;			/* GPU -> NIC */
	double gpu_cpu;			/* GPU -> CPU: GPU link, uplinks */
	double nic_cpu;			/* NIC -> CPU: NIC link, uplinks */
};

/*
 * m's type (PIX/PXB after flattening, PXB over a virtual link), pci_type,
 * bcm, vlink; m->bw and the halves cleared. False when the pair has no
 * known path (nothing more to add).
 */
bool nccl_pci_view(const struct nccl_pci_view_in *in,
		   struct nccl_pair_model *m, struct nccl_pci_bw *out);
/* The NIC port's rate (nccl_ib_port_mbps) joins: m->bw and its halves. */
void nccl_pci_view_port(struct nccl_pair_model *m,
			const struct nccl_pci_bw *b, int mbps);

/*
 * Where ncclTopoAddC2c's findLocalCpu (nccl_local_cpu_search_circles)
 * circles for the GPU at tree node gpu: the switch node at which the first
 * PCI link by bandwidth leads down, not up. ncclTopoAddPci links a
 * switch's children before its uplink and ncclTopoConnectNodes keeps ties
 * in insertion order (topo.cc:444-460, :172-180 at v2.21.5-1), so a child
 * whose link is as wide as the switch's uplink comes first and the search
 * goes down and back up for ever. members: the tree nodes of NCCL's GPUs
 * and NICs (n of them). -1: it reaches the CPU.
 */
int nccl_local_cpu_circle(const struct pcitree *t,
			  const struct nccl_pci_reader *rd, const int *members,
			  size_t n, int gpu);

#endif
