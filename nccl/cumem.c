// SPDX-License-Identifier: MIT
/*
 * NCCL's buffer kind (nccl/cumem.h): the parameter alone where set, else
 * ncclIsCuMemSupported's facts; unknown where an unread fact would decide.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nccl/cumem.h"
#include "nccl/rules.h"

enum nccl_bufkind nccl_cumem_kind(const struct nccl_cumem_in *in, char *why,
				   size_t len)
{
	enum nccl_conf_src src;
	int line = 0;
	int64_t def = nccl_cumem_param_default(in->ver), param = def;
	const char *val = nccl_conf_get(in->conf, "NCCL_CUMEM_ENABLE", &src,
					&line);
	char ptxt[160], unknown[96] = "";
	size_t uu = 0;
	bool lo, hi;

	if (val) {
		nccl_parse_param(val, def, &param);
		snprintf(ptxt, sizeof(ptxt), "NCCL_CUMEM_ENABLE=%.32s (%s%s%.0d)",
			 val, nccl_conf_src_name(src), line ? ":" : "", line);
	} else {
		snprintf(ptxt, sizeof(ptxt), "NCCL_CUMEM_ENABLE unset: NCCL "
			 "%s's default %lld%s", in->version, (long long)def,
			 def == -2 ? " (auto)" : "");
	}
	lo = nccl_cumem_enable(in->ver, param, in->driver_version,
			       in->create == 1, in->vmm > 0, in->gdr_vmm > 0);
	hi = nccl_cumem_enable(in->ver, param, in->driver_version ?
			       in->driver_version : 12000, in->create != 0,
			       in->vmm != 0, in->gdr_vmm != 0);
	if (in->ver < NCCL_VER(2, 18, 0)) {
		snprintf(why, len, "NCCL %s has no cuMem "
			 "allocation (ncclCuMemEnable starts at 2.18.1)",
			 in->version);
		return NCCL_BUF_CUMEMALLOC;
	}
	/* The parameter alone decides: ncclIsCuMemSupported is not read. */
	if (param != -2) {
		snprintf(why, len, "%s", ptxt);
		return lo ? NCCL_BUF_CUMEM : NCCL_BUF_CUMEMALLOC;
	}
	if (!in->driver_version)
		uu += (size_t)snprintf(unknown + uu, sizeof(unknown) - uu,
				       "%sdriver version", uu ? ", " : "");
	if (in->create < 0 && uu < sizeof(unknown))
		uu += (size_t)snprintf(unknown + uu, sizeof(unknown) - uu,
				       "%scuMemCreate", uu ? ", " : "");
	if (in->vmm < 0 && uu < sizeof(unknown))
		uu += (size_t)snprintf(unknown + uu, sizeof(unknown) - uu,
				       "%sVMM attribute", uu ? ", " : "");
	if (in->gdr_vmm < 0 && in->ver < NCCL_VER(2, 24, 0) &&
	    uu < sizeof(unknown))
		snprintf(unknown + uu, sizeof(unknown) - uu,
			 "%sGPUDirect RDMA with VMM attribute", uu ? ", " : "");
	if (lo != hi) {
		snprintf(why, len, "%s, and cuMem support unknown (%s not "
			 "read)", ptxt, unknown);
		return NCCL_BUF_UNKNOWN;
	}
	if (lo)
		snprintf(why, len, "%s, cuMem supported "
			 "(driver %d, cuMemCreate, VMM attribute%s)", ptxt,
			 in->driver_version, in->ver < NCCL_VER(2, 24, 0) ?
			 ", GPUDirect RDMA with VMM attribute" : "");
	else
		snprintf(why, len, "%s, cuMem not supported (%s)", ptxt,
			 in->driver_version && in->driver_version < 12000 ?
			 "driver < 12000" : in->create == 0 ? "no cuMemCreate" :
			 in->vmm == 0 ? "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0" :
			 "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0, "
			 "required until 2.23.4");
	return lo ? NCCL_BUF_CUMEM : NCCL_BUF_CUMEMALLOC;
}
