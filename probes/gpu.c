// SPDX-License-Identifier: MIT
/* Layer 1: the GPU — driver, libcuda, cuInit, GDR and DMA-BUF attributes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/cuda.h"
#include "decode/cuda_api.h"
#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"

#define NV_VERSION "/proc/driver/nvidia/version"

static size_t pci_gpu_count(const struct gdr_ctx *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < ctx->inv.ngpu; i++)
		n += ctx->inv.gpu[i].in_sysfs;
	return n;
}

/* Functions that may be GPUs but could not be told: evidence, not zero. */
static void pci_unreadable_evidence(const struct gdr_ctx *ctx,
				    struct result *r)
{
	if (!ctx->inv.pci_unreadable)
		return;
	ev_int(r, "pci_functions_unreadable",
	       (long long)ctx->inv.pci_unreadable);
	ev_str(r, "pci_first_unreadable", "%s", ctx->inv.first_pci_unreadable);
}

void gate_gpu_driver(struct gdr_ctx *ctx, const struct target *t)
{
	const char *version;
	enum nv_flavour fl;
	struct result *r;
	int n = nvidia_module(ctx, &fl, &version);

	if (n < 0 && n != -EINVAL) {
		size_t gpus = pci_gpu_count(ctx);

		/* EACCES, ELOOP, EIO...: a driver may be there, unseen. */
		if (path_state_of(n) != PATH_ABSENT) {
			r = emit(ctx, ctx->host, ST_ERROR, C_NVIDIA_VERSION_UNREADABLE,
				 "cannot read %s: %s", NV_VERSION, sysroot_strerror(-n));
			ev_str(r, "path", "%s", NV_VERSION);
			ev_int(r, "errno", -n);
			return;
		}
		if (ctx->inv.pci_errno)
			r = emit(ctx, ctx->host, ST_BLOCKED,
				 C_NVIDIA_DRIVER_NOT_LOADED,
				 "no NVIDIA kernel driver (%s absent); the PCI "
				 "bus is unreadable (%s)", NV_VERSION,
				 strerror(ctx->inv.pci_errno));
		else
			r = emit(ctx, ctx->host, ST_BLOCKED,
				 C_NVIDIA_DRIVER_NOT_LOADED,
				 "no NVIDIA kernel driver (%s absent); %zu NVIDIA "
				 "GPU(s) on the PCI bus", NV_VERSION, gpus);
		remedy_NVIDIA_DRIVER_NOT_LOADED(r);
		ev_int(r, "pci_gpus", (long long)gpus);
		pci_unreadable_evidence(ctx, r);
		return;
	}
	if (n == -EINVAL) {
		r = emit(ctx, ctx->host, ST_WARN, C_NVIDIA_VERSION_UNRECOGNISED,
			 "NVIDIA driver loaded, but %s is not in a known format",
			 NV_VERSION);
		return;
	}
	r = emit(ctx, ctx->host, ST_PASS, C_NVIDIA_DRIVER_LOADED,
		 "NVIDIA %s kernel module %s loaded", nv_flavour_name(fl),
		 version);
	ev_str(r, "flavour", "%s", nv_flavour_name(fl));
	ev_str(r, "version", "%s", version);
}

