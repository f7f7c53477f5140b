// SPDX-License-Identifier: MIT
/* libcuda through a dlopen'd function table; no CUDA toolkit needed. */
#include "core/clock.h"
#include "access/cuda.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/cuda_api.h"
#include "access/par.h"
#include "access/symtab.h"


#define SYM(n, field, req) { .name = n, .version = NULL, \
	.offset = offsetof(struct cuda_table, field), .required = req }

static const struct sym_entry cuda_syms[] = {
	SYM("cuInit", init, true),
	SYM("cuDriverGetVersion", driver_get_version, true),
	SYM("cuDeviceGetCount", device_get_count, true),
	SYM("cuDeviceGet", device_get, true),
	SYM("cuDeviceGetName", device_get_name, true),
	SYM("cuDeviceGetAttribute", device_get_attribute, true),
	SYM("cuDeviceGetPCIBusId", device_get_pci_bus_id, true),
	SYM("cuDeviceTotalMem_v2", device_total_mem, true),
	SYM("cuGetErrorName", get_error_name, false),
	SYM("cuDevicePrimaryCtxRetain", primary_ctx_retain, true),
	SYM("cuDevicePrimaryCtxRelease_v2", primary_ctx_release, true),
	SYM("cuCtxSetCurrent", ctx_set_current, true),
	SYM("cuMemAlloc_v2", mem_alloc, true),
	SYM("cuMemFree_v2", mem_free, true),
	/* CUDA >= 11.7 only: its absence is the "driver too old" finding. */
	SYM("cuMemGetHandleForAddressRange", mem_get_handle_for_address_range,
	    false),
	SYM("cuPointerGetAttribute", pointer_get_attribute, false),
	SYM("cuMemcpyHtoD_v2", memcpy_htod, false),
	SYM("cuMemcpyDtoH_v2", memcpy_dtoh, false),
	/* VMM, as NCCL allocates (access/reg.c); optional like the export. */
	SYM("cuMemGetAllocationGranularity", mem_get_allocation_granularity,
	    false),
	SYM("cuMemCreate", mem_create, false),
	SYM("cuMemRelease", mem_release, false),
	SYM("cuMemAddressReserve", mem_address_reserve, false),
	SYM("cuMemAddressFree", mem_address_free, false),
	SYM("cuMemMap", mem_map, false),
	SYM("cuMemUnmap", mem_unmap, false),
	SYM("cuMemSetAccess", mem_set_access, false),
};

static void record(struct cu_call *c, int rc, double t0);

/* Process-wide state of the worker: loaded once, initialised once. */
static struct cuda_table cu;
static void *cuda_handle;
static bool cuda_init_ok;

/*
 * Primary contexts are retained once per GPU for the worker's life: the
 * export check and the registrations share them, instead of paying the
 * driver's context creation and teardown (~0.2 s on an H200) twice.
 */
static struct primary_ctx {
	bool held;
	CUdevice dev;
	CUcontext ctx;
} *primary;
static int nprimary;

/* Room for @ordinal in primary[] (the worker's heap, left by _exit). */
static bool primary_room(int ordinal)
{
	struct primary_ctx *p;
	int n;

	if (ordinal < nprimary)
		return true;
	n = ordinal + 1 > 2 * nprimary ? ordinal + 1 : 2 * nprimary;
	p = realloc(primary, (size_t)n * sizeof(*p));
	if (!p)
		return false;
	memset(p + nprimary, 0, (size_t)(n - nprimary) * sizeof(*p));
	primary = p;
	nprimary = n;
	return true;
}

int cuda_primary_ctx(int ordinal, CUcontext *ctx, struct cu_call *rec,
		     struct stage_status *st)
{
	double t0;
	int rc;

	if (ordinal < 0 || ordinal >= VF_CAPS_MAX_GPUS)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!primary_room(ordinal))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!primary[ordinal].held) {
		stage_enter(st, "cuDeviceGet");
		rc = cu.device_get(&primary[ordinal].dev, ordinal);
		if (rc != CUDA_SUCCESS)
			return rc;
		stage_enter(st, "cuDevicePrimaryCtxRetain");
		t0 = now_ms();
		rc = cu.primary_ctx_retain(&primary[ordinal].ctx,
					   primary[ordinal].dev);
		if (rec)
			record(rec, rc, t0);
		if (rc != CUDA_SUCCESS)
			return rc;
		primary[ordinal].held = true;
	}
	*ctx = primary[ordinal].ctx;
	return CUDA_SUCCESS;
}

