// SPDX-License-Identifier: MIT
/*
 * Scenario-driven test double of libcuda.so.1: the subset in
 * decode/cuda_api.h plus cuMemcpy{HtoD,DtoH}_v2. "GPU memory" is a memfd
 * ("fake-dmabuf") per allocation, mapped MAP_SHARED at the device pointer
 * (mem = host) or only at a hidden address behind an inaccessible
 * reservation (mem = unmapped). dma-buf export hands out a memfd sharing
 * that storage, which gdrcheck's /proc/self/fd check must see through: data
 * the libibverbs double writes through a dma-buf MR (it mmaps the fd) shows
 * in cuMemcpyDtoH and at the pointer, as with real GPU memory.
 *
 * Export of [ptr, ptr + size): from the allocation's base it is a dup of
 * the allocation's memfd (so offset 0 is the base, fstat's size is the
 * allocation's page-rounded size); NCCL and gdrcheck export so and register
 * with offset = buffer - base. A range starting past the base gets a memfd of
 * exactly that range whose pages replace the allocation's there (contents
 * kept), so its offset 0 is ptr, as in a real sub-range dma-buf. The same
 * range exported again shares the same storage. Overlapping but unequal
 * exports (except several from the base) are not modelled: NOT_SUPPORTED
 * and a note on stderr.
 *
 * Scenario (env FAKE_CUDA_SCENARIO), keys [defaults]; I = device ordinal:
 *   init [0]              CUresult of cuInit; until it succeeded every call
 *                         but cuDriverGetVersion/cuGetError* returns 3
 *   driver_version [13000]
 *   device_count [0]      at most 64
 *   device_count_reported [device_count]
 *                         what cuDeviceGetCount answers (any int, e.g. -3:
 *                         a driver answering out of the domain)
 *   gpuI.name ["Fake GPU"]
 *   gpuI.pci ["0000:00:00.0"]   returned as "00000000:3B:00.0"
 *   gpuI.cc ["9.0"]       attributes 75/76
 *   gpuI.total_mem [85899345920]
 *   gpuI.attr.N           value of attribute N [116, 124, 117, 110: 1;
 *                         118: 100; 75/76: from cc; others 0]
 *   gpuI.attr_rc.N [0]    CUresult for attribute N (an older driver's 1)
 *   gpuI.compute_mode [0] attribute 20: 0 DEFAULT, 2 PROHIBITED, 3
 *                         EXCLUSIVE_PROCESS. PROHIBITED: every
 *                         cuDevicePrimaryCtxRetain fails with 46
 *                         (CUDA_ERROR_DEVICE_UNAVAILABLE), as the driver's
 *   gpuI.held [0]         1: another process holds the GPU; in
 *                         EXCLUSIVE_PROCESS mode cuDevicePrimaryCtxRetain
 *                         then fails with 46 (in DEFAULT mode it shares)
 *   gpuI.ptr_gdr_capable [1]    cuPointerGetAttribute(15)
 *   mem [host]            host: 2 MiB-aligned RW memory; unmapped: a
 *                         PROT_NONE reservation (every access EFAULTs)
 *   export [0]            CUresult of cuMemGetHandleForAddressRange once
 *                         its arguments passed validation
 *   vmm.mem [mem]         host|unmapped for VMM mappings (cuMemMap +
 *                         cuMemSetAccess), so peermem can fault on VMM
 *                         memory only (uccl-project/mKernel#26)
 *   vmm.export [export]   the same as export, for a range of a VMM mapping
 *   vmm.granularity [2097152]   cuMemGetAllocationGranularity's answer
 *   delay_ms.ctx [0]      each cuDevicePrimaryCtxRetain sleeps N ms first
 *   delay_ms.alloc [0]    each cuMemAlloc_v2 and cuMemCreate sleeps N ms
 *                         (a driver's cost, for bench/parallel); outside the
 *                         double's lock, so calls from threads overlap
 *   gpuI.pcie_mapping [0] 1: cuMemGetHandleForAddressRange takes
 *                         CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (a C2C
 *                         GPU, driver_version >= 12080); 0: 801 (H200)
 * VMM (cuMemCreate/AddressReserve/Map/SetAccess/Unmap/AddressFree/Release):
 * a handle is a memfd; a reservation is PROT_NONE address space; cuMemMap
 * maps the handle's memfd there, inaccessible until cuMemSetAccess (then
 * read-write, or still PROT_NONE with vmm.mem = unmapped, copies going
 * through a hidden mapping). A mapping is an allocation like cuMemAlloc's
 * for export, copies and cuPointerGetAttribute; cuMemFree refuses it.
 * Attribute 102 (VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) defaults to 1.
 * Fault keys (fake_scenario.h): fail/hang/crash/exit.NAME[.I]; I is the
 * device argument, or the current context's device for calls without one.
 * Ledger rows: ctx (primary retain/release), mem, fd (exported dma-buf
 * stand-ins; counted released once the caller has closed them, which the
 * double notices at its next cuMemFree/cuCtxSetCurrent/ctx release), vmm
 * (cuMemCreate/cuMemRelease), va (cuMemAddressReserve/cuMemAddressFree),
 * map (cuMemMap/cuMemUnmap).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "decode/cuda_api.h"
#include "tests/doubles/fake_scenario.h"

#define CUDA_ERROR_INVALID_CONTEXT	201

#define FAKE_MAX_GPUS	64
#define PAGE		4096ull
#define GRAN		(2ull << 20)	/* cuMemAlloc's real granularity */
#define ALIGN_UP(x, a)	(((x) + (a) - 1) & ~((a) - 1))

