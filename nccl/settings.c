// SPDX-License-Identifier: MIT
/*
 * The NCCL settings the model reads (nccl/settings.h): each variable's
 * value as NCCL ver parses it, its default where unset.
 */
#include <errno.h>
#include <stdio.h>

#include "nccl/settings.h"

static const char *get(const struct nccl_conf *conf, const char *name)
{
	return nccl_conf_get(conf, name, NULL, NULL);
}

static int64_t param(const struct nccl_conf *conf, const char *name,
		     int64_t deflt)
{
	int64_t v;

	nccl_parse_param(get(conf, name), deflt, &v);
	return v;
}

void nccl_settings_read(const struct nccl_conf *conf, int ver,
			struct nccl_settings *st)
{
	const char *v;

	st->ib_disable = param(conf, "NCCL_IB_DISABLE", 0);
	st->dmabuf_enable = param(conf, "NCCL_DMABUF_ENABLE", 1);
	st->gdr_read = nccl_gdr_read_param(get(conf, "NCCL_NET_GDR_READ"));
	st->gdr_c2c = param(conf, "NCCL_NET_GDR_C2C",
			    nccl_gdr_c2c_default(ver));
	st->pxn_disable = param(conf, "NCCL_PXN_DISABLE", 0);
	st->pxn_c2c = param(conf, "NCCL_PXN_C2C", nccl_pxn_c2c_default(ver));
	st->gid_index = param(conf, "NCCL_IB_GID_INDEX",
			      nccl_gid_index_default(ver));
	st->roce_ver = param(conf, "NCCL_IB_ROCE_VERSION_NUM", 2);
	/* net_ib init.cc NCCL_PARAM(IbDataDirect, "IB_DATA_DIRECT", 1),
	 * 2.27.3+ (read by nccl_data_direct only from that version on). */
	st->ib_data_direct = param(conf, "NCCL_IB_DATA_DIRECT", 1);
	v = get(conf, "NCCL_NET_GDR_LEVEL");
	st->level_err = v ? nccl_parse_level(ver, v, &st->level) : -ENOENT;
	st->level_set = v && !st->level_err;
	if (!st->level_set)
		st->level = nccl_default_gdr_level(ver, st->gdr_c2c);
	v = get(conf, "NCCL_IB_HCA");
	st->hca_set = v != NULL;
	st->hca_err = nccl_hca_parse(ver, v, &st->hca);
	st->ib_used = true;
	v = get(conf, "NCCL_NET");
	if (st->ib_disable) {
		st->ib_used = false;
		snprintf(st->ib_why, sizeof(st->ib_why), "NCCL_IB_DISABLE=%s "
			 "turns the IB transport off (NCCL uses sockets)",
			 get(conf, "NCCL_IB_DISABLE"));
	} else if (v && !nccl_net_selects(ver, v, "IB")) {
		st->ib_used = false;
		snprintf(st->ib_why, sizeof(st->ib_why), "NCCL_NET=%.64s selects "
			 "another transport than IB", v);
	}
}
