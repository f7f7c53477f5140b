// SPDX-License-Identifier: MIT
/*
 * Smoke test of the libcuda/libibverbs doubles, loaded the way gdrcheck
 * loads the real ones (dlopen RTLD_NOW|RTLD_LOCAL, dlsym / dlvsym). The
 * scenario is read when a double is loaded, so every case runs in its own
 * forked child with its own scenario file.
 *
 * usage: selftest DOUBLES_DIR WORK_DIR
 *   DOUBLES_DIR holds libcuda-fake.so, libibverbs-fake.so,
 *   libibverbs-fake-old.so, libmlx5-fake.so and libmlx5-fake-old.so;
 *   scenarios and ledgers go to WORK_DIR.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decode/cuda_api.h"

#define CUDA_ERROR_INVALID_CONTEXT 201

/* CU(h, name) wants name##_fn; these exports carry a _v2 suffix. */
typedef cuDeviceTotalMem_fn cuDeviceTotalMem_v2_fn;
typedef cuMemAlloc_fn cuMemAlloc_v2_fn;
typedef cuMemFree_fn cuMemFree_v2_fn;
typedef cuDevicePrimaryCtxRelease_fn cuDevicePrimaryCtxRelease_v2_fn;
typedef CUresult (*cuMemcpyHtoD_fn)(CUdeviceptr dst, const void *src,
				    size_t n);
typedef CUresult (*cuMemcpyDtoH_fn)(void *dst, CUdeviceptr src, size_t n);
/* <infiniband/verbs.h> declares the export with an opaque compat struct. */
typedef int (*query_port_fn)(struct ibv_context *ctx, uint8_t port,
			     struct ibv_port_attr *attr);

static const char *dir;
static char tmpdir[4096];
static int fails;	/* per child */

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
		fails++;						\
	}								\
} while (0)

static void *load(const char *name)
{
	char path[4200];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "  dlopen %s: %s\n", path, dlerror());
		exit(2);
	}
	return h;
}

/* A missing symbol ends the case: later checks would only crash. */
static void *must(void *h, const char *name, const char *ver)
{
	void *p = ver ? dlvsym(h, name, ver) : dlsym(h, name);

	if (!p) {
		fprintf(stderr, "  missing %s@%s\n", name, ver ? ver : "");
		exit(2);
	}
	return p;
}

#define CU(h, n)	((n##_fn)must(h, #n, NULL))
#define CUV(h, n, t)	((t)must(h, n, NULL))
#define IBV(h, n)	((__typeof__(&n))must(h, #n, "IBVERBS_1.1"))
#define QPORT(h)	((query_port_fn)must(h, "ibv_query_port", "IBVERBS_1.1"))

/* Does this process's ledger file hold the line "name acquired released"? */
static bool ledger_has(const char *tag, const char *line)
{
	char path[4200], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%d", tmpdir, tag, (int)getpid());
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		if (!strcmp(l, line))
			return true;
	fprintf(stderr, "  ledger %s lacks '%s'\n", path, line);
	return false;
}

/* --- libcuda cases ---------------------------------------------------- */

static void cuda_basic(void)
{
	void *h = load("libcuda-fake.so");
	const char *s = NULL;
	char buf[64];
	size_t mem = 0;
	int n = -1, v = -1;
	CUdevice d;

	CHECK(CU(h, cuDeviceGetCount)(&n) == CUDA_ERROR_NOT_INITIALIZED);
	CHECK(CU(h, cuDriverGetVersion)(&v) == 0 && v == 12040);
	CHECK(CU(h, cuInit)(0) == 0);
	CHECK(CU(h, cuDeviceGetCount)(&n) == 0 && n == 2);
	CHECK(CU(h, cuDeviceGet)(&d, 2) == CUDA_ERROR_INVALID_DEVICE);
	CHECK(CU(h, cuDeviceGet)(&d, 1) == 0 && d == 1);
	CHECK(CU(h, cuDeviceGetName)(buf, sizeof(buf), 1) == 0 &&
	      !strcmp(buf, "NVIDIA H200"));
	CHECK(CU(h, cuDeviceGetName)(buf, sizeof(buf), 0) == 0 &&
	      !strcmp(buf, "Fake GPU"));
	CHECK(CU(h, cuDeviceGetPCIBusId)(buf, sizeof(buf), 1) == 0 &&
	      !strcmp(buf, "00000000:3B:00.0"));
	CHECK(CU(h, cuDeviceTotalMem_v2)(&mem, 0) == 0 &&
	      mem == 85899345920ull);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 75, 1) == 0 && v == 8);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 76, 1) == 0 && v == 9);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 124, 1) == 0 && v == 0);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 118, 0) == 0 && v == 100);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 1, 0) == 0 && v == 0);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 116, 1) == 801);
	CHECK(CU(h, cuGetErrorName)(801, &s) == 0 && s &&
	      !strcmp(s, "CUDA_ERROR_NOT_SUPPORTED"));
	CHECK(CU(h, cuGetErrorName)(12345, &s) == CUDA_ERROR_INVALID_VALUE &&
	      !s);
}

static void cuda_init_fail(void)
{
	void *h = load("libcuda-fake.so");
	int n;

	CHECK(CU(h, cuInit)(0) == 100);
	CHECK(CU(h, cuDeviceGetCount)(&n) == CUDA_ERROR_NOT_INITIALIZED);
}

static void cuda_fail(void)
{
	void *h = load("libcuda-fake.so");
	int v;

	CHECK(CU(h, cuInit)(0) == 0);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 75, 0) == 0 && v == 9);
	CHECK(CU(h, cuDeviceGetAttribute)(&v, 75, 1) == 999);
	CHECK(CU(h, cuDeviceGetCount)(&v) == 304);
}

static void cuda_crash(void)
{
	void *h = load("libcuda-fake.so");
	int n;

	CU(h, cuInit)(0);
	CU(h, cuDeviceGetCount)(&n);
}

static void cuda_call_init(void)
{
	CU(load("libcuda-fake.so"), cuInit)(0);
}

/* Retain, set, alloc 2 MiB on GPU 0; returns the pointer. */
static CUdeviceptr cuda_alloc(void *h)
{
	CUcontext ctx = NULL;
	CUdeviceptr p = 0;

	CHECK(CU(h, cuInit)(0) == 0);
	CHECK(CU(h, cuMemAlloc_v2)(&p, 4096) == CUDA_ERROR_INVALID_CONTEXT);
	CHECK(CU(h, cuDevicePrimaryCtxRetain)(&ctx, 0) == 0 && ctx);
	CHECK(CU(h, cuCtxSetCurrent)(ctx) == 0);
	CHECK(CU(h, cuMemAlloc_v2)(&p, 2u << 20) == 0 && p);
	CHECK(p % (2u << 20) == 0);
	return p;
}

static void cuda_release(void *h, CUdeviceptr p)
{
	CHECK(CU(h, cuMemFree_v2)(p) == 0);
	CHECK(CU(h, cuMemFree_v2)(p) == CUDA_ERROR_INVALID_VALUE);
	CHECK(CU(h, cuCtxSetCurrent)(NULL) == 0);
	CHECK(CU(h, cuDevicePrimaryCtxRelease_v2)(0) == 0);
	CHECK(CU(h, cuDevicePrimaryCtxRelease_v2)(0) == 201);
}

static void cuda_export_host(void)
{
	void *h = load("libcuda-fake.so");
	char in[64] = "hello", out[64] = "", link[256], path[64];
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1, v = 0;
	ssize_t n;

	memcpy((void *)(uintptr_t)p, "direct", 7);
	CHECK(CUV(h, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(p + 4096, in,
							sizeof(in)) == 0);
	CHECK(CUV(h, "cuMemcpyDtoH_v2", cuMemcpyDtoH_fn)(out, p + 4096,
							sizeof(out)) == 0);
	CHECK(!strcmp(out, "hello"));
	CHECK(CU(h, cuPointerGetAttribute)(&v, 15, p) == 0 && v == 1);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p + 1, 4096, 1, 0) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 4096, 2, 0) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 4096, 1, 1) ==
	      CUDA_ERROR_NOT_SUPPORTED);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 4u << 20, 1, 0) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1, 0) ==
	      0 && fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	CHECK(!strncmp(link, "/memfd:fake-dmabuf", 18));
	CHECK(lseek(fd, 0, SEEK_END) == 2 << 20);
	close(fd);
	cuda_release(h, p);
	CHECK(ledger_has("cuda", "ctx 1 1"));
	CHECK(ledger_has("cuda", "mem 1 1"));
	/* Closed before cuMemFree: the double counts it released. */
	CHECK(ledger_has("cuda", "fd 1 1"));
}