void gate_gpu_libcuda(struct gdr_ctx *ctx, const struct target *t)
{
	const struct lib_facts *lf = &ctx->vf->cuda.lib;
	char why[256] = "";
	struct result *r;

	if (lf->loaded) {
		r = emit(ctx, ctx->host, ST_PASS, C_LIBCUDA_OK,
			 "%s loaded with every required symbol", lf->path);
		ev_str(r, "path", "%s", lf->path);
		ev_str(r, "missing_optional", "%s", lf->missing_optional);
		return;
	}
	r = not_replayed(ctx, lf, ctx->opt->libcuda, WSTAGE_CUDA, "libcuda");
	if (r) {
		remedy_NOT_REPLAYED_CUDA(r);
		return;
	}
	/* stage_problem first: it always sets why. */
	if (stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why)) || !lf->attempted) {
		if (!lf->attempted && !why[0])
			snprintf(why, sizeof(why), "the CUDA stage did not run");
		emit(ctx, ctx->host, ST_ERROR, C_LIBCUDA_PROBE_FAILED,
		     "loading libcuda: %s", why);
		return;
	}
	if (lf->missing_required[0]) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_LIBCUDA_INCOMPLETE,
			 "%s lacks required symbols: %s", lf->path,
			 lf->missing_required);
		remedy_LIBCUDA_INCOMPLETE(r);
	} else {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_LIBCUDA_NOT_FOUND,
			 "cannot load %s: %s", lf->path, lf->error);
		remedy_LIBCUDA_NOT_FOUND(r);
	}
	ev_str(r, "path", "%s", lf->path);
	ev_str(r, "error", "%s", lf->error);
}

static void cuinit_remedy(struct result *r, int rc)
{
	switch (rc) {
	case CUDA_ERROR_NO_DEVICE:
		remedy_CUDA_NO_DEVICE(r);
		break;
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
	case CUDA_ERROR_INSUFFICIENT_DRIVER:
		remedy_CUDA_DRIVER_MISMATCH(r);
		break;
	case CUDA_ERROR_OPERATING_SYSTEM:
		remedy_CUDA_OS_REFUSED(r);
		break;
	default:
		remedy_CUINIT_FAILED(r);
	}
}

void gate_gpu_cuinit(struct gdr_ctx *ctx, const struct target *t)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;
	char why[256], ver[16];
	struct result *r;

	/* DEP(GPU_LIBCUDA): libcuda is loaded; cuInit ran unless the stage
	 * failed on the way. */
	if (!cf->init.called) {
		if (!stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why)))
			snprintf(why, sizeof(why), "the CUDA stage did not "
				 "call it");
		r = emit(ctx, ctx->host, ST_ERROR, C_CUINIT_PROBE_FAILED,
			 "cuInit: %s", why);
		remedy_CUINIT_PROBE_FAILED(r);
		return;
	}
	if (cf->init.rc != CUDA_SUCCESS) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_CUINIT_FAILED,
			 "cuInit failed: %s (%d)", cf->init.name, cf->init.rc);
		cuinit_remedy(r, cf->init.rc);
		ev_str(r, "error", "%s", cf->init.name);
		ev_int(r, "rc", cf->init.rc);
		r->duration_ms = cf->init.ms;
		return;
	}
	if (!cf->version_call.called &&
	    stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why))) {
		r = emit(ctx, ctx->host, ST_ERROR, C_CUINIT_PROBE_FAILED,
			 "cuInit succeeded, then cuDriverGetVersion: %s", why);
		remedy_CUINIT_PROBE_FAILED(r);
		return;
	}
	if (cf->version_call.rc != CUDA_SUCCESS) {
		r = emit(ctx, ctx->host, ST_WARN, C_DRIVER_VERSION_UNKNOWN,
			 "cuInit succeeded; cuDriverGetVersion failed: %s",
			 cf->version_call.name);
		r->duration_ms = cf->init.ms;
		return;
	}
	if (cuda_driver_version_check(cf->driver_version)) {
		r = emit(ctx, ctx->host, ST_WARN, C_DRIVER_VERSION_OUT_OF_RANGE,
			 "cuInit succeeded; cuDriverGetVersion returned %d, "
			 "which is no CUDA version", cf->driver_version);
		ev_int(r, "driver_version", cf->driver_version);
		r->duration_ms = cf->init.ms;
		return;
	}
	cuda_version_string(cf->driver_version, ver, sizeof(ver));
	r = emit(ctx, ctx->host, ST_PASS, C_CUINIT_OK,
		 "cuInit succeeded; driver supports CUDA %s", ver);
	ev_int(r, "driver_version", cf->driver_version);
	r->duration_ms = cf->init.ms;
}

