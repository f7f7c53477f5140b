// SPDX-License-Identifier: MIT
/*
 * Weak defaults for the NVML facts the NCCL model asks for (issue 14 item
 * 1). The NVML work provides the real gpu_nvlink_peers/gpu_is_c2c; this
 * file is deleted when it lands. -1: unknown (no PXN, no C2C modelled).
 */
#include "probes/probes.h"

__attribute__((weak)) int gpu_nvlink_peers(const struct gdr_ctx *ctx, int gpu,
					   int *peers, int max)
{
	return -1;
}

__attribute__((weak)) int gpu_is_c2c(const struct gdr_ctx *ctx, int gpu)
{
	return -1;
}
