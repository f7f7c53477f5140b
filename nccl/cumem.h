/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_CUMEM_H
#define GDRCHECK_NCCL_CUMEM_H

/*
 * Which memory NCCL registers: cuMem (VMM) or cudaMalloc buffers, from
 * NCCL_CUMEM_ENABLE and the CUDA facts ncclCuMemEnable reads. Pure; the
 * rules per release are nccl/rules.c's.
 */
#include <stddef.h>

#include "nccl/conf.h"

/*
 * NCCL's buffers (cudawrap.cc ncclCuMemEnable, 2.18.1-2.30.7: v2.18.1-1
 * cudawrap.cc:15-46, v2.19.1-1 cudawrap.cc:15-48, v2.23.4-1
 * cudawrap.cc:13-49, v2.24.3-1 cudawrap.cc:13-46, v2.30.7-1
 * cudawrap.cc:16-51): with cuMem on, ncclCudaCalloc and the net
 * transport's device buffers come from ncclCuMemAlloc (cuMemCreate +
 * cuMemMap + cuMemSetAccess; alloc.h, v2.30.7-1 net.cc:1124), so only
 * the VMM registration and transfer prove NCCL's path; with it off,
 * cudaMalloc (cuMemAlloc) memory is what NCCL registers.
 */
enum nccl_bufkind { NCCL_BUF_CUMEMALLOC, NCCL_BUF_CUMEM, NCCL_BUF_UNKNOWN };

/* What ncclCuMemEnable reads; each fact -1 unknown, 0 no, 1 yes. */
struct nccl_cumem_in {
	int ver;
	const char *version;		/* the release as shown */
	const struct nccl_conf *conf;	/* NCCL_CUMEM_ENABLE, where it is set */
	int driver_version;		/* cuDriverGetVersion, 0 unknown */
	int create;			/* libcuda exports cuMemCreate */
	int vmm;			/* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
	int gdr_vmm;			/* GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
};

/* The kind, and why (the setting and the facts) in why[len]. */
enum nccl_bufkind nccl_cumem_kind(const struct nccl_cumem_in *in, char *why,
				   size_t len);

#endif