/*
 * Why a GPU on the PCI bus is not among CUDA's: hidden from this process on
 * purpose (CUDA_VISIBLE_DEVICES; a container or device cgroup that left its
 * /dev/nvidiaN out), not a fault. Fills why (the reason text) and, for the
 * remedy, the variable's value or the device node; false when neither
 * explains it (the driver lost the GPU: that is gpu.visible BLOCKED).
 */
enum hidden_by { HIDDEN_NOT = 0, HIDDEN_BY_ENV, HIDDEN_BY_CGROUP };

static enum hidden_by gpu_hidden(struct gdr_ctx *ctx, const struct inv_gpu *ig,
				 char *why, size_t len, char *what,
				 size_t wlen)
{
	char p[128], info[2048], node[48], env[512];
	const char *cvd = node_getenv(ctx, "CUDA_VISIBLE_DEVICES", env,
				      sizeof(env)) ? env : NULL;
	const char *minor;
	long long n;
	ssize_t got;

	if (cvd) {
		report_clean(what, wlen, cvd);
		snprintf(why, len, "CUDA_VISIBLE_DEVICES=%s", what);
		return HIDDEN_BY_ENV;
	}
	if (!ig->pci[0])
		return HIDDEN_NOT;
	snprintf(p, sizeof(p), "/proc/driver/nvidia/gpus/%s/information",
		 ig->pci);
	got = sysroot_read(ctx->sr, p, info, sizeof(info) - 1);
	if (got <= 0)
		return HIDDEN_NOT;
	info[got] = '\0';
	minor = strstr(info, "Device Minor:");
	if (!minor || sscanf(minor + 13, "%lld", &n) != 1 || n < 0 || n > 255)
		return HIDDEN_NOT;
	snprintf(node, sizeof(node), "/dev/nvidia%lld", n);
	if (sysroot_exists(ctx->sr, node))
		return HIDDEN_NOT;
	snprintf(what, wlen, "%s", node);
	snprintf(why, len, "its device node %s is not in this process's /dev "
		 "(a container or device cgroup)", node);
	return HIDDEN_BY_CGROUP;
}

/* The GPUs on the PCI bus CUDA did not list, all hidden on purpose? */
static bool all_missing_hidden(struct gdr_ctx *ctx, char *why, size_t len)
{
	bool any = false;

	for (size_t i = 0; i < ctx->inv.ngpu; i++) {
		const struct inv_gpu *ig = &ctx->inv.gpu[i];
		char w[256], what[128];

		if (ctx_cuda_gpu(ctx, (int)i) || !ig->in_sysfs)
			continue;
		if (!gpu_hidden(ctx, ig, w, sizeof(w), what, sizeof(what)))
			return false;
		if (!any)
			snprintf(why, len, "%s", w);
		any = true;
	}
	return any;
}

