/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CUDA_H
#define GDRCHECK_CUDA_H

#include "access/vendor.h"

#define LIBCUDA_DEFAULT "libcuda.so.1"
/* Bytes allocated per GPU for the DMA-BUF export check. */
#define CUDA_EXPORT_BYTES (2u << 20)

/* Worker stages (run inside the isolated worker process). */
void cuda_stage_query(const struct vendor_options *opt,
		      struct vendor_facts *vf, struct stage_status *st);
void cuda_stage_export(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st);

/* Fallback names for CUresult values when cuGetErrorName is absent. */
const char *cuda_result_name(int rc);

#endif