void cuda_release_all(void)
{
	if (!cuda_handle)
		return;
	cu.ctx_set_current(NULL);
	for (int i = 0; i < nprimary; i++)
		if (primary[i].held) {
			cu.primary_ctx_release(primary[i].dev);
			primary[i].held = false;
		}
}

const char *cuda_result_name(int rc)
{
	switch (rc) {
	case CUDA_SUCCESS: return "CUDA_SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
	case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
	case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
	case CUDA_ERROR_INSUFFICIENT_DRIVER: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
	case CUDA_ERROR_DEVICE_UNAVAILABLE: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
	case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
	case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
	case CUDA_ERROR_SYSTEM_NOT_READY: return "CUDA_ERROR_SYSTEM_NOT_READY";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
	case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
	default: return NULL;
	}
}

/* Mark the call in progress, so a hang or crash names it (per GPU inside
 * par_for: access/par.h). */
static void enter(struct stage_status *st, const char *call)
{
	stage_enter(st, call);
}

static void record(struct cu_call *c, int rc, double t0)
{
	const char *name = NULL;

	c->called = true;
	c->rc = rc;
	c->ms = now_ms() - t0;
	if (cu.get_error_name && cu.get_error_name(rc, &name) != CUDA_SUCCESS)
		name = NULL;
	if (!name)
		name = cuda_result_name(rc);
	if (name)
		snprintf(c->name, sizeof(c->name), "%s", name);
	else
		snprintf(c->name, sizeof(c->name), "CUresult %d", rc);
}

/* Load and cuInit once per worker process. */
static bool cuda_ready(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st)
{
	struct cuda_facts *cf = &vf->cuda;
	double t0;
	int rc;

	if (opt->cuda_poisoned)
		return false;
	if (cuda_handle)
		return cuda_init_ok;
	memset(&cf->lib, 0, sizeof(cf->lib));
	enter(st, "dlopen");
	cuda_handle = symtab_load(opt->libcuda ? opt->libcuda : LIBCUDA_DEFAULT,
				  cuda_syms, sizeof(cuda_syms) / sizeof(cuda_syms[0]),
				  &cu, &cf->lib);
	if (!cuda_handle)
		return false;
	cf->have_export_fn = cu.mem_get_handle_for_address_range != NULL;

	enter(st, "cuInit");
	t0 = now_ms();
	rc = cu.init(0);
	record(&cf->init, rc, t0);
	if (rc != CUDA_SUCCESS)
		return false;
	enter(st, "cuDriverGetVersion");
	t0 = now_ms();
	rc = cu.driver_get_version(&cf->driver_version);
	record(&cf->version_call, rc, t0);
	if (rc != CUDA_SUCCESS)
		cf->driver_version = 0;
	cuda_init_ok = true;
	return true;
}

static int query_attr(struct cuda_gpu *g, CUdevice dev, int attr,
		      enum cu_attr_slot slot, struct stage_status *st)
{
	double t0 = now_ms();
	int val = 0, rc;

	enter(st, "cuDeviceGetAttribute");
	rc = cu.device_get_attribute(&val, attr, dev);
	if (rc != CUDA_SUCCESS) {
		record(&g->attr_call, rc, t0);
		return CU_ATTR_UNKNOWN;
	}
	/* Any value, INT32_MIN included: the probes check its domain. */
	g->attr_unanswered &= ~CU_SLOT_BIT(slot);
	return val;
}

/*
 * "00000000:3B:00.0" -> "0000:3b:00.0", the sysfs spelling (%04x: at least
 * four digits, more for a domain above ffff).
 */
static void normalise_bus_id(const char *in, char *out, size_t len)
{
	unsigned int dom = 0, bus = 0, dev = 0, fn = 0;
	char tail;

	/*
	 * Domains above ffff exist (Intel VMD: 10000): keep them. A bus,
	 * device or function outside its field is no address: leave it
	 * unknown rather than fold it onto another function.
	 */
	out[0] = '\0';
	if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 &&
	    bus <= 0xff && dev <= 0x1f && fn <= 7)
		snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
}

