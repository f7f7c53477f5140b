/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_VERBS_H
#define GDRCHECK_VERBS_H

#include "access/vendor.h"

#define LIBIBVERBS_DEFAULT "libibverbs.so.1"

/* Worker stage: library, device list, open, DMA-BUF provider probe. */
void verbs_stage_probe(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st);

#endif