void gate_gpu_devices(struct gdr_ctx *ctx, const struct target *t)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;
	size_t pci = pci_gpu_count(ctx);
	char why[256];
	struct result *r;

	if (!cuda_usable(ctx)) {
		r = emit(ctx, ctx->host, ST_SKIP, C_CUDA_UNAVAILABLE,
			 "CUDA not initialised; %zu NVIDIA GPU(s) on the PCI bus",
			 pci);
		ev_int(r, "pci_gpus", (long long)pci);
		return;
	}
	if (!cf->count_call.called || cf->count_call.rc != CUDA_SUCCESS) {
		if (stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why)))
			emit(ctx, ctx->host, ST_ERROR, C_GPU_COUNT_PROBE_FAILED,
			     "cuDeviceGetCount: %s", why);
		else
			emit(ctx, ctx->host, ST_ERROR, C_GPU_COUNT_FAILED,
			     "cuDeviceGetCount failed: %s", cf->count_call.name);
		return;
	}
	if (cf->count < 0) {
		r = emit(ctx, ctx->host, ST_ERROR, C_GPU_COUNT_OUT_OF_RANGE,
			 "cuDeviceGetCount returned %d GPUs: not a count; %zu "
			 "NVIDIA GPU(s) on the PCI bus", cf->count, pci);
		ev_int(r, "cuda_gpus", cf->count);
		ev_int(r, "pci_gpus", (long long)pci);
		return;
	}
	if (cf->count == 0 && pci && all_missing_hidden(ctx, why,
							 sizeof(why))) {
		/* A Slurm step without --gres, CUDA_VISIBLE_DEVICES="": not
		 * the node's fault, and nothing to judge (issue 23). */
		r = emit(ctx, ctx->host, ST_SKIP, C_ALL_GPUS_HIDDEN,
			 "CUDA sees none of the %zu NVIDIA GPUs on the PCI bus: "
			 "all are hidden from this process (%s)", pci, why);
		remedy_ALL_GPUS_HIDDEN(r);
	} else if (cf->count == 0) {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_NO_CUDA_GPU,
			 "CUDA sees no GPU; %zu NVIDIA GPU(s) on the PCI bus", pci);
		remedy_NO_CUDA_GPU(r);
	} else if ((size_t)cf->count > pci) {
		r = emit(ctx, ctx->host, ST_WARN, C_PCI_GPUS_MISSING,
			 "CUDA sees %d GPU(s) but the PCI bus shows %zu NVIDIA "
			 "GPU(s): sysfs incomplete, or a sysroot from another "
			 "node?", cf->count, pci);
	} else if ((size_t)cf->count < pci &&
		   all_missing_hidden(ctx, why, sizeof(why))) {
		r = emit(ctx, ctx->host, ST_PASS, C_GPUS_HIDDEN_BY_SCOPE,
			 "CUDA sees %d of the %zu NVIDIA GPUs on the PCI bus; "
			 "the others are hidden from this process (%s)",
			 cf->count, pci, why);
	} else if ((size_t)cf->count < pci) {
		r = emit(ctx, ctx->host, ST_WARN, C_GPUS_HIDDEN,
			 "CUDA sees %d of the %zu NVIDIA GPUs on the PCI bus",
			 cf->count, pci);
		remedy_GPUS_HIDDEN(r);
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_GPUS_FOUND,
			 "CUDA sees %d GPU(s); %zu NVIDIA GPU(s) on the PCI bus",
			 cf->count, pci);
	}
	ev_int(r, "cuda_gpus", cf->count);
	ev_int(r, "pci_gpus", (long long)pci);
	pci_unreadable_evidence(ctx, r);
}

/* Was the attribute answered, and is its value in the attribute's domain? */
static int attr_state(const struct cuda_gpu *g, enum cu_attr_slot slot,
		      int attr, int val)
{
	if (g->attr_unanswered & CU_SLOT_BIT(slot))
		return -ENODATA;
	return cuda_attr_check(attr, val);
}

/* "9.0", "unknown" (not answered) or "out of range (-1.0)"; 0 or -errno. */
static int compute_capability(const struct cuda_gpu *g, char *buf, size_t len)
{
	int ma = attr_state(g, CU_SLOT_CC_MAJOR,
			    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			    g->cc_major);
	int mi = attr_state(g, CU_SLOT_CC_MINOR,
			    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			    g->cc_minor);

	if (ma == -ERANGE || mi == -ERANGE) {
		snprintf(buf, len, "out of range (major %d, minor %d)",
			 g->cc_major, g->cc_minor);
		return -ERANGE;
	}
	if (ma || mi) {
		snprintf(buf, len, "unknown");
		return -ENODATA;
	}
	snprintf(buf, len, "%d.%d", g->cc_major, g->cc_minor);
	return 0;
}

const char *gpu_compute_mode(const struct cuda_gpu *g, char *buf, size_t len)
{
	switch (attr_state(g, CU_SLOT_COMPUTE_MODE,
			   CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, g->compute_mode)) {
	case 0:
		snprintf(buf, len, "%s", cuda_compute_mode_name(g->compute_mode));
		break;
	case -ERANGE:
		snprintf(buf, len, "out of range (%d)", g->compute_mode);
		break;
	default:
		snprintf(buf, len, "unknown");
		break;
	}
	return buf;
}

