/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NAMES_H
#define GDRCHECK_NAMES_H

/*
 * The small vocabularies every layer shares, each as one enum with one name
 * table (core/names.c): statuses, layers, paths, verdicts, subject kinds,
 * the nvidia-smi distance classes, NCCL's path types and the typed facts
 * of a GPU x NIC pair. Pure: no other project header.
 */

enum gdr_status {
	ST_PASS = 0,
	ST_WARN,
	ST_BLOCKED,
	ST_SKIP,
	ST_ERROR,
};

enum gdr_layer {
	L_HOST = 0,
	L_GPU,
	L_NIC,
	L_MECHANISM,
	L_TOPOLOGY,
	L_PLATFORM,
	L_REGISTRATION,
	L_DATAPATH,
	L_PEER,		/* two-node mode: after the verdict, on request */
	L_COUNT,
};

/*
 * The two ways to register GPU memory with a NIC, and a third verdict
 * (issue 14): "nccl", whether the mechanism NCCL picks on each GPU's rail
 * was proven by a real registration and transfer. P_BOTH stays the two
 * mechanisms; only data.nccl carries P_NCCL.
 */
enum gdr_path {
	PATH_DMABUF = 0,
	PATH_PEERMEM,
	PATH_NCCL,
	PATH_COUNT,
};
#define P_DMABUF	(1u << PATH_DMABUF)
#define P_PEERMEM	(1u << PATH_PEERMEM)
#define P_NCCL		(1u << PATH_NCCL)
#define P_BOTH		(P_DMABUF | P_PEERMEM)
#define P_NONE		0u

enum subject_kind {
	SUBJ_HOST = 0,
	SUBJ_GPU,
	SUBJ_NIC,
	SUBJ_PORT,
	SUBJ_PAIR,
};

enum verdict {
	V_READY = 0,
	V_BLOCKED,
	V_UNKNOWN,
	/*
	 * Every gate passes but the proof was not attempted (--no-alloc,
	 * health checks on busy nodes): exit 0, said as READY-UNPROVEN.
	 */
	V_READY_UNPROVEN,
};

/* nvidia-smi topo -m distance classes (PIX..SYS), nearest first. */
enum topo_class {
	TOPO_PIX = 0,	/* at most one PCIe bridge (one switch) */
	TOPO_PXB,	/* several bridges, not the host bridge */
	TOPO_PHB,	/* through a PCIe host bridge (the CPU) */
	TOPO_NODE,	/* between host bridges of one NUMA node */
	TOPO_SYS,	/* across the SMP interconnect between NUMA nodes */
	TOPO_UNKNOWN,
};

/*
 * NCCL's path types between a GPU and a NIC by name (their numbers change
 * between versions), nearest first; NCCL has no NODE (it is PHB there).
 */
enum nccl_path {
	NCCL_LOC = 0,
	NCCL_PIX,
	NCCL_PXB,
	NCCL_PHB,
	NCCL_SYS,
	NCCL_UNKNOWN,
};

/* Whether NCCL uses GPUDirect RDMA for a GPU x NIC pair (topo.nccl). */
enum pair_gdr {
	PAIR_GDR_UNKNOWN = 0,	/* not decided: no path, not checked */
	PAIR_GDR_BOTH,		/* sends and receives */
	PAIR_GDR_RECV,		/* receives only: GDR read is off */
	PAIR_GDR_HOST,		/* neither: traffic stages through host memory */
};

/* ACS on the PCIe path between a GPU and a NIC (platform.acs). */
enum pair_acs {
	PAIR_ACS_UNKNOWN = 0,	/* not checked, or unreadable */
	PAIR_ACS_CLEAR,		/* no bridge redirects peer traffic */
	PAIR_ACS_REDIRECT,	/* redirected to the root complex */
	PAIR_ACS_REDIRECT_IOMMU,	/* redirected, and the IOMMU translates */
};

const char *status_name(enum gdr_status st);
const char *layer_name(enum gdr_layer l);
const char *path_name(enum gdr_path p);
const char *verdict_name(enum verdict v);
const char *subject_kind_name(enum subject_kind k);
const char *topo_class_name(enum topo_class c);
const char *nccl_path_name(enum nccl_path p);
const char *pair_gdr_name(enum pair_gdr g);
const char *pair_acs_name(enum pair_acs a);

#endif
