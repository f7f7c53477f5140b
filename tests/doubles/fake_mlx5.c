// SPDX-License-Identifier: MIT
/*
 * Scenario-driven test double of libmlx5.so.1: the Data Direct entry points
 * NCCL uses (src/misc/mlx5dvsymbols.cc), versioned as rdma-core exports
 * them (providers/mlx5/libmlx5.map): mlx5dv_is_supported@MLX5_1.8,
 * mlx5dv_get_data_direct_sysfs_path@MLX5_1.25, mlx5dv_reg_dmabuf_mr@MLX5_1.25.
 * Loaded through gdrcheck's own dlopen path (--libmlx5 / GDRCHECK_LIBMLX5),
 * next to the libibverbs double, whose objects it works on: like the real
 * provider library it needs libibverbs already loaded, and finds it by its
 * soname (dlopen "libibverbs.so.1" RTLD_NOLOAD). A Data Direct MR is made by
 * that libibverbs' ibv_reg_dmabuf_mr@IBVERBS_1.12 (so ibv_dereg_mr and the
 * data path treat it as any dma-buf MR) once this double's checks passed.
 *
 * Scenario: the libibverbs double's file (env FAKE_VERBS_SCENARIO); its
 * device names (devI.name ["mlx5_I"], device_count) identify a device.
 * Keys [defaults]:
 *   devI.mlx5 [1]             mlx5dv_is_supported
 *   devI.dd_path [absent]     sysfs path of the device's Data Direct
 *                             function ("/devices/pci.../0000:bb:dd.f");
 *                             absent: mlx5dv_get_data_direct_sysfs_path
 *                             returns ENODEV (not a Data Direct device)
 *   devI.dd_path_rc [0]       another return value of that call (an errno)
 *   devI.dd_probe_errno [9]   mlx5dv_reg_dmabuf_mr with fd < 0 (EBADF: the
 *                             provider implements it; 95 EOPNOTSUPP)
 *   devI.dd_reg_errno [0]     mlx5dv_reg_dmabuf_mr with a real fd fails so
 * mlx5dv_reg_dmabuf_mr with MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT on a device
 * without dd_path: EOPNOTSUPP; unknown mlx5_access bits: EINVAL.
 * Fault keys (fake_scenario.h): fail/hang/crash/exit.NAME[.I], I the device.
 */
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/doubles/fake_scenario.h"

#define SYMVER(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@@" node)

#define DD_ACCESS	(1 << 0)	/* MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT */

bool fake_is_supported(struct ibv_device *dev);
int fake_get_data_direct_sysfs_path(struct ibv_context *ctx, char *buf,
				    size_t len);
struct ibv_mr *fake_mlx5_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				       size_t len, uint64_t iova, int fd,
				       int access, int mlx5_access);

SYMVER(fake_is_supported, mlx5dv_is_supported, "MLX5_1.8");
/* FAKE_MLX5_OLD: rdma-core before v54, no MLX5_1.25 node. */
#ifndef FAKE_MLX5_OLD
SYMVER(fake_get_data_direct_sysfs_path, mlx5dv_get_data_direct_sysfs_path,
       "MLX5_1.25");
SYMVER(fake_mlx5_reg_dmabuf_mr, mlx5dv_reg_dmabuf_mr, "MLX5_1.25");
#endif

static void __attribute__((constructor)) fake_mlx5_init(void)
{
	fake_scenario_load("FAKE_VERBS_SCENARIO");
}

/* The libibverbs double's index of a device, by name; -1 unknown. */
static int dev_idx(const struct ibv_device *dev)
{
	int n = (int)fake_get_ll("device_count", 0);
	char dflt[32];

	if (!dev)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *name = fake_getf("dev%d.name", i);

		snprintf(dflt, sizeof(dflt), "mlx5_%d", i);
		if (!strcmp(dev->name, name ? name : dflt))
			return i;
	}
	return -1;
}

static int pd_idx(const struct ibv_pd *pd)
{
	return pd && pd->context ? dev_idx(pd->context->device) : -1;
}

#define FAULT_PTR(name, idx) do {					\
	long long v_;							\
	if (fake_fault(name, idx, &v_)) {				\
		errno = (int)v_;					\
		return NULL;						\
	}								\
} while (0)

bool fake_is_supported(struct ibv_device *dev)
{
	int i = dev_idx(dev);
	long long v;

	if (fake_fault("mlx5dv_is_supported", i, &v))
		return v == 0;
	return i >= 0 && fake_getf_ll(1, "dev%d.mlx5", i) != 0;
}

int fake_get_data_direct_sysfs_path(struct ibv_context *ctx, char *buf,
				    size_t len)
{
	int i = ctx ? dev_idx(ctx->device) : -1;
	const char *path;
	long long v;

	/* The call returns the errno (rdma-core's man page). */
	if (fake_fault("mlx5dv_get_data_direct_sysfs_path", i, &v))
		return (int)v;
	if (i < 0 || !buf)
		return EINVAL;
	v = fake_getf_ll(0, "dev%d.dd_path_rc", i);
	if (v)
		return (int)v;
	path = fake_getf("dev%d.dd_path", i);
	if (!path)
		return ENODEV;
	if (strlen(path) >= len)
		return ENOSPC;
	snprintf(buf, len, "%s", path);
	return 0;
}

typedef struct ibv_mr *(*reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t,
					uint64_t, int, int);

struct ibv_mr *fake_mlx5_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				       size_t len, uint64_t iova, int fd,
				       int access, int mlx5_access)
{
	int i = pd_idx(pd);
	reg_dmabuf_fn reg;
	void *verbs, *sym;
	long long e;

	FAULT_PTR("mlx5dv_reg_dmabuf_mr", i);
	if (i < 0 || (mlx5_access & ~DD_ACCESS)) {
		errno = EINVAL;
		return NULL;
	}
	if (fd < 0) {
		errno = (int)fake_getf_ll(EBADF, "dev%d.dd_probe_errno", i);
		return NULL;
	}
	if ((mlx5_access & DD_ACCESS) && !fake_getf("dev%d.dd_path", i)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	e = fake_getf_ll(0, "dev%d.dd_reg_errno", i);
	if (e) {
		errno = (int)e;
		return NULL;
	}
	verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!verbs) {
		fprintf(stderr, "fake libmlx5: libibverbs is not loaded\n");
		errno = ENOSYS;
		return NULL;
	}
	sym = dlvsym(verbs, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	/* Drops only the reference NOLOAD took. */
	dlclose(verbs);
	if (!sym) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memcpy(&reg, &sym, sizeof(reg));
	return reg(pd, offset, len, iova, fd, access);
}