/* The compute mode, when the driver answered it within its domain. */
static bool mode_is(const struct cuda_gpu *g, int mode)
{
	return g && !attr_state(g, CU_SLOT_COMPUTE_MODE,
				CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
				g->compute_mode) && g->compute_mode == mode;
}

struct result *gpu_unavailable(struct gdr_ctx *ctx, int subject,
			       const struct cuda_gpu *g, int rc,
			       const char *fn, const char *what, bool fix)
{
	struct result *r;
	char mode[48] = "unknown";

	if (rc != CUDA_ERROR_DEVICE_UNAVAILABLE)
		return NULL;
	if (g)
		gpu_compute_mode(g, mode, sizeof(mode));
	if (mode_is(g, CU_COMPUTEMODE_PROHIBITED)) {
		/* gpu.visible BLOCKED it and carries the fix. */
		r = emit(ctx, subject, ST_SKIP, C_GPU_PROHIBITED,
			 "%s not tried: compute mode PROHIBITED (see gpu.visible)",
			 what);
	} else if (mode_is(g, CU_COMPUTEMODE_EXCLUSIVE_PROCESS)) {
		r = emit(ctx, subject, ST_SKIP, C_GPU_BUSY,
			 "%s not tried: another process holds the GPU (compute "
			 "mode EXCLUSIVE_PROCESS: %s failed with "
			 "CUDA_ERROR_DEVICE_UNAVAILABLE)", what, fn);
		if (fix)
			remedy_GPU_BUSY(r);
	} else {
		/* Without EXCLUSIVE_PROCESS the driver's word is all there is. */
		r = emit(ctx, subject, ST_SKIP, C_GPU_BUSY,
			 "%s not tried: %s failed with "
			 "CUDA_ERROR_DEVICE_UNAVAILABLE (compute mode %s): the "
			 "driver says the GPU is busy or unavailable; another "
			 "process may hold it", what, fn, mode);
		if (fix)
			remedy_GPU_BUSY(r);
	}
	ev_str(r, "compute_mode", "%s", mode);
	ev_str(r, "failed_call", "%s", fn);
	ev_str(r, "error", "CUDA_ERROR_DEVICE_UNAVAILABLE");
	return r;
}

bool gpu_pre_turing(const struct cuda_gpu *g)
{
	char cc[48];

	return g && !compute_capability(g, cc, sizeof(cc)) &&
	       (g->cc_major < 7 || (g->cc_major == 7 && g->cc_minor < 5));
}

