/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_MODEL_H
#define GDRCHECK_NCCL_MODEL_H

/*
 * The steps of NCCL's topology search that rewrite the GPU x NIC paths,
 * decide GPUDirect RDMA and its mechanism per pair and pick the rails
 * (paths.cc ncclTopoComputePaths, ncclTopoCheckGdr; net_ib; topo.cc
 * ncclTopoGetLocal), as pure functions over typed facts: the node's pairs (struct nccl_node,
 * filled by probes/nccl_facts.c from the inventory) and each pair's model
 * (struct nccl_pair_model), which the steps update in place. The rules
 * per release are nccl/rules.c's; nothing here reads the node or emits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl/rules.h"

/* One GPU x NIC pair as NCCL sees it, built pass by pass. */
struct nccl_pair_model {
	bool known;		/* a PCIe path is known */
	bool used;		/* IB transport on, NCCL_IB_HCA selects it */
	int port;		/* first port NCCL_IB_HCA selects */
	enum nccl_ptype type;	/* NCCL's path type, PXN/P2C applied */
	bool rail;		/* one of the GPU's rails */
	int relay;		/* PXN relay: inventory GPU index, -1 */
	enum nccl_ptype relay_dist;	/* the relay's path to the NIC */
	int err;		/* nccl_gdr_decide failed */
	struct nccl_gdr_out rd, wr;	/* send (GDR read) / receive */
	struct nccl_mech_out mrd, mwr;
	int gid_index;		/* -1 IB or unknown */
	bool cc_unknown;	/* compute capability unanswered or out of domain */
	bool dd;		/* NCCL uses the NIC's `<dev>_dma` (Data Direct) */
	/* NCCL's PCI view (pci_view): Broadcom flattening, bandwidth */
	bool bcm;		/* merging Broadcom sub-switches changed the type */
	bool vlink;		/* over a Broadcom virtual switch link */
	enum nccl_ptype pci_type;	/* the type before flattening */
	double bw;		/* GPU->NET path bandwidth, GB/s; 0 unknown */
	/*
	 * The NIC's path to the GPU (netNode->paths[GPU]): type and bw of
	 * the same walk, then only the rewrites nccl_rewrite_net_side says
	 * reach it (P2C, no GDR; never PXN).
	 */
	enum nccl_ptype net_type;
	double net_bw;
	/* the same path through the CPU (nccl_nogdr_path): its two halves */
	double bw_gpu_cpu;	/* GPU -> CPU over PCI: GPU link, uplinks */
	double bw_cpu_net;	/* CPU -> NET: uplinks, NIC link, port */
	bool nogdr;		/* re-routed through the CPU: no GDR (write) */
	enum nccl_ptype nogdr_from;	/* the type before the re-route */
	/*
	 * No GDR support only because an input was never answered (CUDA
	 * hung or hid the GPU, an attribute unanswered, the NIC not opened):
	 * why, else NULL. Unknown is not no (issue 23).
	 */
	const char *undecided;
};

/* What ncclTopoCheckGdr and the mechanism choice read of one GPU. */
struct nccl_gpu_facts {
	int dev;			/* CUDA device index */
	enum nccl_ptype cpu_path;	/* to its CPU (nccl_gpu_cpu_path) */
	bool gdr;			/* gdrSupport (unanswered: true) */
	int cc;				/* compute capability: 90 when unknown */
	bool cc_unknown;		/* unanswered or out of its domain */
	bool c2c;			/* reaches its CPU over NVLink-C2C */
	bool comm_dmabuf;		/* nccl_dmabuf_comm for this GPU */
	const char *unknown;		/* an input never answered: why */
};

/* What the same decisions read of one NIC. */
struct nccl_nic_facts {
	bool dmabuf;			/* ncclIbDmaBufSupport passes */
	const char *unknown;		/* its DMA-BUF support unknown: why */
};

/* The facts the steps read: indices are the inventory's. */
struct nccl_node {
	int ver;			/* NCCL_VER() of the release modelled */
	size_t ngpu, nnic, npair;
	const int *pair_gpu, *pair_nic;	/* [npair]: the pair's GPU and NIC */
	const int *pair_at;		/* [gpu * nnic + nic] -> pair, -1 */
	const struct nccl_gpu_facts *gpu;	/* [ngpu] */
	const struct nccl_nic_facts *nic;	/* [nnic] */
	/* [ngpu], [ngpu * ngpu]: row g lists the NVLink peers of GPU g */
	const int *npeers, *peers;
	/* the effective settings (topo.nccl_config) */
	bool peermem;			/* NCCL's peermem check passes */
	int64_t gdr_read, gdr_c2c;	/* NCCL_NET_GDR_READ, _C2C */
	bool level_set;			/* NCCL_NET_GDR_LEVEL parsed */
	enum nccl_ptype level;
	int64_t pxn_disable, pxn_c2c;	/* NCCL_PXN_DISABLE, NCCL_PXN_C2C */
	const char *netdevs_policy;	/* NCCL_NETDEVS_POLICY, NULL unset */
};

/*
 * ncclTopoComputePaths after ncclTopoSetPaths, then the rails: P2C, the
 * pre-PXN rails and their GDR decisions, PXN, every used pair's GDR
 * decision and mechanism, the no-GDR detour, the rails again. pm holds
 * each pair's PCI-walk type and bandwidths, port and Data Direct choice.
 */
void nccl_model_paths(const struct nccl_node *nd, struct nccl_pair_model *pm);

#endif
