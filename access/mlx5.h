/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_MLX5_H
#define GDRCHECK_MLX5_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access/vendor.h"

#define LIBMLX5_DEFAULT "libmlx5.so.1"

/*
 * rdma-core providers/mlx5/mlx5dv.h (v54.0, MLX5_1.25); the build host's
 * header may predate it, so the one constant is spelt here, as NCCL does in
 * src/include/mlx5/mlx5dvcore.h.
 */
#define GDR_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT	(1 << 0)

/*
 * libmlx5's Data Direct entry points, all optional, bound by version node
 * as NCCL binds them (src/misc/mlx5dvsymbols.cc buildMlx5dvSymbols):
 * mlx5dv_is_supported (MLX5_1.8), mlx5dv_get_data_direct_sysfs_path and
 * mlx5dv_reg_dmabuf_mr (MLX5_1.25, rdma-core >= v54).
 */
struct mlx5_table {
	bool (*is_supported)(struct ibv_device *dev);
	int (*get_data_direct_sysfs_path)(struct ibv_context *ctx, char *buf,
					  size_t len);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t len, uint64_t iova, int fd,
					int access, int mlx5_access);
};

/* Load libmlx5 once per worker (unless opt->skip_mlx5); NULL if absent. */
const struct mlx5_table *mlx5_api(const struct vendor_options *opt,
				  struct vendor_facts *vf,
				  struct stage_status *st);

/*
 * The verbs stage's per-device part, as NCCL's ncclIbInitDevices: is it an
 * mlx5 device, does mlx5dv_reg_dmabuf_mr pass the fd -1 probe
 * (ncclMlx5dvDmaBufCapable), and its Data Direct function's sysfs path.
 * pd: a PD of the opened device (NULL: no probe).
 */
void mlx5_probe_device(const struct mlx5_table *dv,
		       int (*dereg_mr)(struct ibv_mr *mr), struct ibv_device *dev,
		       struct ibv_context *ctx, struct ibv_pd *pd,
		       struct verbs_nic *n, struct stage_status *st);

/* NCCL would expose this device as `<dev>_dma` (given Data Direct is on). */
bool mlx5_data_direct(const struct verbs_nic *n);

#endif