void gate_gpu_visible(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_gpu *ig = &ctx->inv.gpu[t->gpu];
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, t->gpu);
	char cc[48], mode[48], mode_note[64] = "";
	struct result *r;
	int cc_bad;

	if (!g) {
		const struct cuda_facts *cf = &ctx->vf->cuda;
		char why[256];

		if (!cuda_usable(ctx)) {
			emit(ctx, ig->subject, ST_SKIP, C_CUDA_UNAVAILABLE,
			     "on the PCI bus; CUDA not initialised");
			return;
		}
		/*
		 * CUDA did not finish enumerating, or gave no count to trust:
		 * visibility is unknown.
		 */
		if (!cf->count_call.called || cf->count_call.rc != CUDA_SUCCESS ||
		    cf->count < 0 ||
		    stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why))) {
			if (cf->count_call.called &&
			    cf->count_call.rc != CUDA_SUCCESS)
				snprintf(why, sizeof(why),
					 "cuDeviceGetCount failed: %s",
					 cf->count_call.name);
			else if (cf->count_call.called && cf->count < 0)
				snprintf(why, sizeof(why),
					 "cuDeviceGetCount returned %d",
					 cf->count);
			else if (!cf->count_call.called)
				stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why));
			emit(ctx, ig->subject, ST_ERROR, C_CUDA_ENUM_INCOMPLETE,
			     "on the PCI bus at %s; CUDA enumeration did not "
			     "finish: %s", ig->pci, why);
			return;
		}
		char what[128];

		switch (gpu_hidden(ctx, ig, why, sizeof(why), what,
				   sizeof(what))) {
		case HIDDEN_BY_ENV:
			r = emit(ctx, ig->subject, ST_SKIP, C_GPU_HIDDEN,
				 "on the PCI bus at %s but not visible to this "
				 "process: %s", ig->pci, why);
			ev_str(r, "hidden_by", "CUDA_VISIBLE_DEVICES");
			remedy_GPU_HIDDEN_BY_ENV(r, what);
			return;
		case HIDDEN_BY_CGROUP:
			r = emit(ctx, ig->subject, ST_SKIP, C_GPU_HIDDEN,
				 "on the PCI bus at %s but not visible to this "
				 "process: %s", ig->pci, why);
			ev_str(r, "hidden_by", "cgroup");
			ev_str(r, "device_node", "%s", what);
			remedy_GPU_HIDDEN_BY_CGROUP(r, what);
			return;
		case HIDDEN_NOT:
			break;
		}
		r = emit(ctx, ig->subject, ST_BLOCKED, C_GPU_NOT_VISIBLE,
			 "on the PCI bus at %s but not visible to CUDA", ig->pci);
		remedy_GPU_NOT_VISIBLE(r);
		return;
	}
	if (g->enum_call.called && strcmp(g->enum_fn, "cuDeviceTotalMem_v2")) {
		emit(ctx, ig->subject, ST_ERROR, C_CUDA_ENUM_FAILED,
		     "CUDA device %d: %s failed: %s", g->ordinal, g->enum_fn,
		     g->enum_call.name);
		return;
	}
	if (!g->complete) {
		char why[256];

		if (!stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why)))
			snprintf(why, sizeof(why), "its queries did not finish");
		emit(ctx, ig->subject, ST_ERROR, C_CUDA_ENUM_INCOMPLETE,
		     "CUDA device %d: %s", g->ordinal, why);
		return;
	}
	cc_bad = compute_capability(g, cc, sizeof(cc));
	gpu_compute_mode(g, mode, sizeof(mode));
	/* DEFAULT, or unknown (an older capture), is no news in the text. */
	if (strcmp(mode, "DEFAULT") && strcmp(mode, "unknown"))
		snprintf(mode_note, sizeof(mode_note), "; compute mode %s", mode);
	if (mode_is(g, CU_COMPUTEMODE_PROHIBITED)) {
		r = emit(ctx, ig->subject, ST_BLOCKED, C_GPU_COMPUTE_PROHIBITED,
			 "CUDA device %d: %s, compute capability %s; compute "
			 "mode PROHIBITED: no process may create a CUDA context "
			 "on it", g->ordinal,
			 g->name[0] ? g->name : "(name unknown)", cc);
		remedy_GPU_COMPUTE_PROHIBITED(r, g->pci[0] ? g->pci : ig->pci);
	} else if (cc_bad == -ERANGE) {
		r = emit(ctx, ig->subject, ST_WARN, C_CC_OUT_OF_RANGE,
			 "CUDA device %d: %s, compute capability %s%s",
			 g->ordinal, g->name[0] ? g->name : "(name unknown)", cc,
			 mode_note);
	} else {
		r = emit(ctx, ig->subject, ST_PASS, C_GPU_VISIBLE,
			 "CUDA device %d: %s, compute capability %s%s",
			 g->ordinal, g->name[0] ? g->name : "(name unknown)", cc,
			 mode_note);
	}
	ev_int(r, "cuda_ordinal", g->ordinal);
	ev_str(r, "name", "%s", g->name);
	ev_str(r, "pci", "%s", g->pci);
	ev_str(r, "compute_capability", "%s", cc);
	/* Unanswered (a capture from before it was asked): no key, so such
	 * a replay gives the node's own evidence. */
	if (strcmp(mode, "unknown"))
		ev_str(r, "compute_mode", "%s", mode);
	ev_int(r, "total_mem_bytes", (long long)g->total_mem);
	ev_bool(r, "in_sysfs", ig->in_sysfs);
}