static void cuda_export_fails(void)
{
	void *h = load("libcuda-fake.so");
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1;

	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 4096, 1, 0) ==
	      801);
	cuda_release(h, p);
}

/* Unmapped memory: the kernel cannot touch it, neither can verbs. */
static void cuda_unmapped(void)
{
	void *h = load("libcuda-fake.so"), *v = load("libibverbs-fake.so");
	char out[8] = "";
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	CUdeviceptr p = cuda_alloc(h);
	int fds[2];

	CHECK(pipe(fds) == 0);
	errno = 0;
	CHECK(write(fds[1], (void *)(uintptr_t)p, 1) < 0 && errno == EFAULT);
	CHECK(write(fds[1], (void *)(uintptr_t)(p + (2u << 20) - 1), 1) < 0);
	CHECK(CUV(h, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(p, "abc", 4) == 0);
	CHECK(CUV(h, "cuMemcpyDtoH_v2", cuMemcpyDtoH_fn)(out, p, 4) == 0);
	CHECK(!strcmp(out, "abc"));

	list = IBV(v, ibv_get_device_list)(NULL);
	CHECK(list && list[0]);
	ctx = IBV(v, ibv_open_device)(list[0]);
	pd = ctx ? IBV(v, ibv_alloc_pd)(ctx) : NULL;
	CHECK(pd);
	errno = 0;
	mr = IBV(v, ibv_reg_mr)(pd, (void *)(uintptr_t)p, 2u << 20, 0);
	CHECK(!mr && errno == EFAULT);
	mr = IBV(v, ibv_reg_mr)(pd, out, sizeof(out), 0);
	CHECK(mr);
	CHECK(IBV(v, ibv_dereg_mr)(mr) == 0);
	CHECK(IBV(v, ibv_dealloc_pd)(pd) == 0);
	CHECK(IBV(v, ibv_close_device)(ctx) == 0);
	IBV(v, ibv_free_device_list)(list);
	cuda_release(h, p);
	CHECK(ledger_has("cuda", "mem 1 1"));
	CHECK(ledger_has("verbs", "mr 1 1"));
}

/* Both doubles in one process, the exported memfd registered as dma-buf. */
static void cuda_to_verbs(void)
{
	void *h = load("libcuda-fake.so"), *v = load("libibverbs-fake.so");
	__typeof__(&ibv_reg_dmabuf_mr) reg = (__typeof__(&ibv_reg_dmabuf_mr))
		must(v, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	struct ibv_device **list = IBV(v, ibv_get_device_list)(NULL);
	struct ibv_context *c0, *c1;
	struct ibv_pd *pd0, *pd1;
	struct ibv_mr *mr;
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1;

	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1, 0) ==
	      0);
	c0 = IBV(v, ibv_open_device)(list[0]);
	c1 = IBV(v, ibv_open_device)(list[1]);
	pd0 = IBV(v, ibv_alloc_pd)(c0);
	pd1 = IBV(v, ibv_alloc_pd)(c1);
	mr = reg(pd0, 0, 2u << 20, p, fd, 0);
	CHECK(mr && mr->length == 2u << 20);
	errno = 0;
	CHECK(!reg(pd0, 4096, 2u << 20, p, fd, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!reg(pd1, 0, 4096, p, fd, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!reg(pd0, 0, 4096, p, 1000, 0) && errno == EBADF);
	CHECK(IBV(v, ibv_dealloc_pd)(pd0) == EBUSY);
	CHECK(IBV(v, ibv_dereg_mr)(mr) == 0);
	CHECK(IBV(v, ibv_dealloc_pd)(pd0) == 0);
	CHECK(IBV(v, ibv_dealloc_pd)(pd1) == 0);
	IBV(v, ibv_close_device)(c0);
	IBV(v, ibv_close_device)(c1);
	IBV(v, ibv_free_device_list)(list);
	close(fd);
	cuda_release(h, p);
	CHECK(ledger_has("verbs", "devlist 1 1"));
	CHECK(ledger_has("verbs", "device 2 2"));
	CHECK(ledger_has("verbs", "pd 2 2"));
	CHECK(ledger_has("verbs", "mr 1 1"));
}

/* --- libmlx5 (Data Direct) cases ---------------------------------------- */

typedef bool (*mlx5_is_supported_fn)(struct ibv_device *dev);
typedef int (*mlx5_dd_path_fn)(struct ibv_context *ctx, char *buf,
			       size_t len);
typedef struct ibv_mr *(*mlx5_reg_fn)(struct ibv_pd *pd, uint64_t offset,
				      size_t len, uint64_t iova, int fd,
				      int access, int mlx5_access);

#define DD_PATH "/devices/pci0008:00/0008:00:00.0/0008:04:00.0"

/*
 * The PCIe-mapped export (gpu0.pcie_mapping = 1, driver 12.8) registered
 * through mlx5dv_reg_dmabuf_mr(DATA_DIRECT) on device 0 (dev0.dd_path),
 * refused on device 1 (no Data Direct function); the MR is a libibverbs
 * double MR (ibv_dereg_mr, ledger).
 */
static void cuda_to_mlx5(void)
{
	void *h = load("libcuda-fake.so"), *v = load("libibverbs-fake.so");
	void *m = load("libmlx5-fake.so");
	mlx5_is_supported_fn sup = (mlx5_is_supported_fn)must(m,
		"mlx5dv_is_supported", "MLX5_1.8");
	mlx5_dd_path_fn path = (mlx5_dd_path_fn)must(m,
		"mlx5dv_get_data_direct_sysfs_path", "MLX5_1.25");
	mlx5_reg_fn reg = (mlx5_reg_fn)must(m, "mlx5dv_reg_dmabuf_mr",
					    "MLX5_1.25");
	struct ibv_device **list = IBV(v, ibv_get_device_list)(NULL);
	struct ibv_context *c0, *c1;
	struct ibv_pd *pd0, *pd1;
	struct ibv_mr *mr;
	CUdeviceptr p = cuda_alloc(h);
	char buf[128], tiny[8];
	int fd = -1;

	/* Unknown flag bits: INVALID_VALUE; the PCIe flag: taken. */
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1, 2) ==
	      CUDA_ERROR_INVALID_VALUE);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1,
		CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) == 0 && fd >= 0);
	CHECK(sup(list[0]) && sup(list[1]));
	c0 = IBV(v, ibv_open_device)(list[0]);
	c1 = IBV(v, ibv_open_device)(list[1]);
	CHECK(path(c0, buf, sizeof(buf)) == 0 && !strcmp(buf, DD_PATH));
	CHECK(path(c0, tiny, sizeof(tiny)) == ENOSPC);
	CHECK(path(c1, buf, sizeof(buf)) == ENODEV);
	pd0 = IBV(v, ibv_alloc_pd)(c0);
	pd1 = IBV(v, ibv_alloc_pd)(c1);
	errno = 0;
	CHECK(!reg(pd0, 0, 0, 0, -1, 0, 0) && errno == EBADF);
	errno = 0;
	CHECK(!reg(pd0, 0, 2u << 20, p, fd, IBV_ACCESS_LOCAL_WRITE, 2) &&
	      errno == EINVAL);
	errno = 0;
	CHECK(!reg(pd1, 0, 2u << 20, p, fd, IBV_ACCESS_LOCAL_WRITE, 1) &&
	      errno == EOPNOTSUPP);
	mr = reg(pd0, 0, 2u << 20, p, fd, IBV_ACCESS_LOCAL_WRITE, 1);
	CHECK(mr && mr->length == 2u << 20);
	CHECK(IBV(v, ibv_dereg_mr)(mr) == 0);
	CHECK(IBV(v, ibv_dealloc_pd)(pd0) == 0);
	CHECK(IBV(v, ibv_dealloc_pd)(pd1) == 0);
	IBV(v, ibv_close_device)(c0);
	IBV(v, ibv_close_device)(c1);
	IBV(v, ibv_free_device_list)(list);
	close(fd);
	cuda_release(h, p);
	CHECK(ledger_has("verbs", "mr 1 1"));
}

/* A GPU without pcie_mapping answers the flag 801 (as the H200 did); a
 * driver before 12.8, INVALID_VALUE. */
static void cuda_pcie_refused(void)
{
	void *h = load("libcuda-fake.so");
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1;

	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1,
		CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) ==
	      CUDA_ERROR_NOT_SUPPORTED);
	CHECK(fd == -1);
	cuda_release(h, p);
}

static void cuda_pcie_old_driver(void)
{
	void *h = load("libcuda-fake.so");
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1;

	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p, 2u << 20, 1,
		CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) ==
	      CUDA_ERROR_INVALID_VALUE);
	cuda_release(h, p);
}

