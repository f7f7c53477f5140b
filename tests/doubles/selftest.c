// SPDX-License-Identifier: MIT
/*
 * Smoke test of the libcuda/libibverbs doubles, loaded the way gdrcheck
 * loads the real ones (dlopen RTLD_NOW|RTLD_LOCAL, dlsym / dlvsym). The
 * scenario is read when a double is loaded, so every case runs in its own
 * forked child with its own scenario file.
 *
 * usage: selftest DOUBLES_DIR WORK_DIR
 *   DOUBLES_DIR holds libcuda-fake.so, libibverbs-fake.so and
 *   libibverbs-fake-old.so; scenarios and ledgers go to WORK_DIR.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "access/cuda_api.h"

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
	CHECK(gidex(ctx, 1, 1, &ge, 0, sizeof(ge)) == ENODATA);
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
	CHECK(IBV(h, ibv_modify_qp)(qp, &qa, IBV_QP_STATE) == 0);
	CHECK(IBV(h, ibv_destroy_cq)(cq) == EBUSY);
	CHECK(ibv_post_send(qp, NULL, &(struct ibv_send_wr *){ NULL }) ==
	      EOPNOTSUPP);
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

/* --- driver ----------------------------------------------------------- */

enum expect { PASS, SIGNAL, HANG, STATUS };

struct tcase {
	const char *name;
	const char *env;	/* scenario env var */
	const char *scenario;	/* NULL: env var unset */
	void (*fn)(void);
	enum expect expect;
	int arg;		/* signal or exit status */
};

static const struct tcase cases[] = {
	{ "cuda symbols", NULL, NULL, cuda_symbols, PASS, 0 },
	{ "cuda basic", "FAKE_CUDA_SCENARIO",
	  "# two GPUs\n\ndevice_count = 2\ndriver_version = 12040\n"
	  "gpu1.name = \"NVIDIA H200\"\ngpu1.pci = 0000:3b:00.0\n"
	  "gpu1.cc = 8.9\ngpu1.attr.124 = 0\ngpu1.attr_rc.116 = 801\n",
	  cuda_basic, PASS, 0 },
	{ "cuda init fails", "FAKE_CUDA_SCENARIO", "init = 100\n",
	  cuda_init_fail, PASS, 0 },
	{ "cuda fail.NAME[.idx]", "FAKE_CUDA_SCENARIO",
	  "device_count = 2\nfail.cuDeviceGetAttribute.1 = 999\n"
	  "fail.cuDeviceGetCount = 304\n", cuda_fail, PASS, 0 },
	{ "cuda crash.NAME", "FAKE_CUDA_SCENARIO",
	  "crash.cuDeviceGetCount = 1\n", cuda_crash, SIGNAL, SIGSEGV },
	{ "cuda hang.NAME", "FAKE_CUDA_SCENARIO", "hang.cuInit = 1\n",
	  cuda_call_init, HANG, 0 },
	{ "cuda exit.NAME", "FAKE_CUDA_SCENARIO", "exit.cuInit = 7\n",
	  cuda_call_init, STATUS, 7 },
	{ "cuda bad scenario aborts", "FAKE_CUDA_SCENARIO", "init 3\n",
	  cuda_call_init, SIGNAL, SIGABRT },
	{ "cuda host export + ledger", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\n", cuda_export_host, PASS, 0 },
	{ "cuda export = 801", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\nexport = 801\n", cuda_export_fails, PASS, 0 },
	{ "cuda mem = unmapped", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\nmem = unmapped\ndevice_count = 1\n",
	  cuda_unmapped, PASS, 0 },
	{ "cuda fd -> verbs dmabuf", "FAKE_CUDA_SCENARIO",
	  "device_count = 1\n", cuda_to_verbs, PASS, 0 },
	{ "verbs symbols", NULL, NULL, verbs_symbols_new, PASS, 0 },
	{ "verbs-old symbols", NULL, NULL, verbs_symbols_old, PASS, 0 },
	{ "verbs flow + ledger", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\ndev1.name = rocep1s0\ndev1.open_errno = 19\n"
	  "dev0.ports = 2\ndev0.port2.state = 1\ndev0.port2.link_layer = 1\n"
	  "dev0.port1.gid3 = ::ffff:10.0.0.5\n", verbs_flow, PASS, 0 },
	{ "verbs fail.NAME[.idx]", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\nfail.ibv_open_device.0 = 13\n"
	  "fail.ibv_dealloc_pd = 5\ndev1.dmabuf_errno = 0\n",
	  verbs_fail, PASS, 0 },
	{ "verbs list_errno", "FAKE_VERBS_SCENARIO", "list_errno = 38\n",
	  verbs_list_errno, PASS, 0 },
	{ "verbs dmabuf_errno", "FAKE_VERBS_SCENARIO",
	  "device_count = 1\ndev0.dmabuf_errno = 95\n",
	  verbs_dmabuf_unsupported, PASS, 0 },
	{ "verbs crash.NAME", "FAKE_VERBS_SCENARIO",
	  "crash.ibv_get_device_list = 1\n", verbs_crash, SIGNAL, SIGSEGV },
	{ "verbs hang.NAME.idx", "FAKE_VERBS_SCENARIO",
	  "device_count = 2\nhang.ibv_open_device.1 = 1\n", verbs_hang,
	  HANG, 0 },
	{ "verbs unreadable scenario aborts", "FAKE_VERBS_SCENARIO", "",
	  verbs_crash, SIGNAL, SIGABRT },
};

static void run_child(const struct tcase *t, int i)
{
	char path[4200];
	FILE *f;

	setenv("FAKE_LEDGER_DIR", tmpdir, 1);
	unsetenv("FAKE_CUDA_SCENARIO");
	unsetenv("FAKE_VERBS_SCENARIO");
	/* The cross-double cases need a verbs scenario too. */
	if (t->fn == cuda_unmapped || t->fn == cuda_to_verbs) {
		snprintf(path, sizeof(path), "%s/verbs-%d.scenario", tmpdir, i);
		f = fopen(path, "w");
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