#define EXPORT __attribute__((visibility("default")))

EXPORT CUresult cuInit(unsigned int flags);
EXPORT CUresult cuDriverGetVersion(int *version);
EXPORT CUresult cuDeviceGetCount(int *count);
EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal);
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
EXPORT CUresult cuDeviceGetAttribute(int *val, int attr, CUdevice dev);
EXPORT CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev);
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
EXPORT CUresult cuGetErrorName(CUresult err, const char **str);
EXPORT CUresult cuGetErrorString(CUresult err, const char **str);
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx);
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes);
EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr);
#ifndef FAKE_CUDA_OLD
EXPORT CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr ptr,
		size_t size, int type, unsigned long long flags);
#endif
EXPORT CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr);
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity,
		const CUmemAllocationProp *prop, int option);
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		const CUmemAllocationProp *prop, unsigned long long flags);
EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size,
		size_t alignment, CUdeviceptr addr, unsigned long long flags);
EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		CUmemGenericAllocationHandle handle, unsigned long long flags);
EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
		const CUmemAccessDesc *desc, size_t count);

static const char *const ledger_rows[] = { "ctx", "mem", "fd", "vmm", "va",
					   "map" };

enum { L_CTX, L_MEM, L_FD, L_VMM, L_VA, L_MAP };

/* Exported fds still believed open: (fd, inode) identifies one. */
#define FAKE_MAX_FDS 256
static struct {
	int fd;
	ino_t ino;
} open_fds[FAKE_MAX_FDS];
static int n_open_fds;

#ifndef FAKE_CUDA_OLD
static void track_fd(int fd)
{
	struct stat st;

	if (n_open_fds < FAKE_MAX_FDS && fstat(fd, &st) == 0) {
		open_fds[n_open_fds].fd = fd;
		open_fds[n_open_fds].ino = st.st_ino;
		n_open_fds++;
	}
	fake_ledger_acquire(L_FD);
}
#endif

/* Count as released every exported fd the caller has closed since. */
static void sweep_fds(void)
{
	for (int i = 0; i < n_open_fds; i++) {
		struct stat st;

		if (fstat(open_fds[i].fd, &st) == 0 &&
		    st.st_ino == open_fds[i].ino)
			continue;
		fake_ledger_release(L_FD);
		open_fds[i--] = open_fds[--n_open_fds];
	}
}

struct CUctx_st {
	int dev;
	int refs;
};

#define MAX_SEGS 8