void cuda_stage_query(const struct vendor_options *opt,
		      struct vendor_facts *vf, struct stage_status *st)
{
	struct cuda_facts *cf = &vf->cuda;
	double t0;
	int rc, n;

	if (!cuda_ready(opt, vf, st))
		return;
	enter(st, "cuDeviceGetCount");
	t0 = now_ms();
	rc = cu.device_get_count(&cf->count);
	record(&cf->count_call, rc, t0);
	if (rc != CUDA_SUCCESS) {
		cf->count = 0;
		return;
	}
	n = cf->count < vf->cap.gpus ? cf->count : vf->cap.gpus;
	for (int i = 0; i < n; i++) {
		struct cuda_gpu *g = &cf->gpus[i];
		char bus[64] = "";
		size_t mem = 0;
		CUdevice dev;

		g->ordinal = i;
		g->ptr_gdr_capable = CU_ATTR_UNKNOWN;
		g->fd_size = -1;
		/* Unknown until asked; recorded now so a crash mid-way still
		 * leaves this GPU in the report. */
		g->cc_major = g->cc_minor = CU_ATTR_UNKNOWN;
		g->attr_gdr = g->attr_dmabuf = g->attr_flush = CU_ATTR_UNKNOWN;
		g->attr_ordering = g->attr_vmm_gdr = CU_ATTR_UNKNOWN;
		g->compute_mode = CU_ATTR_UNKNOWN;
		g->attr_unanswered = ~0u;
		cf->gpus_recorded = i + 1;
		enter(st, "cuDeviceGet");
		t0 = now_ms();
		rc = cu.device_get(&dev, i);
		if (rc != CUDA_SUCCESS) {
			record(&g->enum_call, rc, t0);
			snprintf(g->enum_fn, sizeof(g->enum_fn), "cuDeviceGet");
			continue;
		}
		enter(st, "cuDeviceGetName");
		if (cu.device_get_name(g->name, sizeof(g->name), dev) !=
		    CUDA_SUCCESS)
			g->name[0] = '\0';
		g->name[sizeof(g->name) - 1] = '\0';
		enter(st, "cuDeviceGetPCIBusId");
		t0 = now_ms();
		rc = cu.device_get_pci_bus_id(bus, sizeof(bus), dev);
		if (rc == CUDA_SUCCESS) {
			bus[sizeof(bus) - 1] = '\0';
			normalise_bus_id(bus, g->pci, sizeof(g->pci));
		} else {
			record(&g->enum_call, rc, t0);
			snprintf(g->enum_fn, sizeof(g->enum_fn),
				 "cuDeviceGetPCIBusId");
		}
		enter(st, "cuDeviceTotalMem_v2");
		t0 = now_ms();
		rc = cu.device_total_mem(&mem, dev);
		if (rc == CUDA_SUCCESS) {
			g->total_mem = mem;
		} else if (!g->enum_call.called) {
			record(&g->enum_call, rc, t0);
			snprintf(g->enum_fn, sizeof(g->enum_fn),
				 "cuDeviceTotalMem_v2");
		}
		g->cc_major = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			CU_SLOT_CC_MAJOR, st);
		g->cc_minor = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			CU_SLOT_CC_MINOR, st);
		g->attr_gdr = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
			CU_SLOT_GDR, st);
		g->attr_dmabuf = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
			CU_SLOT_DMABUF, st);
		g->attr_flush = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
			CU_SLOT_FLUSH, st);
		g->attr_ordering = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
			CU_SLOT_ORDERING, st);
		g->attr_vmm_gdr = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
			CU_SLOT_VMM_GDR, st);
		/* Whether another process may hold the GPU (EXCLUSIVE_PROCESS). */
		g->compute_mode = query_attr(g, dev,
			CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_SLOT_COMPUTE_MODE, st);
		g->complete = true;
	}
}

/*
 * Prove the exported fd is a dma-buf: the kernel names dma-buf files
 * "/dmabuf:<name>" and shows the exporter and size in fdinfo. These are
 * facts about this very process, so they are read from the live /proc,
 * never from --sysroot.
 */