/* rdma-core before v54: mlx5dv_is_supported only. */
static void mlx5_symbols_old(void)
{
	void *m = load("libmlx5-fake-old.so");

	CHECK(dlvsym(m, "mlx5dv_is_supported", "MLX5_1.8"));
	CHECK(!dlvsym(m, "mlx5dv_get_data_direct_sysfs_path", "MLX5_1.25"));
	CHECK(!dlvsym(m, "mlx5dv_reg_dmabuf_mr", "MLX5_1.25"));
	CHECK(!dlsym(m, "mlx5dv_reg_dmabuf_mr"));
	CHECK(!dlsym(m, "fake_is_supported"));
}

/* --- libibverbs cases ------------------------------------------------- */

static const char *const v11[] = {
	"ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name",
	"ibv_open_device", "ibv_close_device", "ibv_query_device",
	"ibv_query_port", "ibv_query_gid", "ibv_alloc_pd", "ibv_dealloc_pd",
	"ibv_reg_mr", "ibv_dereg_mr", "ibv_create_cq", "ibv_destroy_cq",
	"ibv_create_qp", "ibv_destroy_qp", "ibv_modify_qp",
};

static void verbs_symbols(const char *lib, bool old)
{
	void *h = load(lib);

	for (size_t i = 0; i < sizeof(v11) / sizeof(v11[0]); i++)
		CHECK(dlvsym(h, v11[i], "IBVERBS_1.1"));
	CHECK(dlvsym(h, "ibv_reg_mr_iova2", "IBVERBS_1.8"));
	CHECK(dlvsym(h, "_ibv_query_gid_ex", "IBVERBS_1.11"));
	CHECK(!dlvsym(h, "ibv_reg_mr_iova2", "IBVERBS_1.1"));
	CHECK(!dlsym(h, "fake_get_device_list"));
	CHECK(!dlsym(h, "fake_get"));
	if (old) {
		CHECK(!dlvsym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12"));
		CHECK(!dlsym(h, "ibv_reg_dmabuf_mr"));
	} else {
		CHECK(dlvsym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12"));
	}
}

static void verbs_symbols_new(void)
{
	verbs_symbols("libibverbs-fake.so", false);
}

static void verbs_symbols_old(void)
{
	verbs_symbols("libibverbs-fake-old.so", true);
}

static void cuda_symbols(void)
{
	void *h = load("libcuda-fake.so");

	CHECK(!dlsym(h, "fake_get"));
	CHECK(!dlsym(h, "fake_fault"));
	CHECK(dlsym(h, "cuMemcpyHtoD_v2") && dlsym(h, "cuGetErrorString"));
}

static void verbs_flow(void)
{
	void *h = load("libibverbs-fake.so");
	__typeof__(&ibv_reg_dmabuf_mr) reg = (__typeof__(&ibv_reg_dmabuf_mr))
		must(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	__typeof__(&_ibv_query_gid_ex) gidex = (__typeof__(&_ibv_query_gid_ex))
		must(h, "_ibv_query_gid_ex", "IBVERBS_1.11");
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTR };
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	static char buf[8192];
	int n = -1;

	list = IBV(h, ibv_get_device_list)(&n);
	CHECK(list && n == 2 && !list[2]);
	CHECK(!strcmp(IBV(h, ibv_get_device_name)(list[0]), "mlx5_0"));
	CHECK(!strcmp(IBV(h, ibv_get_device_name)(list[1]), "rocep1s0"));
	errno = 0;
	CHECK(!IBV(h, ibv_open_device)(list[1]) && errno == ENODEV);
	ctx = IBV(h, ibv_open_device)(list[0]);
	CHECK(ctx && ctx->device == list[0]);
	CHECK(IBV(h, ibv_query_device)(ctx, &da) == 0 &&
	      da.phys_port_cnt == 2);
	CHECK(QPORT(h)(ctx, 2, &pa) == 0 && pa.state == 1 &&
	      pa.link_layer == IBV_LINK_LAYER_INFINIBAND);
	CHECK(QPORT(h)(ctx, 1, &pa) == 0 &&
	      pa.state == IBV_PORT_ACTIVE &&
	      pa.link_layer == IBV_LINK_LAYER_ETHERNET);
	CHECK(QPORT(h)(ctx, 3, &pa) == EINVAL);
	CHECK(gidex(ctx, 1, 0, &ge, 0, sizeof(ge)) == 0 &&
	      ge.gid_type == IBV_GID_TYPE_ROCE_V2 && ge.gid.raw[0] == 0xfe);
	CHECK(gidex(ctx, 1, 3, &ge, 0, sizeof(ge)) == 0 &&
	      ge.gid.raw[10] == 0xff && ge.gid.raw[15] == 5);
	/* Ethernet: gid1 is the RoCE v2 GID ::ffff:10.0.I.P by default. */
	CHECK(gidex(ctx, 1, 1, &ge, 0, sizeof(ge)) == 0 &&
	      ge.gid.raw[10] == 0xff && ge.gid.raw[12] == 10 &&
	      ge.gid.raw[14] == 0 && ge.gid.raw[15] == 1);
	CHECK(gidex(ctx, 1, 2, &ge, 0, sizeof(ge)) == ENODATA);
	CHECK(gidex(ctx, 2, 1, &ge, 0, sizeof(ge)) == ENODATA);	/* IB */
	pd = IBV(h, ibv_alloc_pd)(ctx);
	CHECK(pd);
	errno = 0;
	CHECK(!reg(pd, 0, 0, 0, -1, 0) && errno == EBADF);
	mr = IBV(h, ibv_reg_mr)(pd, buf, sizeof(buf), 0);
	CHECK(mr && mr->addr == buf && mr->lkey);
	CHECK(IBV(h, ibv_dealloc_pd)(pd) == EBUSY);
	cq = IBV(h, ibv_create_cq)(ctx, 16, NULL, NULL, 0);
	CHECK(cq);
	init.send_cq = init.recv_cq = cq;
	qp = IBV(h, ibv_create_qp)(pd, &init);
	CHECK(qp && qp->state == IBV_QPS_RESET);
	CHECK(IBV(h, ibv_modify_qp)(qp, &qa, IBV_QP_STATE) == EINVAL);
	qa.qp_state = IBV_QPS_INIT;
	/* RESET -> INIT needs PKEY_INDEX | PORT | ACCESS_FLAGS. */
	CHECK(IBV(h, ibv_modify_qp)(qp, &qa, IBV_QP_STATE) == EINVAL);
	qa.port_num = 3;
	CHECK(IBV(h, ibv_modify_qp)(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
	qa.port_num = 1;
	CHECK(IBV(h, ibv_modify_qp)(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	CHECK(qp->state == IBV_QPS_INIT);
	CHECK(IBV(h, ibv_destroy_cq)(cq) == EBUSY);
	{
		struct ibv_sge sg = { (uintptr_t)buf, 8, mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE }, *bad;

		CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
	}
	CHECK(IBV(h, ibv_destroy_qp)(qp) == 0);
	CHECK(IBV(h, ibv_destroy_cq)(cq) == 0);
	CHECK(IBV(h, ibv_dereg_mr)(mr) == 0);
	CHECK(IBV(h, ibv_dealloc_pd)(pd) == 0);
	CHECK(IBV(h, ibv_close_device)(ctx) == 0);
	IBV(h, ibv_free_device_list)(list);
	CHECK(ledger_has("verbs", "devlist 1 1"));
	CHECK(ledger_has("verbs", "device 1 1"));
	CHECK(ledger_has("verbs", "pd 1 1"));
	CHECK(ledger_has("verbs", "mr 1 1"));
	CHECK(ledger_has("verbs", "cq 1 1"));
	CHECK(ledger_has("verbs", "qp 1 1"));
}

static void verbs_fail(void)
{
	void *h = load("libibverbs-fake.so");
	__typeof__(&ibv_reg_dmabuf_mr) reg = (__typeof__(&ibv_reg_dmabuf_mr))
		must(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	struct ibv_device **list = IBV(h, ibv_get_device_list)(NULL);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	errno = 0;
	CHECK(!IBV(h, ibv_open_device)(list[0]) && errno == EACCES);
	ctx = IBV(h, ibv_open_device)(list[1]);
	CHECK(ctx);
	pd = IBV(h, ibv_alloc_pd)(ctx);
	mr = reg(pd, 0, 0, 0, -1, 0);
	CHECK(mr);	/* dmabuf_errno = 0: weird but possible */
	CHECK(IBV(h, ibv_dereg_mr)(mr) == 0);
	CHECK(IBV(h, ibv_dealloc_pd)(pd) == EIO);
	CHECK(ledger_has("verbs", "pd 1 0"));
	CHECK(ledger_has("verbs", "mr 1 1"));
}

static void verbs_list_errno(void)
{
	void *h = load("libibverbs-fake.so");

	errno = 0;
	CHECK(!IBV(h, ibv_get_device_list)(NULL) && errno == ENOSYS);
}

static void verbs_dmabuf_unsupported(void)
{
	void *h = load("libibverbs-fake.so");
	__typeof__(&ibv_reg_dmabuf_mr) reg = (__typeof__(&ibv_reg_dmabuf_mr))
		must(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	struct ibv_device **list = IBV(h, ibv_get_device_list)(NULL);
	struct ibv_context *ctx = IBV(h, ibv_open_device)(list[0]);
	struct ibv_pd *pd = IBV(h, ibv_alloc_pd)(ctx);

	errno = 0;
	CHECK(!reg(pd, 0, 0, 0, -1, 0) && errno == EOPNOTSUPP);
}

static void verbs_crash(void)
{
	IBV(load("libibverbs-fake.so"), ibv_get_device_list)(NULL);
}

static void verbs_hang(void)
{
	void *h = load("libibverbs-fake.so");
	struct ibv_device **list = IBV(h, ibv_get_device_list)(NULL);

	IBV(h, ibv_open_device)(list[1]);	/* only device 1 hangs */
	fprintf(stderr, "  device 1 did not hang\n");
	exit(1);
}

/* --- data path: a loopback RC QP over both doubles -------------------- */

#define DP_BYTES	65536u
#define DP_DMABUF_OFF	(128u << 10)	/* where the dma-buf MR starts */
#define DP_HOST_IOVA	0x10000000ull	/* iova2 MR of the host buffer */
#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)
#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
		   IBV_QP_ACCESS_FLAGS)
#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

typedef CUresult (*export_fn)(void *handle, CUdeviceptr ptr, size_t size,
			      int type, unsigned long long flags);

struct dp {
	void *v, *c;			/* the two doubles */
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int gid_index;			/* -1: InfiniBand, LID only */
	CUdeviceptr gpu;		/* 2 MiB */
	struct ibv_mr *hmr;		/* ibv_reg_mr of hostbuf */
	struct ibv_mr *dmr;		/* dma-buf MR at gpu + DP_DMABUF_OFF */
};

/* src = hostbuf[0, DP_BYTES), dst = the next DP_BYTES. */
static char hostbuf[2 * DP_BYTES] __attribute__((aligned(4096)));
static char check[DP_BYTES];

static void fill(char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed * 13 + (i >> 8));
}

/* Both doubles, device 0 port 1, PD, GPU buffer, host MR, dma-buf MR. */
static void dp_open(struct dp *d)
{
	__typeof__(&ibv_reg_dmabuf_mr) reg;
	int fd = -1;

	memset(d, 0, sizeof(*d));
	d->c = load("libcuda-fake.so");
	d->v = load("libibverbs-fake.so");
	reg = (__typeof__(&ibv_reg_dmabuf_mr))must(d->v, "ibv_reg_dmabuf_mr",
						   "IBVERBS_1.12");
	d->list = IBV(d->v, ibv_get_device_list)(NULL);
	if (!d->list || !d->list[0])
		exit(2);
	d->ctx = IBV(d->v, ibv_open_device)(d->list[0]);
	d->pd = d->ctx ? IBV(d->v, ibv_alloc_pd)(d->ctx) : NULL;
	if (!d->pd)
		exit(2);
	CHECK(QPORT(d->v)(d->ctx, 1, &d->pa) == 0);
	d->gid_index = -1;
	if (d->pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		CHECK(d->pa.lid == 0);
		d->gid_index = 1;
		CHECK(IBV(d->v, ibv_query_gid)(d->ctx, 1, 1, &d->gid) == 0);
		CHECK(d->gid.raw[10] == 0xff && d->gid.raw[11] == 0xff &&
		      d->gid.raw[12] == 10 && d->gid.raw[15] == 1);
	} else {
		CHECK(d->pa.lid == 1);
	}
	d->gpu = cuda_alloc(d->c);
	d->hmr = IBV(d->v, ibv_reg_mr)(d->pd, hostbuf, sizeof(hostbuf),
				       ACC_ALL);
	CHECK(d->hmr);
	CHECK(CU(d->c, cuMemGetHandleForAddressRange)(&fd, d->gpu, 2u << 20,
						      1, 0) == 0 && fd >= 0);
	errno = 0;
	CHECK(!reg(d->pd, DP_DMABUF_OFF, DP_BYTES, d->gpu + DP_DMABUF_OFF + 64,
		   fd, ACC_ALL) && errno == EINVAL);
	d->dmr = reg(d->pd, DP_DMABUF_OFF, DP_BYTES, d->gpu + DP_DMABUF_OFF,
		     fd, ACC_ALL);
	/* The MR keeps the memory: the fd goes at once, as gdrcheck does. */
	close(fd);
	CHECK(d->dmr && d->dmr->addr == (void *)(uintptr_t)DP_DMABUF_OFF &&
	      d->dmr->length == DP_BYTES);
	if (!d->hmr || !d->dmr)
		exit(1);
}

static void dp_create(struct dp *d, uint32_t max_send_wr)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };

	d->cq = IBV(d->v, ibv_create_cq)(d->ctx, 16, NULL, NULL, 0);
	CHECK(d->cq);
	init.send_cq = init.recv_cq = d->cq;
	init.cap.max_send_wr = max_send_wr;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 1;
	d->qp = IBV(d->v, ibv_create_qp)(d->pd, &init);
	CHECK(d->qp && d->qp->state == IBV_QPS_RESET);
	if (!d->cq || !d->qp)
		exit(1);
}

static int modify(struct dp *d, struct ibv_qp_attr *a, int mask)
{
	return IBV(d->v, ibv_modify_qp)(d->qp, a, mask);
}

static void attr_init(struct ibv_qp_attr *a, unsigned int access)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->port_num = 1;
	a->qp_access_flags = access;
}

/* gdrcheck's RTR: addressed to itself; @dqpn / @dlid added as faults. */
static void attr_rtr(struct dp *d, struct ibv_qp_attr *a, uint32_t dqpn,
		     uint16_t dlid)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = d->pa.active_mtu;
	a->dest_qp_num = d->qp->qp_num + dqpn;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.port_num = 1;
	a->ah_attr.dlid = (uint16_t)(d->pa.lid + dlid);
	if (d->gid_index >= 0) {
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = d->gid;
		a->ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
		a->ah_attr.grh.hop_limit = 1;
	}
}

static void attr_rts(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = 1;
}

/* RESET -> INIT -> RTR -> RTS. */
static void dp_connect(struct dp *d, unsigned int access, uint32_t dqpn,
		       uint16_t dlid)
{
	struct ibv_qp_attr a;

	attr_init(&a, access);
	CHECK(modify(d, &a, INIT_MASK) == 0);
	attr_rtr(d, &a, dqpn, dlid);
	CHECK(modify(d, &a, RTR_MASK) == 0);
	attr_rts(&a);
	CHECK(modify(d, &a, RTS_MASK) == 0);
	CHECK(d->qp->state == IBV_QPS_RTS);
}

static int post(struct dp *d, enum ibv_wr_opcode op, uint64_t local,
		uint32_t lkey, uint64_t remote, uint32_t rkey, uint32_t len,
		unsigned int flags, uint64_t id)
{
	struct ibv_sge sg = { .addr = local, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	int rc;

	wr.wr_id = id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	rc = ibv_post_send(d->qp, &wr, &bad);
	CHECK(rc ? bad == &wr : bad == NULL);
	return rc;
}

/* Poll up to @ms for one completion; returns what poll_cq returned last. */
static int poll1(struct dp *d, struct ibv_wc *wc, int ms)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int n = 0;

	memset(wc, 0, sizeof(*wc));
	for (int i = 0; i <= ms; i++) {
		n = ibv_poll_cq(d->cq, 1, wc);
		if (n)
			break;
		nanosleep(&ts, NULL);
	}
	return n;
}

static bool wc_is(struct dp *d, const struct ibv_wc *wc, uint64_t id,
		  enum ibv_wc_status st, enum ibv_wc_opcode op)
{
	bool ok = wc->wr_id == id && wc->status == st &&
		  wc->qp_num == d->qp->qp_num &&
		  (st != IBV_WC_SUCCESS || wc->opcode == op);

	if (!ok)
		fprintf(stderr, "  wc: wr_id %llu status %d opcode %d, "
			"want %llu %d\n", (unsigned long long)wc->wr_id,
			wc->status, wc->opcode, (unsigned long long)id, st);
	return ok;
}

static bool dtoh_is(struct dp *d, CUdeviceptr p, const char *want)
{
	return CUV(d->c, "cuMemcpyDtoH_v2", cuMemcpyDtoH_fn)(check, p,
							    DP_BYTES) == 0 &&
	       !memcmp(check, want, DP_BYTES);
}

/*
 * WRITE hostbuf -> @remote (in @rmr), check with cuMemcpyDtoH at @dev,
 * READ it back into the second half of hostbuf, check.
 */
static void roundtrip(struct dp *d, struct ibv_mr *rmr, uint64_t remote,
		      CUdeviceptr dev, unsigned int seed)
{
	char *src = hostbuf, *dst = hostbuf + DP_BYTES;
	struct ibv_wc wc;

	fill(src, DP_BYTES, seed);
	memset(dst, 0, DP_BYTES);
	CHECK(post(d, IBV_WR_RDMA_WRITE, (uintptr_t)src, d->hmr->lkey, remote,
		   rmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, seed) == 0);
	CHECK(poll1(d, &wc, 100) == 1 &&
	      wc_is(d, &wc, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE) &&
	      wc.byte_len == DP_BYTES);
	CHECK(dtoh_is(d, dev, src));
	CHECK(post(d, IBV_WR_RDMA_READ, (uintptr_t)dst, d->hmr->lkey, remote,
		   rmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, seed + 1) == 0);
	CHECK(poll1(d, &wc, 100) == 1 &&
	      wc_is(d, &wc, seed + 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ) &&
	      wc.byte_len == DP_BYTES);
	CHECK(!memcmp(dst, src, DP_BYTES));
	CHECK(ibv_poll_cq(d->cq, 1, &wc) == 0);
}

static void dp_reset(struct dp *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	CHECK(modify(d, &a, IBV_QP_STATE) == 0);
	CHECK(d->qp->state == IBV_QPS_RESET);
}

/* Tear everything down and check both ledgers balance. */
static void dp_close(struct dp *d, int nmr)
{
	char line[32];

	if (d->qp) {
		CHECK(IBV(d->v, ibv_destroy_cq)(d->cq) == EBUSY);
		CHECK(IBV(d->v, ibv_destroy_qp)(d->qp) == 0);
	}
	if (d->cq)
		CHECK(IBV(d->v, ibv_destroy_cq)(d->cq) == 0);
	CHECK(IBV(d->v, ibv_dereg_mr)(d->hmr) == 0);
	CHECK(IBV(d->v, ibv_dereg_mr)(d->dmr) == 0);
	CHECK(IBV(d->v, ibv_dealloc_pd)(d->pd) == 0);
	CHECK(IBV(d->v, ibv_close_device)(d->ctx) == 0);
	IBV(d->v, ibv_free_device_list)(d->list);
	cuda_release(d->c, d->gpu);
	snprintf(line, sizeof(line), "mr %d %d", nmr, nmr);
	CHECK(ledger_has("verbs", line));
	CHECK(ledger_has("verbs", "pd 1 1"));
	CHECK(ledger_has("verbs", "device 1 1"));
	if (d->qp) {
		CHECK(ledger_has("verbs", "cq 1 1"));
		CHECK(ledger_has("verbs", "qp 1 1"));
	}
	CHECK(ledger_has("cuda", "mem 1 1"));
	CHECK(ledger_has("cuda", "fd 1 1"));
}

/* RoCE port: GRH with the RoCE v2 GID; host MR, GPU ibv_reg_mr, dma-buf. */
static void dp_roce(void)
{
	struct ibv_sge sg[2];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_qp_attr a;
	struct ibv_mr *gmr;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	CHECK(d.gid_index == 1);
	/* mem = host: the GPU pointer registers like host memory. */
	gmr = IBV(d.v, ibv_reg_mr)(d.pd, (void *)(uintptr_t)d.gpu, DP_BYTES,
				   ACC_ALL);
	CHECK(gmr);
	errno = 0;
	CHECK(!IBV(d.v, ibv_reg_mr)(d.pd, hostbuf, 4096,
				    IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL);
	dp_create(&d, 4);

	/* The kernel's attribute rules, and no posting before RTS. */
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 8, IBV_SEND_SIGNALED, 1) == EINVAL);
	attr_init(&a, ACC_ALL);
	CHECK(modify(&d, &a, INIT_MASK & ~IBV_QP_ACCESS_FLAGS) == EINVAL);
	CHECK(modify(&d, &a, INIT_MASK | IBV_QP_TIMEOUT) == EINVAL);
	CHECK(modify(&d, &a, INIT_MASK) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 8, IBV_SEND_SIGNALED, 1) == EINVAL);
	attr_rtr(&d, &a, 0, 0);
	CHECK(modify(&d, &a, RTR_MASK & ~IBV_QP_MIN_RNR_TIMER) == EINVAL);
	CHECK(modify(&d, &a, RTR_MASK & ~IBV_QP_MAX_DEST_RD_ATOMIC) == EINVAL);
	a.ah_attr.is_global = 0;	/* RoCE without GRH */
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	attr_rtr(&d, &a, 0, 0);
	a.ah_attr.grh.sgid_index = 5;	/* an empty GID slot */
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	a.ah_attr.grh.sgid_index = 16;	/* past gid_tbl_len */
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	attr_rtr(&d, &a, 0, 0);
	a.ah_attr.port_num = 0;
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	attr_rtr(&d, &a, 0, 0);
	a.path_mtu = 0;
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	attr_rtr(&d, &a, 0, 0);
	CHECK(d.qp->state == IBV_QPS_INIT);
	CHECK(modify(&d, &a, RTR_MASK) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 8, IBV_SEND_SIGNALED, 1) == EINVAL);
	attr_rts(&a);
	CHECK(modify(&d, &a, RTS_MASK & ~IBV_QP_RETRY_CNT) == EINVAL);
	CHECK(modify(&d, &a, RTS_MASK) == 0);
	CHECK(ibv_poll_cq(d.cq, 1, &wc) == 0);

	/* GPU MR by ibv_reg_mr, then by dma-buf (iova = the GPU pointer). */
	roundtrip(&d, gmr, d.gpu, d.gpu, 1);
	roundtrip(&d, d.dmr, d.gpu + DP_DMABUF_OFF, d.gpu + DP_DMABUF_OFF, 3);
	/* mem = host: the pointer shows what came through the dma-buf. */
	CHECK(!memcmp((void *)(uintptr_t)(d.gpu + DP_DMABUF_OFF), hostbuf,
		      DP_BYTES));

	/* Two SGEs gathered into one remote range; unsignaled first. */
	fill(hostbuf, DP_BYTES, 5);
	sg[0] = (struct ibv_sge){ (uintptr_t)hostbuf, DP_BYTES / 4,
				  d.hmr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)hostbuf + DP_BYTES / 4,
				  DP_BYTES - DP_BYTES / 4, d.hmr->lkey };
	wr.wr_id = 10;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = d.gpu + DP_DMABUF_OFF;
	wr.wr.rdma.rkey = d.dmr->rkey;
	CHECK(ibv_post_send(d.qp, &wr, &bad) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 64, IBV_SEND_SIGNALED, 11) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 11, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
	CHECK(ibv_poll_cq(d.cq, 1, &wc) == 0);
	CHECK(dtoh_is(&d, d.gpu + DP_DMABUF_OFF, hostbuf));
	wr.num_sge = 3;			/* max_send_sge is 2 */
	CHECK(ibv_post_send(d.qp, &wr, &bad) == EINVAL && bad == &wr);

	/* A wrong rkey: REM_ACCESS_ERR, then the QP flushes. */
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey + 100, 64, IBV_SEND_SIGNALED, 20) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 20, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE));
	CHECK(d.qp->state == IBV_QPS_ERR);
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 64, 0, 21) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 21, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_READ));

	/* Out of the MR's range, after a reset. */
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 0, 0);
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu + DP_BYTES - 32, gmr->rkey, 64, IBV_SEND_SIGNALED,
		   30) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 30, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ));

	/* A dgid that is not this port's: the request goes nowhere. */
	dp_reset(&d);
	attr_init(&a, ACC_ALL);
	CHECK(modify(&d, &a, INIT_MASK) == 0);
	attr_rtr(&d, &a, 0, 0);
	a.ah_attr.grh.dgid.raw[15] ^= 0x80;
	CHECK(modify(&d, &a, RTR_MASK) == 0);
	attr_rts(&a);
	CHECK(modify(&d, &a, RTS_MASK) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu, gmr->rkey, 64, IBV_SEND_SIGNALED, 31) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 31, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE));

	CHECK(IBV(d.v, ibv_dereg_mr)(gmr) == 0);
	dp_close(&d, 3);
}