/* A GPU gate's preamble: the CUDA facts, or a SKIP/ERROR already emitted. */
static const struct cuda_gpu *gpu_or_skip(struct gdr_ctx *ctx,
					  const struct target *t)
{
	const struct inv_gpu *ig = &ctx->inv.gpu[t->gpu];
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, t->gpu);

	/* Not a DEP: a GPU whose gpu.visible ERRORs still has attributes. */
	if (!g)
		emit(ctx, ig->subject, ST_SKIP, C_GPU_NOT_IN_CUDA,
		     "not visible to this process (see gpu.visible)");
	return g;
}

static void attr_error(struct gdr_ctx *ctx, int subject,
		       const struct cuda_gpu *g, const char *attr)
{
	char why[256];

	if (g->enum_call.called && strcmp(g->enum_fn, "cuDeviceTotalMem_v2"))
		emit(ctx, subject, ST_ERROR, C_CUDA_ENUM_FAILED,
		     "%s unknown: %s failed: %s", attr, g->enum_fn,
		     g->enum_call.name);
	else if (stage_problem(ctx, WSTAGE_CUDA, why, sizeof(why)))
		emit(ctx, subject, ST_ERROR, C_ATTR_PROBE_FAILED,
		     "%s: %s", attr, why);
	else
		emit(ctx, subject, ST_ERROR, C_ATTR_QUERY_FAILED,
		     "cuDeviceGetAttribute(%s) failed: %s", attr,
		     g->attr_call.name);
}

static void attr_out_of_range(struct gdr_ctx *ctx, int subject,
			      const char *attr, int val, const char *domain)
{
	struct result *r;

	r = emit(ctx, subject, ST_ERROR, C_ATTR_VALUE_OUT_OF_RANGE,
		 "cuDeviceGetAttribute(%s) returned %d, outside its domain "
		 "(%s): the driver's answer cannot be used", attr, val, domain);
	ev_str(r, "attribute", "%s", attr);
	ev_int(r, "value", val);
}

static const char *ordering_name(int v)
{
	switch (v) {
	case CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE: return "none";
	case CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER: return "owner";
	case CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES: return "all_devices";
	default: return "unknown";
	}
}

void gate_gpu_gdr_attr(struct gdr_ctx *ctx, const struct target *t)
{
	const struct cuda_gpu *g = gpu_or_skip(ctx, t);
	int subject = ctx->inv.gpu[t->gpu].subject;
	struct result *r;
	int ret;

	if (!g)
		return;
	ret = attr_state(g, CU_SLOT_GDR,
			 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, g->attr_gdr);
	if (ret == -ENODATA) {
		attr_error(ctx, subject, g, "GPU_DIRECT_RDMA_SUPPORTED");
		return;
	}
	if (ret) {
		attr_out_of_range(ctx, subject, "GPU_DIRECT_RDMA_SUPPORTED",
				  g->attr_gdr, "0 or 1");
		return;
	}
	if (g->attr_gdr) {
		r = emit(ctx, subject, ST_PASS, C_GDR_SUPPORTED,
			 "GPU_DIRECT_RDMA_SUPPORTED = 1 (the GPU side only: "
			 "proves nothing end to end)");
	} else {
		r = emit(ctx, subject, ST_BLOCKED, C_GDR_NOT_SUPPORTED,
			 "GPU_DIRECT_RDMA_SUPPORTED = 0: the driver will not "
			 "let a NIC DMA this GPU's memory");
		remedy_GDR_NOT_SUPPORTED(r);
	}
	ev_int(r, "gpu_direct_rdma_supported", g->attr_gdr);
	/* Side facts: the raw value always, its meaning only in domain. */
	ret = attr_state(g, CU_SLOT_FLUSH,
			 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
			 g->attr_flush);
	if (ret != -ENODATA)
		ev_int(r, "flush_writes_options", g->attr_flush);
	if (ret == 0) {
		ev_bool(r, "flush_host",
			g->attr_flush & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST);
		ev_bool(r, "flush_memops",
			g->attr_flush & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS);
	} else if (ret == -ERANGE) {
		ev_str(r, "flush_writes_options_domain", "out of range");
	}
	ret = attr_state(g, CU_SLOT_ORDERING,
			 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
			 g->attr_ordering);
	if (ret != -ENODATA) {
		ev_int(r, "writes_ordering", g->attr_ordering);
		ev_str(r, "writes_ordering_scope", "%s", ret ? "out of range" :
		       ordering_name(g->attr_ordering));
	}
	ret = attr_state(g, CU_SLOT_VMM_GDR,
			 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
			 g->attr_vmm_gdr);
	if (ret != -ENODATA)
		ev_int(r, "rdma_with_cuda_vmm", g->attr_vmm_gdr);
	if (ret == -ERANGE)
		ev_str(r, "rdma_with_cuda_vmm_domain", "out of range");
}