struct alloc {
	CUdeviceptr ptr;	/* what the caller sees */
	size_t size;		/* requested */
	size_t span;		/* reserved at ptr, GRAN multiple */
	char *backing;		/* where memcpy really goes */
	size_t backing_len;	/* non-zero: backing is a separate mapping */
	int memfd;		/* storage of backing[0, mlen) */
	size_t mlen;		/* size rounded up to PAGE */
	size_t base_exported;	/* longest export from the base */
	struct {
		size_t off, len;
		int fd;		/* storage of backing[off, off + len) */
	} seg[MAX_SEGS];	/* sub-range exports */
	int nseg;
	int dev;
	bool vmm;		/* a cuMemMap mapping, not cuMemAlloc's */
	bool access;		/* VMM: cuMemSetAccess done */
	struct alloc *next;
};

static bool inited;
static int ndev;
static bool mem_unmapped;
static bool vmm_unmapped;
static struct CUctx_st ctxs[FAKE_MAX_GPUS];
static __thread struct CUctx_st *cur;	/* current context is per thread */
static struct alloc *allocs;

static void __attribute__((constructor)) fake_cuda_init(void)
{
	const char *mem;

	fake_scenario_load("FAKE_CUDA_SCENARIO");
	fake_ledger_init("cuda", ledger_rows, 6);
	ndev = (int)fake_get_ll("device_count", 0);
	if (ndev < 0 || ndev > FAKE_MAX_GPUS) {
		fprintf(stderr, "fake libcuda: device_count %d not modelled\n",
			ndev);
		abort();
	}
	for (int i = 0; i < ndev; i++)
		ctxs[i].dev = i;
	mem = fake_get("mem");
	if (mem && strcmp(mem, "host") && strcmp(mem, "unmapped")) {
		fprintf(stderr, "fake libcuda: mem = '%s': want host|unmapped\n",
			mem);
		abort();
	}
	mem_unmapped = mem && !strcmp(mem, "unmapped");
	mem = fake_get("vmm.mem");
	if (mem && strcmp(mem, "host") && strcmp(mem, "unmapped")) {
		fprintf(stderr, "fake libcuda: vmm.mem = '%s': want "
			"host|unmapped\n", mem);
		abort();
	}
	vmm_unmapped = mem ? !strcmp(mem, "unmapped") : mem_unmapped;
}

/*
 * Threads: gdrcheck's worker sets up its GPUs from a thread each, as the
 * real libcuda allows. Every call's body runs under one recursive lock (the
 * allocation list, handles, fd table and ledger are shared) but for the
 * bytes cuMemcpy moves; an injected fault and the delay_ms.* cost come
 * before it, so one GPU's hang or slow call does not hold up another's.
 */
static pthread_mutex_t big_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int lock_big(void)
{
	pthread_mutex_lock(&big_lock);
	return 0;
}

static void unlock_big(int *held)
{
	(void)held;
	pthread_mutex_unlock(&big_lock);
}

/* Held from here to the end of the enclosing block. */
#define HOLD_LOCK \
	int lk_ __attribute__((cleanup(unlock_big), unused)) = lock_big()

/* delay_ms.ctx / delay_ms.alloc: what a slow driver costs per call. */
static void fake_delay(const char *key)
{
	long long ms = fake_get_ll(key, 0);
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Entry of every call: injected fault first, then the call's cost (@delay,
 * a scenario key, or NULL), then the lock for the rest of the function and
 * the init gate. Declares: one use per function.
 */
#define ENTER_COST(name, idx, delay)					\
	long long v_;							\
	if (fake_fault(name, idx, &v_))					\
		return (CUresult)v_;					\
	if (delay)							\
		fake_delay(delay);					\
	HOLD_LOCK;							\
	if (!inited)							\
		return CUDA_ERROR_NOT_INITIALIZED

#define ENTER(name, idx) ENTER_COST(name, idx, NULL)

/* The driver answers these even before cuInit. */
#define ENTER_NOINIT(name) do {						\
	long long v_;							\
	if (fake_fault(name, -1, &v_))					\
		return (CUresult)v_;					\
} while (0)

static bool bad_dev(CUdevice dev)
{
	return dev < 0 || dev >= ndev;
}

static int cur_dev(void)
{
	return cur ? cur->dev : -1;
}

static bool have_ctx(void)
{
	return cur && cur->refs > 0;
}