/* InfiniBand port: LID addressing; iova2 MR; the requester's checks. */
static void dp_ib(void)
{
	__typeof__(&ibv_reg_mr_iova2) iova2 = (__typeof__(&ibv_reg_mr_iova2))
		must(load("libibverbs-fake.so"), "ibv_reg_mr_iova2",
		     "IBVERBS_1.8");
	uint64_t remote;
	struct ibv_mr *imr, *romr;
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	CHECK(d.gid_index == -1 && d.pa.lid == 1);
	dp_create(&d, 4);
	/* Without a GRH on IB is fine; port_num must still be valid. */
	attr_init(&a, ACC_ALL);
	CHECK(modify(&d, &a, INIT_MASK) == 0);
	attr_rtr(&d, &a, 0, 0);
	a.ah_attr.port_num = 2;
	CHECK(modify(&d, &a, RTR_MASK) == EINVAL);
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 0, 0);
	roundtrip(&d, d.dmr, remote, remote, 40);

	/* READ into an iova2 MR: the local address is the iova. */
	errno = 0;
	CHECK(!iova2(d.pd, hostbuf + DP_BYTES, DP_BYTES, DP_HOST_IOVA + 8,
		     ACC_ALL) && errno == EINVAL);
	imr = iova2(d.pd, hostbuf + DP_BYTES, DP_BYTES, DP_HOST_IOVA, ACC_ALL);
	CHECK(imr && imr->addr == hostbuf + DP_BYTES);
	memset(hostbuf + DP_BYTES, 0, DP_BYTES);
	CHECK(post(&d, IBV_WR_RDMA_READ, DP_HOST_IOVA, imr->lkey, remote,
		   d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 41) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 41, IBV_WC_SUCCESS, IBV_WC_RDMA_READ));
	CHECK(!memcmp(hostbuf, hostbuf + DP_BYTES, DP_BYTES));
	/* The same bytes by their virtual address are not in that MR. */
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf + DP_BYTES,
		   imr->lkey, remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED,
		   42) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 42, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_READ));

	/* READ into an MR without LOCAL_WRITE. */
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 0, 0);
	romr = IBV(d.v, ibv_reg_mr)(d.pd, hostbuf, 4096,
				    IBV_ACCESS_REMOTE_READ);
	CHECK(romr);
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf, romr->lkey, remote,
		   d.dmr->rkey, 64, IBV_SEND_SIGNALED, 43) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 43, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_READ));

	/* Unsignaled WRs hold their slots until a later CQE is polled. */
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 0, 0);
	for (int i = 0; i < 4; i++)
		CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf,
			   d.hmr->lkey, remote, d.dmr->rkey, 64, 0, 50) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED, 51) == ENOMEM);
	CHECK(ibv_poll_cq(d.cq, 1, &wc) == 0);

	/* Wrong DLID, wrong destination QP: nobody answers. */
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 0, 5);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED, 60) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 60, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE));
	dp_reset(&d);
	dp_connect(&d, ACC_ALL, 1, 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED, 61) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 61, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE));

	/* A QP not enabled for remote reads refuses them. */
	dp_reset(&d);
	dp_connect(&d, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0);
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED, 62) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 62, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RDMA_READ));

	CHECK(IBV(d.v, ibv_dereg_mr)(imr) == 0);
	CHECK(IBV(d.v, ibv_dereg_mr)(romr) == 0);
	dp_close(&d, 4);
}