void gate_gpu_dmabuf_attr(struct gdr_ctx *ctx, const struct target *t)
{
	const struct cuda_gpu *g = gpu_or_skip(ctx, t);
	int subject = ctx->inv.gpu[t->gpu].subject;
	const struct cu_call *vc = &ctx->vf->cuda.version_call;
	int drv = ctx->vf->cuda.driver_version;
	char ver[16];
	struct result *r;
	int ret;

	if (!g)
		return;
	if (vc->called && vc->rc == CUDA_SUCCESS &&
	    cuda_driver_version_check(drv)) {
		r = emit(ctx, subject, ST_ERROR, C_DRIVER_VERSION_OUT_OF_RANGE,
			 "cannot tell whether the driver is >= CUDA 11.7: "
			 "cuDriverGetVersion returned %d", drv);
		ev_int(r, "driver_version", drv);
		return;
	}
	if (!drv) {
		emit(ctx, subject, ST_ERROR, C_DRIVER_VERSION_UNKNOWN,
		     "cannot tell whether the driver is >= CUDA 11.7: "
		     "cuDriverGetVersion failed (%s)",
		     ctx->vf->cuda.version_call.called ?
		     ctx->vf->cuda.version_call.name : "did not return");
		return;
	}
	cuda_version_string(drv, ver, sizeof(ver));
	if (drv < CUDA_DRIVER_MIN_DMABUF) {
		r = emit(ctx, subject, ST_BLOCKED, C_DRIVER_TOO_OLD_FOR_DMABUF,
			 "driver supports CUDA %s; DMA-BUF export needs >= 11.7",
			 ver);
		/* No driver upgrade gives a Volta GPU DMA-BUF (nccl-dgx1-v100). */
		if (gpu_pre_turing(g))
			remedy_DMABUF_PRE_TURING(r, g->cc_major, g->cc_minor);
		else
			remedy_DRIVER_TOO_OLD_FOR_DMABUF(r);
		ev_int(r, "driver_version", drv);
		return;
	}
	ret = attr_state(g, CU_SLOT_DMABUF,
			 CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, g->attr_dmabuf);
	if (ret == -ENODATA) {
		attr_error(ctx, subject, g, "DMA_BUF_SUPPORTED");
		return;
	}
	if (ret) {
		attr_out_of_range(ctx, subject, "DMA_BUF_SUPPORTED",
				  g->attr_dmabuf, "0 or 1");
		return;
	}
	if (g->attr_dmabuf) {
		r = emit(ctx, subject, ST_PASS, C_DMABUF_SUPPORTED,
			 "DMA_BUF_SUPPORTED = 1, driver CUDA %s", ver);
	} else {
		r = emit(ctx, subject, ST_BLOCKED, C_DMABUF_NOT_SUPPORTED,
			 "DMA_BUF_SUPPORTED = 0: CUDA will not export this GPU's "
			 "memory as a dma-buf");
		if (gpu_pre_turing(g))
			remedy_DMABUF_PRE_TURING(r, g->cc_major, g->cc_minor);
		else
			remedy_DMABUF_NOT_SUPPORTED(r);
	}
	ev_int(r, "dma_buf_supported", g->attr_dmabuf);
	ev_int(r, "driver_version", drv);
}
