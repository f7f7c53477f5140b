/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_SETTINGS_H
#define GDRCHECK_NCCL_SETTINGS_H

/*
 * The NCCL settings the model reads, as NCCL parses them (param.cc
 * NCCL_PARAM; net_ib; rules in nccl/rules.c) from the effective
 * environment and configuration files (nccl/conf.c). Pure.
 */
#include <stdbool.h>
#include <stdint.h>

#include "nccl/conf.h"
#include "nccl/rules.h"

struct nccl_settings {
	struct nccl_hca_filter hca;	/* NCCL_IB_HCA */
	bool hca_set;
	int hca_err;
	int64_t ib_disable, dmabuf_enable, gdr_read, gdr_c2c, pxn_disable;
	int64_t pxn_c2c, gid_index, roce_ver;
	int64_t ib_data_direct;		/* NCCL_IB_DATA_DIRECT */
	bool level_set;			/* NCCL_NET_GDR_LEVEL parsed */
	int level_err;
	enum nccl_ptype level;
	bool ib_used;		/* the IB transport initialises */
	char ib_why[192];	/* why not */
};

/* The settings NCCL ver reads from conf. */
void nccl_settings_read(const struct nccl_conf *conf, int ver,
			struct nccl_settings *st);

#endif
