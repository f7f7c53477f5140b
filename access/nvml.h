/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NVML_H
#define GDRCHECK_NVML_H

#include "access/vendor.h"

#define LIBNVML_DEFAULT "libnvidia-ml.so.1"

/* Worker stage (runs inside the isolated worker process): nvmlInit, every
 * GPU's UUID, PCI address, NVLink links and their far ends, C2C mode, then
 * nvmlShutdown. */
void nvml_stage_query(const struct vendor_options *opt,
		      struct vendor_facts *vf, struct stage_status *st);

/* NVML_ERROR_* name of an nvmlReturn_t, or NULL when not one we know. */
const char *nvml_result_name(int rc);

#endif
