/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_REG_H
#define GDRCHECK_REG_H

#include "access/vendor.h"

/* Default buffer per GPU for the registration and datapath proof. */
#define REG_DEFAULT_BYTES (2ull << 20)

/*
 * Worker stage: for every CUDA GPU x opened RDMA device, register GPU
 * memory the peermem way (ibv_reg_mr on the CUDA pointer) and the DMA-BUF
 * way (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr), then prove the
 * MRs with a loopback RC QP: RDMA WRITE into GPU memory, RDMA READ back,
 * data checked. Everything is released before the stage returns.
 */
void reg_stage(const struct vendor_options *opt, struct vendor_facts *vf,
	       struct stage_status *st);

/* Meaning of an ibv_wc_status for an operator. */
const char *wc_status_meaning(int status);

#endif