/* Allocation holding [p, p + n), or NULL. */
static struct alloc *find_alloc(CUdeviceptr p, size_t n)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if (p >= a->ptr && n <= a->size && p - a->ptr <= a->size - n)
			return a;
	return NULL;
}

CUresult cuInit(unsigned int flags)
{
	long long v;

	if (fake_fault("cuInit", -1, &v))
		return (CUresult)v;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	v = fake_get_ll("init", CUDA_SUCCESS);
	inited = v == CUDA_SUCCESS;
	return (CUresult)v;
}

CUresult cuDriverGetVersion(int *version)
{
	ENTER_NOINIT("cuDriverGetVersion");
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = (int)fake_get_ll("driver_version", 13000);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	ENTER("cuDeviceGetCount", -1);
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (int)fake_get_ll("device_count_reported", ndev);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	ENTER("cuDeviceGet", ordinal);
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const char *n;

	ENTER("cuDeviceGetName", dev);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	n = fake_getf("gpu%d.name", dev);
	snprintf(name, (size_t)len, "%s", n ? n : "Fake GPU");
	return CUDA_SUCCESS;
}

static void gpu_cc(CUdevice dev, int *major, int *minor)
{
	const char *cc = fake_getf("gpu%d.cc", dev);

	*major = 9;
	*minor = 0;
	if (cc && sscanf(cc, "%d.%d", major, minor) != 2) {
		fprintf(stderr, "fake libcuda: gpu%d.cc = '%s': want M.m\n",
			dev, cc);
		abort();
	}
}

static int attr_default(CUdevice dev, int attr)
{
	int major, minor;

	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		gpu_cc(dev, &major, &minor);
		return attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ?
			major : minor;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
		return CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
		return (int)fake_getf_ll(CU_COMPUTEMODE_DEFAULT,
					 "gpu%d.compute_mode", dev);
	default:
		return 0;
	}
}

CUresult cuDeviceGetAttribute(int *val, int attr, CUdevice dev)
{
	long long rc;

	ENTER("cuDeviceGetAttribute", dev);
	if (!val)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	/* An older driver rejects attributes it does not know. */
	rc = fake_getf_ll(CUDA_SUCCESS, "gpu%d.attr_rc.%d", dev, attr);
	if (rc != CUDA_SUCCESS)
		return (CUresult)rc;
	*val = (int)fake_getf_ll(attr_default(dev, attr), "gpu%d.attr.%d",
				 dev, attr);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
	unsigned int d, b, s, f;
	const char *pci;

	ENTER("cuDeviceGetPCIBusId", dev);
	if (!bus || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pci = fake_getf("gpu%d.pci", dev);
	if (!pci)
		pci = "0000:00:00.0";
	/* CUDA spells it with a 32-bit domain, upper-case. */
	if (sscanf(pci, "%x:%x:%x.%x", &d, &b, &s, &f) == 4)
		snprintf(bus, (size_t)len, "%08X:%02X:%02X.%X", d, b, s, f);
	else
		snprintf(bus, (size_t)len, "%s", pci);
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	ENTER("cuDeviceTotalMem_v2", dev);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = (size_t)fake_getf_ll(85899345920ll, "gpu%d.total_mem", dev);
	return CUDA_SUCCESS;
}

static const struct {
	CUresult rc;
	const char *name, *desc;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
	  "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
	  "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
	  "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
	  "driver shutting down" },
	{ CUDA_ERROR_INSUFFICIENT_DRIVER, "CUDA_ERROR_INSUFFICIENT_DRIVER",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE",
	  "CUDA-capable device(s) is/are busy or unavailable" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
	  "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
	  "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
	  "invalid device context" },
	{ CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM",
	  "OS call failed or operation not supported on this OS" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
	  "operation not supported" },
	{ CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY",
	  "system not yet initialized" },
	{ CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	  "system has unsupported display driver / cuda driver combination" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

/* Like the driver: unknown code -> CUDA_ERROR_INVALID_VALUE, *str = NULL. */
static CUresult error_lookup(CUresult err, const char **str, bool name)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].rc == err) {
			*str = name ? errors[i].name : errors[i].desc;
			return CUDA_SUCCESS;
		}
	}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult err, const char **str)
{
	ENTER_NOINIT("cuGetErrorName");
	return error_lookup(err, str, true);
}