static void inspect_dmabuf_fd(int fd, struct cuda_gpu *g)
{
	char path[64], info[1024];
	ssize_t n;
	int ifd;

	g->fd_checked = true;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, g->fd_link, sizeof(g->fd_link) - 1);
	g->fd_link[n > 0 ? n : 0] = '\0';
	g->fd_is_dmabuf = !strncmp(g->fd_link, "/dmabuf:", 8);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ifd = open(path, O_RDONLY | O_CLOEXEC);
	if (ifd < 0)
		return;
	n = read(ifd, info, sizeof(info) - 1);
	close(ifd);
	if (n <= 0)
		return;
	info[n] = '\0';
	for (char *save = NULL, *line = strtok_r(info, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "exp_name:", 9))
			sscanf(line + 9, " %31s", g->fd_exp_name);
		else if (!strncmp(line, "size:", 5))
			sscanf(line + 5, " %lld", &g->fd_size);
	}
}

static void export_one(struct cuda_gpu *g, struct stage_status *st)
{
	CUcontext ctx = NULL;
	CUdeviceptr ptr = 0;
	double t0;
	int rc, fd = -1;

	if (cuda_primary_ctx(g->ordinal, &ctx, &g->ctx_retain, st) !=
	    CUDA_SUCCESS)
		return;
	enter(st, "cuCtxSetCurrent");
	t0 = now_ms();
	rc = cu.ctx_set_current(ctx);
	if (rc != CUDA_SUCCESS) {
		record(&g->setup_call, rc, t0);
		return;
	}

	enter(st, "cuMemAlloc_v2");
	t0 = now_ms();
	rc = cu.mem_alloc(&ptr, CUDA_EXPORT_BYTES);
	record(&g->alloc, rc, t0);
	if (rc != CUDA_SUCCESS)
		goto unset;

	if (cu.pointer_get_attribute) {
		int capable = 0;

		enter(st, "cuPointerGetAttribute");
		if (cu.pointer_get_attribute(&capable,
				CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
				ptr) == CUDA_SUCCESS)
			g->ptr_gdr_capable = capable;
	}
	if (cu.mem_get_handle_for_address_range) {
		enter(st, "cuMemGetHandleForAddressRange");
		t0 = now_ms();
		rc = cu.mem_get_handle_for_address_range(&fd, ptr,
				CUDA_EXPORT_BYTES,
				CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
		record(&g->export_call, rc, t0);
		g->export_size = CUDA_EXPORT_BYTES;
		if (rc == CUDA_SUCCESS && fd >= 0) {
			inspect_dmabuf_fd(fd, g);
			close(fd);
		}
	}
	enter(st, "cuMemFree_v2");
	cu.mem_free(ptr);
unset:
	enter(st, "cuCtxSetCurrent");
	cu.ctx_set_current(NULL);
}

const struct cuda_table *cuda_api(const struct vendor_options *opt,
				  struct vendor_facts *vf,
				  struct stage_status *st)
{
	return cuda_ready(opt, vf, st) ? &cu : NULL;
}

void cuda_call_record(struct cu_call *c, int rc, double t0)
{
	record(c, rc, t0);
}

bool cuda_primary_reserve(int n)
{
	return n <= 0 || primary_room(n - 1);
}

struct export_run {
	struct cuda_facts *cf;
	struct stage_status *st;
};

static void export_item(void *arg, int i)
{
	struct export_run *er = arg;

	export_one(&er->cf->gpus[i], er->st);
}

/* Each GPU on a thread of its own (access/par.h): its context, allocation
 * and export write only its own cuda_gpu and primary[] entry. */
void cuda_stage_export(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st)
{
	struct cuda_facts *cf = &vf->cuda;
	struct export_run er = { .cf = cf, .st = st };
	int n = vf_upto(cf->gpus_recorded, vf->cap.gpus);

	if (!cuda_ready(opt, vf, st))
		return;
	if (!cuda_primary_reserve(n)) {
		for (int i = 0; i < n; i++)
			export_one(&cf->gpus[i], st);
		return;
	}
	par_for(st, n, export_item, &er);
}
