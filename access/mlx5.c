// SPDX-License-Identifier: MIT
/*
 * libmlx5 through a dlopen'd function table, the Data Direct part NCCL uses
 * (NCCL >= 2.27.3, src/transport/net_ib init.cc and reg.cc; rdma-core
 * >= v54 for the MLX5_1.25 symbols). Every symbol is optional: without them
 * NCCL sees no Data Direct device, and neither does this.
 */
#include "access/mlx5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access/symtab.h"

#define VSYM(n, ver, field) { .name = n, .version = ver, \
	.offset = offsetof(struct mlx5_table, field), .required = false }

static const struct sym_entry mlx5_syms[] = {
	VSYM("mlx5dv_is_supported", "MLX5_1.8", is_supported),
	VSYM("mlx5dv_get_data_direct_sysfs_path", "MLX5_1.25",
	     get_data_direct_sysfs_path),
	VSYM("mlx5dv_reg_dmabuf_mr", "MLX5_1.25", reg_dmabuf_mr),
};

static struct mlx5_table dv;
static void *mlx5_handle;

static void enter(struct stage_status *st, const char *call)
{
	snprintf(st->call, sizeof(st->call), "%s", call);
}

const struct mlx5_table *mlx5_api(const struct vendor_options *opt,
				  struct vendor_facts *vf,
				  struct stage_status *st)
{
	struct verbs_facts *v = &vf->verbs;

	if (opt->skip_mlx5)
		return NULL;
	if (!mlx5_handle) {
		memset(&v->mlx5_lib, 0, sizeof(v->mlx5_lib));
		enter(st, "dlopen libmlx5");
		mlx5_handle = symtab_load(opt->libmlx5 ? opt->libmlx5 :
					  LIBMLX5_DEFAULT, mlx5_syms,
					  sizeof(mlx5_syms) / sizeof(mlx5_syms[0]),
					  &dv, &v->mlx5_lib);
		v->have_mlx5_is_supported = dv.is_supported != NULL;
		v->have_dd_sysfs_path = dv.get_data_direct_sysfs_path != NULL;
		v->have_mlx5_reg_dmabuf_mr = dv.reg_dmabuf_mr != NULL;
	}
	return mlx5_handle ? &dv : NULL;
}

void mlx5_probe_device(const struct mlx5_table *t,
		       int (*dereg_mr)(struct ibv_mr *mr), struct ibv_device *dev,
		       struct ibv_context *ctx, struct ibv_pd *pd,
		       struct verbs_nic *n, struct stage_status *st)
{
	char buf[VF_TEXT - 8];
	struct ibv_mr *mr;
	int rc;

	n->mlx5 = -1;
	if (!t || !t->is_supported)
		return;
	enter(st, "mlx5dv_is_supported");
	n->mlx5 = t->is_supported(dev) ? 1 : 0;
	if (n->mlx5 != 1)
		return;
	/*
	 * ncclMlx5dvDmaBufCapable: mlx5dv_reg_dmabuf_mr(fd -1, mlx5 flags 0);
	 * EOPNOTSUPP / EPROTONOSUPPORT (or no symbol: NCCL's wrapper sets
	 * EOPNOTSUPP) mean not capable.
	 */
	if (pd && t->reg_dmabuf_mr) {
		enter(st, "mlx5dv_reg_dmabuf_mr");
		errno = 0;
		mr = t->reg_dmabuf_mr(pd, 0, 0, 0, -1, 0, 0);
		n->dd_probe_run = true;
		n->dd_probe_errno = mr ? 0 : errno;
		if (mr) {
			/* A provider that took fd -1: nothing to keep. */
			enter(st, "ibv_dereg_mr");
			dereg_mr(mr);
		}
	}
	if (!t->get_data_direct_sysfs_path)
		return;
	memset(buf, 0, sizeof(buf));
	enter(st, "mlx5dv_get_data_direct_sysfs_path");
	rc = t->get_data_direct_sysfs_path(ctx, buf, sizeof(buf));
	n->dd_path_called = true;
	n->dd_path_rc = rc;
	buf[sizeof(buf) - 1] = '\0';
	if (rc == 0)
		snprintf(n->dd_path, sizeof(n->dd_path), "%s", buf);
}

bool mlx5_data_direct(const struct verbs_nic *n)
{
	return n->mlx5 == 1 && n->dd_probe_run &&
	       n->dd_probe_errno != EOPNOTSUPP &&
	       n->dd_probe_errno != EPROTONOSUPPORT &&
	       n->dd_path_called && n->dd_path_rc == 0 && n->dd_path[0];
}