CUresult cuGetErrorString(CUresult err, const char **str)
{
	ENTER_NOINIT("cuGetErrorString");
	return error_lookup(err, str, false);
}

/* Whether the compute mode lets this process create a context on @dev. */
static bool ctx_allowed(CUdevice dev)
{
	long long mode = fake_getf_ll(CU_COMPUTEMODE_DEFAULT,
				      "gpu%d.compute_mode", dev);

	if (mode == CU_COMPUTEMODE_PROHIBITED)
		return false;
	return mode != CU_COMPUTEMODE_EXCLUSIVE_PROCESS ||
	       !fake_getf_ll(0, "gpu%d.held", dev);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	ENTER_COST("cuDevicePrimaryCtxRetain", dev, "delay_ms.ctx");
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!ctx_allowed(dev))
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	ctxs[dev].refs++;
	*ctx = &ctxs[dev];
	fake_ledger_acquire(L_CTX);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	ENTER("cuDevicePrimaryCtxRelease_v2", dev);
	sweep_fds();
	if (bad_dev(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	/* An unmatched release is a caller bug; keep it out of the ledger. */
	if (ctxs[dev].refs <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctxs[dev].refs--;
	fake_ledger_release(L_CTX);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	bool ours = ctx >= &ctxs[0] && ctx < &ctxs[FAKE_MAX_GPUS];

	ENTER("cuCtxSetCurrent", ours ? ctx->dev : -1);
	if (ctx && (!ours || ctx->refs <= 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	cur = ctx;
	return CUDA_SUCCESS;
}

/* A GRAN-aligned mapping of @span bytes with protection @prot. */
static void *map_aligned(size_t span, int prot)
{
	size_t len = span + GRAN;
	uintptr_t base, al;
	void *p;

	p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	base = (uintptr_t)p;
	al = ALIGN_UP(base, GRAN);
	if (al > base)
		munmap(p, al - base);
	if (al + span < base + len)
		munmap((void *)(al + span), base + len - (al + span));
	return (void *)al;
}

/* A memfd named like the exports, @len bytes; -1 on failure. */
static int new_memfd(size_t len)
{
	int fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, (off_t)len)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Map @fd's first @len bytes over @at (already reserved). */
static bool map_over(void *at, size_t len, int fd)
{
	return mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		    fd, 0) != MAP_FAILED;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
	struct alloc *a;
	void *p;

	ENTER_COST("cuMemAlloc_v2", cur_dev(), "delay_ms.alloc");
	if (!ptr || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->size = bytes;
	a->span = ALIGN_UP(bytes, GRAN);
	a->mlen = ALIGN_UP(bytes, PAGE);
	a->memfd = new_memfd(a->mlen);
	if (a->memfd < 0)
		goto oom;
	/*
	 * "unmapped": the address is reserved PROT_NONE, as the real driver
	 * reserves its UVA window: every CPU or kernel access (write(2) from
	 * it, get_user_pages for ibv_reg_mr) gets EFAULT, and nothing else
	 * can be mapped there later. Copies go to a hidden backing mapping.
	 * Either way the first mlen bytes of the backing are the memfd; the
	 * rest of the GRAN-sized span is anonymous.
	 */
	p = map_aligned(a->span, mem_unmapped ? PROT_NONE :
					       PROT_READ | PROT_WRITE);
	if (!p)
		goto oom_fd;
	a->ptr = (CUdeviceptr)(uintptr_t)p;
	a->backing = p;
	if (mem_unmapped) {
		a->backing_len = a->span;
		a->backing = mmap(NULL, a->span, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				  -1, 0);
		if (a->backing == MAP_FAILED) {
			munmap(p, a->span);
			goto oom_fd;
		}
	}
	if (!map_over(a->backing, a->mlen, a->memfd)) {
		munmap(p, a->span);
		if (a->backing_len)
			munmap(a->backing, a->backing_len);
		goto oom_fd;
	}
	a->dev = cur->dev;
	a->next = allocs;
	allocs = a;
	*ptr = a->ptr;
	fake_ledger_acquire(L_MEM);
	return CUDA_SUCCESS;
oom_fd:
	close(a->memfd);
oom:
	free(a);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemFree_v2(CUdeviceptr ptr)
{
	struct alloc **pp, *a;

	ENTER("cuMemFree_v2", cur_dev());
	sweep_fds();
	for (pp = &allocs; (a = *pp); pp = &a->next)
		if (a->ptr == ptr)
			break;
	if (!a || a->vmm)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = a->next;
	munmap((void *)(uintptr_t)a->ptr, a->span);
	if (a->backing_len)
		munmap(a->backing, a->backing_len);
	/* dma-buf MRs keep their own mappings, hence the storage. */
	close(a->memfd);
	for (int i = 0; i < a->nseg; i++)
		close(a->seg[i].fd);
	free(a);
	fake_ledger_release(L_MEM);
	return CUDA_SUCCESS;
}

/* A driver before CUDA 11.7 (R470) has no export entry point. */
#ifndef FAKE_CUDA_OLD
static bool overlaps(size_t o1, size_t l1, size_t o2, size_t l2)
{
	return o1 < o2 + l2 && o2 < o1 + l1;
}

/*
 * An fd whose offset 0 is backing[off] and which shares its storage
 * (see the header); -1 with *rc set otherwise.
 */
static int export_fd(struct alloc *a, size_t off, size_t len, CUresult *rc)
{
	int fd;

	*rc = CUDA_ERROR_OPERATING_SYSTEM;
	for (int i = 0; i < a->nseg; i++) {
		if (a->seg[i].off == off && a->seg[i].len == len)
			return dup(a->seg[i].fd);
		if (overlaps(off, len, a->seg[i].off, a->seg[i].len))
			goto overlap;
	}
	if (off == 0) {
		if (len > a->base_exported)
			a->base_exported = len;
		return dup(a->memfd);
	}
	if (overlaps(off, len, 0, a->base_exported) || a->nseg == MAX_SEGS)
		goto overlap;
	fd = new_memfd(len);
	if (fd < 0)
		return -1;
	/* Keep the contents, then let the new file back the range. */
	if (pwrite(fd, a->backing + off, len, 0) != (ssize_t)len ||
	    !map_over(a->backing + off, len, fd)) {
		close(fd);
		return -1;
	}
	a->seg[a->nseg].off = off;
	a->seg[a->nseg].len = len;
	a->seg[a->nseg].fd = fd;
	a->nseg++;
	return dup(fd);
overlap:
	fprintf(stderr, "fake libcuda: dma-buf export of [+%#zx, +%#zx) "
		"overlaps an earlier, different one: not modelled\n",
		off, off + len);
	*rc = CUDA_ERROR_NOT_SUPPORTED;
	return -1;
}

CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr ptr,
		size_t size, int type, unsigned long long flags)
{
	struct alloc *a;
	CUresult err;
	long long rc;
	int fd;

	ENTER("cuMemGetHandleForAddressRange", cur_dev());
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    !size || ptr % PAGE || size % PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	/*
	 * CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (CUDA >= 12.8): taken
	 * by a GPU with gpuI.pcie_mapping = 1 (a C2C part); the H200 answered
	 * it with 801. Other bits, or a driver before 12.8: INVALID_VALUE.
	 */
	if (flags & ~(unsigned long long)CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE ||
	    (flags && fake_get_ll("driver_version", 13000) < 12080))
		return CUDA_ERROR_INVALID_VALUE;
	if (flags && !fake_getf_ll(0, "gpu%d.pcie_mapping", cur_dev()))
		return CUDA_ERROR_NOT_SUPPORTED;
	a = find_alloc(ptr, size);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	rc = fake_get_ll("export", CUDA_SUCCESS);
	if (a->vmm)
		rc = fake_get_ll("vmm.export", rc);
	if (rc != CUDA_SUCCESS)
		return (CUresult)rc;
	/* Release closed exports first: a dup may reuse their number. */
	sweep_fds();
	/* Not a dma-buf: gdrcheck's /proc/self/fd check must notice. */
	fd = export_fd(a, (size_t)(ptr - a->ptr), size, &err);
	if (fd < 0)
		return err;

	fcntl(fd, F_SETFD, FD_CLOEXEC);
	*(int *)handle = fd;
	track_fd(fd);
	return CUDA_SUCCESS;
}
#endif

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr)
{
	struct alloc *a;

	ENTER("cuPointerGetAttribute", cur_dev());
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	a = find_alloc(ptr, 1);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	/* Only the GDR-capable attribute is modelled. */
	if (attr != CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE)
		return CUDA_ERROR_NOT_SUPPORTED;
	*(int *)data = (int)fake_getf_ll(1, "gpu%d.ptr_gdr_capable", a->dev);
	return CUDA_SUCCESS;
}

/* Exactly one of @to_host / @from_host is set. */
static CUresult copy(CUdeviceptr dptr, size_t n, void *to_host,
		     const void *from_host)
{
	struct alloc *a;
	char *d;

	if (!n)
		return CUDA_SUCCESS;
	if (!to_host && !from_host)
		return CUDA_ERROR_INVALID_VALUE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	a = find_alloc(dptr, n);
	if (!a || (a->vmm && !a->access))
		return CUDA_ERROR_INVALID_VALUE;
	d = a->backing + (dptr - a->ptr);
	/* The bytes move outside the lock, as a copy engine's do beside
	 * another GPU's: freeing memory with a copy in flight is the
	 * caller's bug, here as in the driver. Depth 1: ENTER's lock. */
	pthread_mutex_unlock(&big_lock);
	if (from_host)
		memcpy(d, from_host, n);
	else
		memcpy(to_host, d, n);
	pthread_mutex_lock(&big_lock);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	ENTER("cuMemcpyHtoD_v2", cur_dev());
	return copy(dst, n, NULL, src);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	ENTER("cuMemcpyDtoH_v2", cur_dev());
	return copy(src, n, dst, NULL);
}

/* --- virtual memory management ------------------------------------------- */

#define FAKE_MAX_HANDLES 256
#define FAKE_MAX_RES	 256

static struct {
	bool live;
	int memfd;
	size_t size;
	int dev;
} handles[FAKE_MAX_HANDLES];

static struct {
	CUdeviceptr ptr;
	size_t size;
} resv[FAKE_MAX_RES];
static int nresv;

static size_t vmm_gran(void)
{
	return (size_t)fake_get_ll("vmm.granularity", (long long)GRAN);
}

/* What NCCL's ncclCuMemAlloc asks for, and nothing else is modelled. */
static bool prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       !bad_dev(prop->location.id) &&
	       (prop->requestedHandleTypes == 0 ||
		prop->requestedHandleTypes ==
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
}

CUresult cuMemGetAllocationGranularity(size_t *granularity,
		const CUmemAllocationProp *prop, int option)
{
	ENTER("cuMemGetAllocationGranularity", prop ? prop->location.id : -1);
	if (!granularity || !prop_ok(prop) ||
	    option != CU_MEM_ALLOC_GRANULARITY_MINIMUM)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = vmm_gran();
	return CUDA_SUCCESS;
}

static int handle_index(CUmemGenericAllocationHandle h)
{
	if (h < 1 || h > FAKE_MAX_HANDLES || !handles[h - 1].live)
		return -1;
	return (int)(h - 1);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	int i, fd;

	ENTER_COST("cuMemCreate", prop ? prop->location.id : -1,
		   "delay_ms.alloc");
	if (!handle || !prop_ok(prop) || flags || !size || size % vmm_gran())
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < FAKE_MAX_HANDLES && handles[i].live; i++)
		;
	if (i == FAKE_MAX_HANDLES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fd = new_memfd(size);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	handles[i].live = true;
	handles[i].memfd = fd;
	handles[i].size = size;
	handles[i].dev = prop->location.id;
	*handle = (CUmemGenericAllocationHandle)i + 1;
	fake_ledger_acquire(L_VMM);
	return CUDA_SUCCESS;
}

/* Mappings keep their own reference to the storage, as the driver does. */
CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	int i = handle_index(handle);

	ENTER("cuMemRelease", i >= 0 ? handles[i].dev : -1);
	if (i < 0)
		return CUDA_ERROR_INVALID_VALUE;
	close(handles[i].memfd);
	handles[i].live = false;
	fake_ledger_release(L_VMM);
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags)
{
	void *p;

	ENTER("cuMemAddressReserve", cur_dev());
	if (!ptr || !size || size % vmm_gran() || addr || flags ||
	    (alignment && (alignment & (alignment - 1))) || alignment > GRAN)
		return CUDA_ERROR_INVALID_VALUE;
	if (nresv == FAKE_MAX_RES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = map_aligned(size, PROT_NONE);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	resv[nresv].ptr = (CUdeviceptr)(uintptr_t)p;
	resv[nresv].size = size;
	nresv++;
	*ptr = (CUdeviceptr)(uintptr_t)p;
	fake_ledger_acquire(L_VA);
	return CUDA_SUCCESS;
}

static bool mapped_within(CUdeviceptr ptr, size_t size)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if (a->vmm && a->ptr < ptr + size && ptr < a->ptr + a->size)
			return true;
	return false;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	int i;

	ENTER("cuMemAddressFree", cur_dev());
	for (i = 0; i < nresv; i++)
		if (resv[i].ptr == ptr && resv[i].size == size)
			break;
	/* Still mapped: the caller skipped cuMemUnmap; refuse, it shows. */
	if (i == nresv || mapped_within(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)(uintptr_t)ptr, size);
	resv[i] = resv[--nresv];
	fake_ledger_release(L_VA);
	return CUDA_SUCCESS;
}

static bool reserved(CUdeviceptr ptr, size_t size)
{
	for (int i = 0; i < nresv; i++)
		if (ptr >= resv[i].ptr && size <= resv[i].size &&
		    ptr - resv[i].ptr <= resv[i].size - size)
			return true;
	return false;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	int i = handle_index(handle);
	struct alloc *a;

	ENTER("cuMemMap", i >= 0 ? handles[i].dev : -1);
	if (i < 0 || offset || flags || !size || size != handles[i].size ||
	    ptr % vmm_gran() || !reserved(ptr, size) || mapped_within(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->ptr = ptr;
	a->size = a->span = a->mlen = size;
	a->vmm = true;
	a->dev = handles[i].dev;
	a->memfd = dup(handles[i].memfd);
	if (a->memfd < 0)
		goto oom;
	/* Mapped, not accessible: cuMemSetAccess opens it. */
	if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED,
		 a->memfd, 0) == MAP_FAILED)
		goto oom_fd;
	a->backing = (char *)(uintptr_t)ptr;
	if (vmm_unmapped) {
		a->backing = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				  a->memfd, 0);
		if (a->backing == MAP_FAILED)
			goto oom_unmap;
		a->backing_len = size;
	}
	a->next = allocs;
	allocs = a;
	fake_ledger_acquire(L_MAP);
	return CUDA_SUCCESS;
oom_unmap:
	mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
oom_fd:
	close(a->memfd);
oom:
	free(a);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

static struct alloc *vmm_mapping(CUdeviceptr ptr, size_t size)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if (a->vmm && a->ptr == ptr && a->size == size)
			return a;
	return NULL;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count)
{
	struct alloc *a;
	int dev;

	{
		HOLD_LOCK;
		a = vmm_mapping(ptr, size);
		dev = a ? a->dev : cur_dev();
	}
	ENTER("cuMemSetAccess", dev);
	a = vmm_mapping(ptr, size);
	if (!a || !desc || count != 1 ||
	    desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    bad_dev(desc->location.id) ||
	    desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!vmm_unmapped &&
	    mprotect((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE))
		return CUDA_ERROR_OPERATING_SYSTEM;
	a->access = true;
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct alloc **pp, *a;

	ENTER("cuMemUnmap", cur_dev());
	sweep_fds();
	for (pp = &allocs; (a = *pp); pp = &a->next)
		if (a->vmm && a->ptr == ptr && a->size == size)
			break;
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = a->next;
	/* The address range stays reserved. */
	mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (a->backing_len)
		munmap(a->backing, a->backing_len);
	close(a->memfd);
	for (int i = 0; i < a->nseg; i++)
		close(a->seg[i].fd);
	free(a);
	fake_ledger_release(L_MAP);
	return CUDA_SUCCESS;
}