/* mem = unmapped: no ibv_reg_mr on the GPU pointer, dma-buf still works. */
static void dp_unmapped(void)
{
	struct dp d;

	dp_open(&d);
	errno = 0;
	CHECK(!IBV(d.v, ibv_reg_mr)(d.pd, (void *)(uintptr_t)d.gpu, DP_BYTES,
				    ACC_ALL) && errno == EFAULT);
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	roundtrip(&d, d.dmr, d.gpu + DP_DMABUF_OFF, d.gpu + DP_DMABUF_OFF, 70);
	dp_close(&d, 2);
}

/* devI.wc_status = N: every op completes with N and moves nothing. */
static void dp_status(enum ibv_wc_status want)
{
	uint64_t remote;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	memset(hostbuf + DP_BYTES, 0, DP_BYTES);
	CHECK(CUV(d.c, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(
		      remote, hostbuf + DP_BYTES, DP_BYTES) == 0);
	fill(hostbuf, DP_BYTES, 80);
	/* Unsignaled: an error completes anyway. */
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, DP_BYTES, 0, 80) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 80, want, IBV_WC_RDMA_WRITE));
	CHECK(wc.vendor_err != 0);
	CHECK(d.qp->state == IBV_QPS_ERR);
	CHECK(dtoh_is(&d, remote, hostbuf + DP_BYTES));
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 81) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 81, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_READ));
	dp_close(&d, 2);
}

