/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NAMES_H
#define GDRCHECK_NAMES_H

/*
 * The small vocabularies every layer shares, each as one enum with one name
 * table (core/names.c): statuses, layers, paths, verdicts, subject kinds and
 * the nvidia-smi distance classes. Pure: no other project header.
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

const char *status_name(enum gdr_status st);
const char *layer_name(enum gdr_layer l);
const char *path_name(enum gdr_path p);
const char *verdict_name(enum verdict v);
const char *subject_kind_name(enum subject_kind k);
const char *topo_class_name(enum topo_class c);

#endif
