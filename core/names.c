// SPDX-License-Identifier: MIT
/* One name table per vocabulary (core/names.h). */
#include "core/names.h"

const char *status_name(enum gdr_status st)
{
	static const char *const names[] = {
		[ST_PASS] = "PASS", [ST_WARN] = "WARN",
		[ST_BLOCKED] = "BLOCKED", [ST_SKIP] = "SKIP",
		[ST_ERROR] = "ERROR",
	};

	return (unsigned int)st < sizeof(names) / sizeof(names[0]) ?
	       names[st] : "?";
}

const char *layer_name(enum gdr_layer l)
{
	static const char *const names[] = {
		[L_HOST] = "host", [L_GPU] = "gpu", [L_NIC] = "nic",
		[L_MECHANISM] = "mech", [L_TOPOLOGY] = "topo",
		[L_PLATFORM] = "platform", [L_REGISTRATION] = "reg",
		[L_DATAPATH] = "data",
		[L_PEER] = "peer",
	};

	return (unsigned int)l < L_COUNT ? names[l] : "?";
}

const char *path_name(enum gdr_path p)
{
	return p == PATH_DMABUF ? "dmabuf" : p == PATH_PEERMEM ? "peermem" :
	       p == PATH_NCCL ? "nccl" : "?";
}

const char *verdict_name(enum verdict v)
{
	return v == V_READY ? "READY" : v == V_BLOCKED ? "BLOCKED" :
	       v == V_READY_UNPROVEN ? "READY-UNPROVEN" : "UNKNOWN";
}

const char *subject_kind_name(enum subject_kind k)
{
	static const char *const names[] = {
		[SUBJ_HOST] = "host", [SUBJ_GPU] = "gpu", [SUBJ_NIC] = "nic",
		[SUBJ_PORT] = "port", [SUBJ_PAIR] = "pair",
	};

	return (unsigned int)k <= SUBJ_PAIR ? names[k] : "?";
}

const char *topo_class_name(enum topo_class c)
{
	static const char *const names[] = {
		[TOPO_PIX] = "PIX", [TOPO_PXB] = "PXB", [TOPO_PHB] = "PHB",
		[TOPO_NODE] = "NODE", [TOPO_SYS] = "SYS",
		[TOPO_UNKNOWN] = "unknown",
	};

	return (unsigned int)c <= TOPO_UNKNOWN ? names[c] : "unknown";
}

const char *nccl_path_name(enum nccl_path p)
{
	static const char *const names[] = {
		[NCCL_LOC] = "LOC", [NCCL_PIX] = "PIX", [NCCL_PXB] = "PXB",
		[NCCL_PHB] = "PHB", [NCCL_SYS] = "SYS",
		[NCCL_UNKNOWN] = "unknown",
	};

	return (unsigned int)p <= NCCL_UNKNOWN ? names[p] : "unknown";
}

const char *pair_gdr_name(enum pair_gdr g)
{
	static const char *const names[] = {
		[PAIR_GDR_UNKNOWN] = "unknown", [PAIR_GDR_BOTH] = "both",
		[PAIR_GDR_RECV] = "recv", [PAIR_GDR_HOST] = "host",
	};

	return (unsigned int)g <= PAIR_GDR_HOST ? names[g] : "unknown";
}

const char *pair_acs_name(enum pair_acs a)
{
	static const char *const names[] = {
		[PAIR_ACS_UNKNOWN] = "unknown", [PAIR_ACS_CLEAR] = "clear",
		[PAIR_ACS_REDIRECT] = "redirect",
		[PAIR_ACS_REDIRECT_IOMMU] = "redirect_iommu",
	};

	return (unsigned int)a <= PAIR_ACS_REDIRECT_IOMMU ? names[a] :
	       "unknown";
}