static void dp_status_loc_prot(void)
{
	dp_status(IBV_WC_LOC_PROT_ERR);
}

static void dp_status_rem_access(void)
{
	dp_status(IBV_WC_REM_ACCESS_ERR);
}

static void dp_status_retry(void)
{
	dp_status(IBV_WC_RETRY_EXC_ERR);
}

/* devI.wc_corrupt = 1: success, wrong bytes, and no round-trip cancel. */
static void dp_corrupt(void)
{
	uint64_t remote;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	fill(hostbuf, DP_BYTES, 90);
	memset(hostbuf + DP_BYTES, 0, DP_BYTES);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 90) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 90, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
	CHECK(!dtoh_is(&d, remote, hostbuf));
	CHECK(check[0] == (char)(hostbuf[0] ^ 0xff));
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)hostbuf + DP_BYTES,
		   d.hmr->lkey, remote, d.dmr->rkey, DP_BYTES,
		   IBV_SEND_SIGNALED, 91) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 91, IBV_WC_SUCCESS, IBV_WC_RDMA_READ));
	CHECK(memcmp(hostbuf, hostbuf + DP_BYTES, DP_BYTES));
	CHECK(hostbuf[DP_BYTES] == (char)(hostbuf[0] ^ 0xaa));
	dp_close(&d, 2);
}

/*
 * devI.silent_drop = 3: WRITE and READ complete with success and the full
 * byte_len, and neither the GPU memory nor the host buffer changes.
 */
static void dp_silent(void)
{
	char *src = hostbuf, *dst = hostbuf + DP_BYTES;
	static char poison[DP_BYTES];
	uint64_t remote;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	memset(poison, 0xa5, sizeof(poison));
	CHECK(CUV(d.c, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(
		      remote, poison, DP_BYTES) == 0);
	fill(src, DP_BYTES, 110);
	memset(dst, 0x5a, DP_BYTES);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)src, d.hmr->lkey, remote,
		   d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 110) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 110, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE) &&
	      wc.byte_len == DP_BYTES);
	CHECK(dtoh_is(&d, remote, poison));
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)dst, d.hmr->lkey, remote,
		   d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 111) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 111, IBV_WC_SUCCESS, IBV_WC_RDMA_READ) &&
	      wc.byte_len == DP_BYTES);
	memset(poison, 0x5a, sizeof(poison));
	CHECK(!memcmp(dst, poison, DP_BYTES));
	/* Still checked first: a bad rkey is an error, not a silent drop. */
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)src, d.hmr->lkey, remote,
		   d.dmr->rkey + 99, DP_BYTES, IBV_SEND_SIGNALED, 112) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 112, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE));
	dp_close(&d, 2);
}

/*
 * devI.read_stale = 1: WRITEs land, READs return what the MR's range held
 * when it was registered.
 */
static void dp_stale(void)
{
	char *src = hostbuf, *dst = hostbuf + DP_BYTES;
	static char before[DP_BYTES];
	uint64_t remote;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	CHECK(CUV(d.c, "cuMemcpyDtoH_v2", cuMemcpyDtoH_fn)(
		      before, remote, DP_BYTES) == 0);
	fill(src, DP_BYTES, 120);
	CHECK(memcmp(src, before, DP_BYTES));
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)src, d.hmr->lkey, remote,
		   d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 120) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 120, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
	CHECK(dtoh_is(&d, remote, src));
	memset(dst, 0x5a, DP_BYTES);
	CHECK(post(&d, IBV_WR_RDMA_READ, (uintptr_t)dst, d.hmr->lkey, remote,
		   d.dmr->rkey, DP_BYTES, IBV_SEND_SIGNALED, 121) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 121, IBV_WC_SUCCESS, IBV_WC_RDMA_READ));
	CHECK(!memcmp(dst, before, DP_BYTES));
	dp_close(&d, 2);
}

/*
 * devI.wc_short = 4096 and wc_overrun = 64: a WRITE of 8 KiB moves its
 * first 4 KiB only, and sets the 64 bytes after its 8 KiB to 0xee.
 */
static void dp_short_overrun(void)
{
	static char want[DP_BYTES];
	uint64_t remote;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	memset(want, 0xa5, sizeof(want));
	CHECK(CUV(d.c, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(
		      remote, want, DP_BYTES) == 0);
	fill(hostbuf, DP_BYTES, 130);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 8192, IBV_SEND_SIGNALED, 130) == 0);
	CHECK(poll1(&d, &wc, 100) == 1 &&
	      wc_is(&d, &wc, 130, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE) &&
	      wc.byte_len == 8192);
	memcpy(want, hostbuf, 4096);
	memset(want + 8192, 0xee, 64);
	CHECK(dtoh_is(&d, remote, want));
	dp_close(&d, 2);
}

/* devI.wc_drop = 1: no completion, ever; the SQ fills; ERR flushes. */
static void dp_drop(void)
{
	uint64_t remote;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];
	struct dp d;

	dp_open(&d);
	remote = d.gpu + DP_DMABUF_OFF;
	dp_create(&d, 4);
	dp_connect(&d, ACC_ALL, 0, 0);
	memset(hostbuf + DP_BYTES, 0, DP_BYTES);
	CHECK(CUV(d.c, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(
		      remote, hostbuf + DP_BYTES, DP_BYTES) == 0);
	fill(hostbuf, DP_BYTES, 100);
	for (int i = 0; i < 4; i++)
		CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf,
			   d.hmr->lkey, remote, d.dmr->rkey, DP_BYTES,
			   i == 3 ? IBV_SEND_SIGNALED : 0,
			   (uint64_t)(100 + i)) == 0);
	CHECK(poll1(&d, wc, 50) == 0);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   remote, d.dmr->rkey, 64, IBV_SEND_SIGNALED, 104) == ENOMEM);
	CHECK(dtoh_is(&d, remote, hostbuf + DP_BYTES));
	/* To ERR: all four flush, in order, signaled or not. */
	CHECK(modify(&d, &a, IBV_QP_STATE) == 0);
	CHECK(ibv_poll_cq(d.cq, 8, wc) == 4);
	for (int i = 0; i < 4; i++)
		CHECK(wc_is(&d, &wc[i], (uint64_t)(100 + i),
			    IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
	dp_close(&d, 2);
}

/* fail.ibv_post_send / ibv_poll_cq / ibv_modify_qp / ibv_create_*. */
static void dp_fail_keys(void)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };
	struct ibv_context *c1;
	struct ibv_pd *pd1;
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	dp_create(&d, 4);
	attr_init(&a, ACC_ALL);
	errno = 0;
	CHECK(modify(&d, &a, INIT_MASK) == 1 && errno == 1);
	CHECK(post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey,
		   d.gpu + DP_DMABUF_OFF, d.dmr->rkey, 64, IBV_SEND_SIGNALED,
		   1) == 105);
	CHECK(ibv_poll_cq(d.cq, 1, &wc) == -5);
	c1 = IBV(d.v, ibv_open_device)(d.list[1]);
	pd1 = c1 ? IBV(d.v, ibv_alloc_pd)(c1) : NULL;
	CHECK(pd1);
	errno = 0;
	CHECK(!IBV(d.v, ibv_create_cq)(c1, 4, NULL, NULL, 0) && errno == 24);
	init.send_cq = init.recv_cq = d.cq;
	errno = 0;
	CHECK(!IBV(d.v, ibv_create_qp)(pd1, &init) && errno == 12);
	CHECK(IBV(d.v, ibv_dealloc_pd)(pd1) == 0);
	CHECK(IBV(d.v, ibv_close_device)(c1) == 0);
	IBV(d.v, ibv_destroy_qp)(d.qp);
	IBV(d.v, ibv_destroy_cq)(d.cq);
	CHECK(ledger_has("verbs", "cq 1 1"));
	CHECK(ledger_has("verbs", "qp 1 1"));
}

/* hang./crash. on the inline data-path entries. */
static void dp_poll_only(void)
{
	struct ibv_wc wc;
	struct dp d;

	dp_open(&d);
	dp_create(&d, 4);
	ibv_poll_cq(d.cq, 1, &wc);
	fprintf(stderr, "  ibv_poll_cq returned\n");
	exit(1);
}

static void dp_post_only(void)
{
	struct dp d;

	dp_open(&d);
	dp_create(&d, 4);
	post(&d, IBV_WR_RDMA_WRITE, (uintptr_t)hostbuf, d.hmr->lkey, d.gpu,
	     d.dmr->rkey, 64, IBV_SEND_SIGNALED, 1);
	fprintf(stderr, "  ibv_post_send returned\n");
	exit(1);
}

/* A sub-range export: offset 0 is ptr, size is the range, storage shared. */
static void cuda_subrange(void)
{
	void *h = load("libcuda-fake.so");
	CUdeviceptr p = cuda_alloc(h);
	int fd = -1, fd2 = -1, fd3 = -1;
	char *m;

	fill(hostbuf, 8192, 7);
	CHECK(CUV(h, "cuMemcpyHtoD_v2", cuMemcpyHtoD_fn)(p + 4096, hostbuf,
							8192) == 0);
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd, p + 4096, 8192, 1,
						   0) == 0 && fd >= 0);
	CHECK(lseek(fd, 0, SEEK_END) == 8192);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		exit(1);
	CHECK(!memcmp(m, hostbuf, 8192));	/* contents kept */
	memset(m, 0x5a, 8192);
	CHECK(CUV(h, "cuMemcpyDtoH_v2", cuMemcpyDtoH_fn)(check, p + 4096,
							8192) == 0 &&
	      check[0] == 0x5a && check[8191] == 0x5a);
	CHECK(*(char *)(uintptr_t)(p + 4096) == 0x5a);
	/* The same range again: the same storage. */
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd2, p + 4096, 8192, 1,
						   0) == 0);
	CHECK(pwrite(fd2, "xy", 2, 0) == 2 && m[0] == 'x');
	/* Overlapping differently: not modelled, and said so. */
	CHECK(CU(h, cuMemGetHandleForAddressRange)(&fd3, p, 2u << 20, 1, 0) ==
	      CUDA_ERROR_NOT_SUPPORTED);
	munmap(m, 8192);
	close(fd);
	close(fd2);
	cuda_release(h, p);
	CHECK(ledger_has("cuda", "fd 2 2"));
	CHECK(ledger_has("cuda", "mem 1 1"));
}

/* --- driver ----------------------------------------------------------- */

enum expect { PASS, SIGNAL, HANG, STATUS };

struct tcase {
	const char *name;
	const char *env;	/* scenario env var */
	const char *scenario;	/* NULL: env var unset */
	void (*fn)(void);
	enum expect expect;
	int arg;		/* signal or exit status */
	const char *verbs;	/* FAKE_VERBS_SCENARIO too, when env is cuda's */
};

#define DP(n, cuda, v, f) { .name = n, .env = "FAKE_CUDA_SCENARIO", \
			    .scenario = cuda, .fn = f, .expect = PASS, \
			    .verbs = v }

static const struct tcase cases[] = {
	{ "cuda symbols", NULL, NULL, cuda_symbols, PASS, 0, NULL },
	{ "cuda basic", "FAKE_CUDA_SCENARIO",
	  "# two GPUs\n\ndevice_count = 2\ndriver_version = 12040\n"
	  "gpu1.name = \"NVIDIA H200\"\ngpu1.pci = 0000:3b:00.0\n"
	  "gpu1.cc = 8.9\ngpu1.attr.124 = 0\ngpu1.attr_rc.116 = 801\n",
	  cuda_basic, PASS, 0, NULL },
	{ "cuda init fails", "FAKE_CUDA_SCENARIO", "init = 100\n",
	  cuda_init_fail, PASS, 0, NULL },
	{ "cuda fail.NAME[.idx]", "FAKE_CUDA_SCENARIO",
	  "device_count = 2\nfail.cuDeviceGetAttribute.1 = 999\n"
	  "fail.cuDeviceGetCount = 304\n", cuda_fail, PASS, 0, NULL },
	{ "cuda crash.NAME", "FAKE_CUDA_SCENARIO",
	  "crash.cuDeviceGetCount = 1\n", cuda_crash, SIGNAL, SIGSEGV, NULL },
	{ "cuda hang.NAME", "FAKE_CUDA_SCENARIO", "hang.cuInit = 1\n",
	  cuda_call_init, HANG, 0, NULL },
	{ "cuda exit.NAME", "FAKE_CUDA_SCENARIO", "exit.cuInit = 7\n",
	  cuda_call_init, STATUS, 7, NULL },
	{ "cuda bad scenario aborts", "FAKE_CUDA_SCENARIO", "init 3\n",
	  cuda_call_init, SIGNAL, SIGABRT, NULL },
	{ "cuda host export + ledger", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\n", cuda_export_host, PASS, 0, NULL },
	{ "cuda export = 801", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\nexport = 801\n", cuda_export_fails, PASS, 0, NULL },
	{ "cuda mem = unmapped", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\nmem = unmapped\ndevice_count = 1\n",
	  cuda_unmapped, PASS, 0, NULL },
	{ "cuda fd -> verbs dmabuf", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\n", cuda_to_verbs, PASS, 0, NULL },
	{ "cuda PCIe-mapped fd -> mlx5dv Data Direct", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\ndriver_version = 12080\ngpu0.pcie_mapping = 1\n",
	  cuda_to_mlx5, PASS, 0,
	  "device_count = 2\ndev0.dd_path = " DD_PATH "\n" },
	{ "cuda PCIe mapping refused (801)", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\ndriver_version = 12080\n", cuda_pcie_refused,
	  PASS, 0, NULL },
	{ "cuda PCIe mapping before 12.8", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\ndriver_version = 12040\ngpu0.pcie_mapping = 1\n",
	  cuda_pcie_old_driver, PASS, 0, NULL },
	{ "mlx5-old symbols", NULL, NULL, mlx5_symbols_old, PASS, 0, NULL },
	{ "verbs symbols", NULL, NULL, verbs_symbols_new, PASS, 0, NULL },
	{ "verbs-old symbols", NULL, NULL, verbs_symbols_old, PASS, 0, NULL },
	{ "verbs flow + ledger", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\ndev1.name = rocep1s0\ndev1.open_errno = 19\n"
	  "dev0.ports = 2\ndev0.port2.state = 1\ndev0.port2.link_layer = 1\n"
	  "dev0.port1.gid3 = ::ffff:10.0.0.5\n", verbs_flow, PASS, 0, NULL },
	{ "verbs fail.NAME[.idx]", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\nfail.ibv_open_device.0 = 13\n"
	  "fail.ibv_dealloc_pd = 5\ndev1.dmabuf_errno = 0\n",
	  verbs_fail, PASS, 0, NULL },
	{ "verbs list_errno", "FAKE_VERBS_SCENARIO", "list_errno = 38\n",
	  verbs_list_errno, PASS, 0, NULL },
	{ "verbs dmabuf_errno", "FAKE_VERBS_SCENARIO",
	  "device_count = 1\ndev0.dmabuf_errno = 95\n",
	  verbs_dmabuf_unsupported, PASS, 0, NULL },
	{ "verbs crash.NAME", "FAKE_VERBS_SCENARIO",
	  "crash.ibv_get_device_list = 1\n", verbs_crash, SIGNAL, SIGSEGV, NULL },
	{ "verbs hang.NAME.idx", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\nhang.ibv_open_device.1 = 1\n", verbs_hang,
	  HANG, 0, NULL },
	{ "verbs unreadable scenario aborts", "FAKE_VERBS_SCENARIO", "",
	  verbs_crash, SIGNAL, SIGABRT, NULL },
	{ .name = "cuda sub-range export", .env = "FAKE_CUDA_SCENARIO",
	  .scenario = "device_count = 1\n", .fn = cuda_subrange },
	DP("dp RoCE loopback: reg_mr + dma-buf, GRH", "device_count = 1\n",
	   "device_count = 1\n", dp_roce),
	DP("dp IB loopback: LID, iova2, local errors", "device_count = 1\n",
	   "device_count = 1\ndev0.port1.link_layer = 1\n", dp_ib),
	DP("dp mem = unmapped: dma-buf only", "device_count = 1\n"
	   "mem = unmapped\n", "device_count = 1\n", dp_unmapped),
	DP("dp wc_status = 4", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_status = 4\n", dp_status_loc_prot),
	DP("dp wc_status = 10", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_status = 10\n", dp_status_rem_access),
	DP("dp wc_status = 12", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_status = 12\n", dp_status_retry),
	DP("dp port DOWN: RETRY_EXC_ERR", "device_count = 1\n",
	   "device_count = 1\ndev0.port1.state = 1\n", dp_status_retry),
	DP("dp wc_corrupt = 1", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_corrupt = 1\n", dp_corrupt),
	DP("dp wc_drop = 1", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_drop = 1\n", dp_drop),
	DP("dp silent_drop = 3", "device_count = 1\n",
	   "device_count = 1\ndev0.silent_drop = 3\n", dp_silent),
	DP("dp read_stale = 1", "device_count = 1\n",
	   "device_count = 1\ndev0.read_stale = 1\n", dp_stale),
	DP("dp wc_short = 4096, wc_overrun = 64", "device_count = 1\n",
	   "device_count = 1\ndev0.wc_short = 4096\ndev0.wc_overrun = 64\n",
	   dp_short_overrun),
	DP("dp fail.ibv_post_send/poll_cq/modify_qp/create_*",
	   "device_count = 1\n",
	   "device_count = 2\nfail.ibv_post_send = 105\n"
	   "fail.ibv_poll_cq = 5\nfail.ibv_modify_qp = 1\n"
	   "fail.ibv_create_cq.1 = 24\nfail.ibv_create_qp.1 = 12\n",
	   dp_fail_keys),
	{ .name = "dp hang.ibv_poll_cq", .env = "FAKE_CUDA_SCENARIO",
	  .scenario = "device_count = 1\n", .fn = dp_poll_only, .expect = HANG,
	  .verbs = "device_count = 1\nhang.ibv_poll_cq = 1\n" },
	{ .name = "dp crash.ibv_post_send.0", .env = "FAKE_CUDA_SCENARIO",
	  .scenario = "device_count = 1\n", .fn = dp_post_only,
	  .expect = SIGNAL, .arg = SIGSEGV,
	  .verbs = "device_count = 1\ncrash.ibv_post_send.0 = 1\n" },
};

static void run_child(const struct tcase *t, int i)
{
	char path[4200];
	FILE *f;

	setenv("FAKE_LEDGER_DIR", tmpdir, 1);
	unsetenv("FAKE_CUDA_SCENARIO");
	unsetenv("FAKE_VERBS_SCENARIO");
	/* The cross-double cases need a verbs scenario too. */
	if (t->fn == cuda_unmapped || t->fn == cuda_to_verbs || t->verbs) {
		snprintf(path, sizeof(path), "%s/verbs-%d.scenario", tmpdir, i);
		f = fopen(path, "w");
		if (t->verbs)
			fputs(t->verbs, f);
		else
			fputs("device_count = 2\n", f);
		if (t->fn == cuda_to_verbs)
			fputs("dev1.dmabuf_check_real = 1\n", f);
		fclose(f);
		setenv("FAKE_VERBS_SCENARIO", path, 1);
	}
	if (t->env) {
		snprintf(path, sizeof(path), "%s/case-%d.scenario", tmpdir, i);
		/* An empty scenario text stands for an unreadable file. */
		if (*t->scenario) {
			f = fopen(path, "w");
			fputs(t->scenario, f);
			fclose(f);
		}
		setenv(t->env, path, 1);
	}
	t->fn();
	exit(fails ? 1 : 0);
}

static bool run_case(const struct tcase *t, int i)
{
	double limit = t->expect == HANG ? 1.0 : 20.0;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int status = 0;
	double waited = 0;
	pid_t pid, r;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid)
		run_child(t, i);
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited < limit) {
		nanosleep(&ts, NULL);
		waited += 0.01;
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return t->expect == HANG;
	}
	switch (t->expect) {
	case PASS:
		return WIFEXITED(status) && WEXITSTATUS(status) == 0;
	case SIGNAL:
		return WIFSIGNALED(status) && WTERMSIG(status) == t->arg;
	case STATUS:
		return WIFEXITED(status) && WEXITSTATUS(status) == t->arg;
	default:
		return false;	/* HANG that returned */
	}
}

int main(int argc, char **argv)
{
	int pass = 0, fail = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DOUBLES_DIR WORK_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	snprintf(tmpdir, sizeof(tmpdir), "%s", argv[2]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok = run_case(&cases[i], (int)i);

		printf("%s: %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		if (ok)
			pass++;
		else
			fail++;
	}
	printf("selftest: %d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
