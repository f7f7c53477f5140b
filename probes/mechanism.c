// SPDX-License-Identifier: MIT
/*
 * Layer 3: the registration mechanisms. peermem (nvidia_peermem makes
 * ibv_reg_mr accept a CUDA pointer) and DMA-BUF (CUDA exports a dma-buf fd,
 * ibv_reg_dmabuf_mr imports it) are two ways to build the same GPU MR.
 * GDRCopy is reported for information only: it is not GPUDirect RDMA.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access/cuda.h"
#include "decode/cuda_api.h"
#include "access/sysroot.h"
#include "decode/parse.h"
#include "probes/probes.h"

/* The paths NCCL's IB transport checks, in its order. */
static const struct {
	const char *key;
	const char *path;
} peermem_paths[] = {
	{ "memory_peers_nv_mem", "/sys/kernel/mm/memory_peers/nv_mem/version" },
	{ "memory_peers_nv_mem_nc", "/sys/kernel/mm/memory_peers/nv_mem_nc/version" },
	{ "module_nvidia_peermem", "/sys/module/nvidia_peermem/version" },
	{ "module_nv_peer_mem", "/sys/module/nv_peer_mem/version" },
};

void gate_mech_peermem(struct gdr_ctx *ctx, const struct target *t)
{
	bool have[4], memory_peers, module;
	int err[4], unreadable = -1;
	char efa_first[160];
	size_t efa_p2p;
	struct result *r;

	for (size_t i = 0; i < 4; i++) {
		err[i] = sysroot_access(ctx->sr, peermem_paths[i].path);
		have[i] = path_state_of(err[i]) == PATH_PRESENT;
		if (unreadable < 0 &&
		    path_state_of(err[i]) == PATH_UNREADABLE)
			unreadable = (int)i;
	}
	memory_peers = have[0] || have[1];
	module = have[2] || have[3];

	if (memory_peers) {
		r = emit(ctx, ctx->host, ST_PASS, C_PEERMEM_REGISTERED,
			 "a GPU peer-memory client is registered (%s)",
			 have[0] ? "memory_peers/nv_mem" : "memory_peers/nv_mem_nc");
	} else if (unreadable >= 0) {
		/* A path we cannot look at may hold the client: no verdict. */
		r = emit(ctx, ctx->host, ST_ERROR, C_PEERMEM_UNREADABLE,
			 "cannot tell whether a GPU peer-memory client is "
			 "loaded: %s: %s", peermem_paths[unreadable].path,
			 sysroot_strerror(-err[unreadable]));
		ev_str(r, "path", "%s", peermem_paths[unreadable].path);
		ev_int(r, "errno", -err[unreadable]);
	} else if (module) {
		r = emit(ctx, ctx->host, ST_WARN, C_PEERMEM_MODULE_ONLY,
			 "%s is loaded but /sys/kernel/mm/memory_peers is absent: "
			 "NCCL <= 2.22 checks only memory_peers and will not use it",
			 have[2] ? "nvidia_peermem" : "nv_peer_mem");
		remedy_PEERMEM_MODULE_ONLY(r);
	} else if (node_efa_only(ctx, &efa_p2p, efa_first, sizeof(efa_first))) {
		/* platform.provider: the efa driver pins GPU memory itself. */
		if (efa_p2p) {
			r = emit(ctx, ctx->host, ST_PASS, C_PEERMEM_EFA_P2P,
				 "every RDMA device is an AWS EFA and %zu name a "
				 "GPU memory provider in device/p2p (%s): the "
				 "efa driver pins GPU memory for ibv_reg_mr "
				 "itself, nvidia_peermem is not needed", efa_p2p,
				 efa_first);
		} else {
			r = emit(ctx, ctx->host, ST_BLOCKED,
				 C_PEERMEM_EFA_NO_P2P, "every RDMA device is an "
				 "AWS EFA and none names a GPU memory provider "
				 "in device/p2p: ibv_reg_mr on GPU memory has "
				 "no provider (nvidia_peermem does not serve "
				 "EFA)");
			remedy_PEERMEM_EFA_NO_P2P(r);
		}
	} else {
		const struct result *cr = ctx_result_of(ctx, "host.container",
							ctx->host);
		/* Read before emit: emit may move the results (realloc). */
		int cc = cr ? cr->code_index : -1;

		r = emit(ctx, ctx->host, ST_BLOCKED, C_PEERMEM_NOT_LOADED,
			 "no GPU peer-memory client: nvidia_peermem (or the old "
			 "nv_peer_mem) is not loaded");
		/* A container cannot load the host's modules (container-*). */
		if (cc == C_IN_CONTAINER || cc == C_CONTAINER_NO_UVERBS ||
		    cc == C_CONTAINER_MEMLOCK_NO_IPC_LOCK)
			remedy_PEERMEM_NOT_LOADED_CONTAINER(r);
		else
			remedy_PEERMEM_NOT_LOADED(r);
	}
	for (size_t i = 0; i < 4; i++) {
		if (path_state_of(err[i]) == PATH_UNREADABLE)
			ev_str(r, peermem_paths[i].key, "unreadable: %s",
			       strerrorname_np(-err[i]));
		else
			ev_bool(r, peermem_paths[i].key, have[i]);
	}
}

void gate_mech_dmabuf_module(struct gdr_ctx *ctx, const struct target *t)
{
	const char *version;
	enum nv_flavour fl;
	struct result *r;
	int n = nvidia_module(ctx, &fl, &version);

	/* Not a DEP on gpu.driver: absent and unreadable are two codes. */
	if (n < 0 && n != -EINVAL && path_state_of(n) == PATH_ABSENT) {
		emit(ctx, ctx->host, ST_SKIP, C_NVIDIA_DRIVER_NOT_LOADED,
		     "no NVIDIA kernel driver (see gpu.driver)");
		return;
	}
	if (n < 0 && n != -EINVAL) {
		r = emit(ctx, ctx->host, ST_SKIP, C_NVIDIA_VERSION_UNREADABLE,
			 "cannot read /proc/driver/nvidia/version: %s (see "
			 "gpu.driver)", sysroot_strerror(-n));
		ev_int(r, "errno", -n);
		return;
	}
	if (n == -EINVAL) {
		emit(ctx, ctx->host, ST_ERROR, C_NVIDIA_FLAVOUR_UNKNOWN,
		     "cannot tell the kernel module flavour from "
		     "/proc/driver/nvidia/version");
		return;
	}
	if (fl == NV_FLAVOUR_OPEN) {
		r = emit(ctx, ctx->host, ST_PASS, C_OPEN_MODULE,
			 "open kernel module %s: can export GPU memory as dma-bufs",
			 version);
	} else {
		const struct cuda_gpu *g0 = ctx->inv.ngpu ?
					    ctx_cuda_gpu(ctx, 0) : NULL;
		bool old_gpus = g0 != NULL;

		/* Every GPU Volta or older: no open module drives them. */
		for (size_t i = 0; i < ctx->inv.ngpu && old_gpus; i++) {
			const struct cuda_gpu *g = ctx_cuda_gpu(ctx, (int)i);

			old_gpus = gpu_pre_turing(g) &&
				   g->cc_major == g0->cc_major &&
				   g->cc_minor == g0->cc_minor;
		}
		r = emit(ctx, ctx->host, ST_BLOCKED, C_DMABUF_NEEDS_OPEN_MODULE,
			 "proprietary kernel module %s: DMA-BUF export for RDMA "
			 "needs the open kernel module", version);
		if (old_gpus)
			remedy_DMABUF_MODULE_PRE_TURING(r, g0->cc_major,
							g0->cc_minor);
		else
			remedy_DMABUF_NEEDS_OPEN_MODULE(r);
	}
	ev_str(r, "flavour", "%s", nv_flavour_name(fl));
	ev_str(r, "version", "%s", version);
}

void gate_mech_dmabuf_verbs(struct gdr_ctx *ctx, const struct target *t)
{
	const struct verbs_facts *v = &ctx->vf->verbs;
	struct result *r;

	/* DEP(NIC_LIBIBVERBS): the engine runs this only with it loaded. */
	if (v->have_reg_dmabuf_mr) {
		r = emit(ctx, ctx->host, ST_PASS, C_VERBS_DMABUF_API,
			 "libibverbs exports ibv_reg_dmabuf_mr@IBVERBS_1.12");
	} else {
		r = emit(ctx, ctx->host, ST_BLOCKED, C_VERBS_TOO_OLD_FOR_DMABUF,
			 "libibverbs has no ibv_reg_dmabuf_mr@IBVERBS_1.12 "
			 "(rdma-core older than v34)");
		remedy_VERBS_TOO_OLD_FOR_DMABUF(r);
	}
	ev_str(r, "path", "%s", v->lib.path);
}

void gate_mech_dmabuf_provider(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct verbs_nic *vn = ctx_verbs_nic(ctx, t->nic);
	char why[256];
	struct classified c;
	enum reason_code code;
	struct result *r;

	/*
	 * DEP(MECH_DMABUF_VERBS): libibverbs is loaded with the symbol.
	 * Not a DEP on nic.uverbs: a device the verbs stage failed to open
	 * is this gate's ERROR, which nic.uverbs's status does not tell.
	 */
	if (!vn || !vn->opened) {
		if (stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why)))
			emit(ctx, nic->subject, ST_ERROR, C_PROVIDER_PROBE_FAILED,
			     "%s", why);
		else
			emit(ctx, nic->subject, ST_SKIP, C_DEVICE_NOT_OPENED,
			     "device not opened (see nic.uverbs)");
		return;
	}
	if (vn->pd_errno) {
		r = emit(ctx, nic->subject, ST_ERROR, C_PD_ALLOC_FAILED,
			 "ibv_alloc_pd failed: %s", strerror(vn->pd_errno));
		ev_int(r, "errno", vn->pd_errno);
		return;
	}
	if (!vn->probe_run) {
		stage_problem(ctx, WSTAGE_VERBS, why, sizeof(why));
		emit(ctx, nic->subject, ST_ERROR, C_PROVIDER_PROBE_FAILED,
		     "probe did not complete%s%s", why[0] ? ": " : "", why);
		return;
	}
	if (vn->probe_returned_mr) {
		emit(ctx, nic->subject, ST_ERROR, C_PROVIDER_PROBE_ACCEPTED_BAD_FD,
		     "ibv_reg_dmabuf_mr accepted fd -1: the provider's answer "
		     "cannot be trusted");
		return;
	}
	c = classify_dmabuf_probe(vn->probe_errno);
	code = code_by_name(c.code);
	r = emit(ctx, nic->subject, c.status, code,
		 "ibv_reg_dmabuf_mr(fd=-1) -> %s: %s",
		 vn->probe_errno ? strerrorname_np(vn->probe_errno) : "0",
		 c.meaning);
	if (code == C_PROVIDER_LACKS_DMABUF)
		remedy_PROVIDER_LACKS_DMABUF(r);
	else if (code == C_KERNEL_LACKS_DMABUF)
		remedy_KERNEL_LACKS_DMABUF(r);
	ev_int(r, "errno", vn->probe_errno);
}

void gate_mech_dmabuf_export(struct gdr_ctx *ctx, const struct target *t)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, t->gpu);
	int subject = ctx->inv.gpu[t->gpu].subject;
	char why[256], human[32];
	struct result *r;

	/* Not a DEP: a GPU whose gpu.visible ERRORs may still export. */
	if (!g) {
		emit(ctx, subject, ST_SKIP, C_GPU_NOT_IN_CUDA,
		     "not visible to this process (see gpu.visible)");
		return;
	}
	if (ctx->opt->no_alloc) {
		emit(ctx, subject, ST_SKIP, C_NO_ALLOC,
		     "--no-alloc: no GPU memory allocated, export not tried");
		return;
	}
	if (!ctx->vf->cuda.have_export_fn) {
		r = emit(ctx, subject, ST_BLOCKED, C_EXPORT_API_MISSING,
			 "libcuda lacks cuMemGetHandleForAddressRange (driver "
			 "older than CUDA 11.7)");
		if (gpu_pre_turing(g))
			remedy_EXPORT_PRE_TURING(r, g->cc_major, g->cc_minor);
		else
			remedy_EXPORT_API_MISSING(r);
		return;
	}
	format_bytes(CUDA_EXPORT_BYTES, human, sizeof(human));
	if (!g->export_call.called) {
		const struct cu_call *c = g->alloc.called ? &g->alloc :
					  &g->ctx_retain;

		if (stage_problem(ctx, WSTAGE_CUDA_EXPORT, why, sizeof(why))) {
			emit(ctx, subject, ST_ERROR, C_EXPORT_PROBE_FAILED,
			     "%s", why);
		} else if (g->setup_call.called &&
			   gpu_unavailable(ctx, subject, g, g->setup_call.rc,
					   "cuCtxSetCurrent", "export", true)) {
			/* Held by another process: no finding about export. */
		} else if (c->called &&
			   gpu_unavailable(ctx, subject, g, c->rc,
					   c == &g->alloc ? "cuMemAlloc" :
					   "cuDevicePrimaryCtxRetain", "export", true)) {
		} else if (g->setup_call.called) {
			emit(ctx, subject, ST_ERROR, C_EXPORT_SETUP_FAILED,
			     "cuCtxSetCurrent failed: %s", g->setup_call.name);
		} else if (c->called && c->rc != CUDA_SUCCESS) {
			r = emit(ctx, subject, ST_ERROR, C_EXPORT_SETUP_FAILED,
				 "%s failed: %s",
				 c == &g->alloc ? "cuMemAlloc" :
				 "cuDevicePrimaryCtxRetain", c->name);
			if (c->rc == CUDA_ERROR_OUT_OF_MEMORY)
				remedy_EXPORT_SETUP_FAILED(r);
		} else {
			emit(ctx, subject, ST_ERROR, C_EXPORT_NOT_RUN,
			     "the export check did not run");
		}
		return;
	}
	if (g->export_call.rc != CUDA_SUCCESS) {
		r = emit(ctx, subject, ST_BLOCKED, C_EXPORT_FAILED,
			 "cuMemGetHandleForAddressRange(DMA_BUF_FD, %s) failed: %s",
			 human, g->export_call.name);
		if (gpu_pre_turing(g))
			remedy_EXPORT_PRE_TURING(r, g->cc_major, g->cc_minor);
		else
			remedy_EXPORT_FAILED(r);
		ev_int(r, "rc", g->export_call.rc);
		ev_str(r, "error", "%s", g->export_call.name);
		r->duration_ms = g->export_call.ms;
		return;
	}
	if (!g->fd_is_dmabuf) {
		r = emit(ctx, subject, ST_WARN, C_EXPORT_FD_NOT_DMABUF,
			 "export returned an fd the kernel does not show as a "
			 "dma-buf (%s)", g->fd_link[0] ? g->fd_link : "unreadable");
	} else if (strcmp(g->fd_exp_name, "nv_dmabuf") ||
		   g->fd_size != (long long)g->export_size) {
		r = emit(ctx, subject, ST_WARN, C_EXPORT_UNEXPECTED,
			 "exported dma-buf has exporter \"%s\" and size %lld, "
			 "expected nv_dmabuf and %llu", g->fd_exp_name,
			 g->fd_size, g->export_size);
	} else {
		r = emit(ctx, subject, ST_PASS, C_EXPORT_OK,
			 "exported %s of GPU memory as a dma-buf (exporter %s)",
			 human, g->fd_exp_name);
	}
	ev_int(r, "bytes", (long long)g->export_size);
	ev_str(r, "fd_link", "%s", g->fd_link);
	ev_str(r, "exp_name", "%s", g->fd_exp_name);
	ev_int(r, "fdinfo_size", g->fd_size);
	if (g->ptr_gdr_capable != CU_ATTR_UNKNOWN)
		ev_int(r, "pointer_gdr_capable", g->ptr_gdr_capable);
	r->duration_ms = g->export_call.ms;
}

static const char *const gdrapi_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/local/lib64",
	"/opt/gdrcopy/lib", "/usr/local/gdrcopy/lib",
};

/* Evidence for an informational path: present, absent or why unreadable. */
static void ev_path(struct result *r, const char *key, int err)
{
	if (path_state_of(err) == PATH_UNREADABLE)
		ev_str(r, key, "unreadable: %s", strerrorname_np(-err));
	else
		ev_bool(r, key, !err);
}

void gate_mech_gdrcopy(struct gdr_ctx *ctx, const struct target *t)
{
	int dev = sysroot_access(ctx->sr, "/dev/gdrdrv");
	int proc = sysroot_access(ctx->sr, "/proc/driver/gdrdrv");
	char lib[256] = "";
	struct result *r;

	for (size_t i = 0; i < sizeof(gdrapi_dirs) / sizeof(gdrapi_dirs[0]) &&
	     !lib[0]; i++) {
		char p[256];

		snprintf(p, sizeof(p), "%s/libgdrapi.so.2", gdrapi_dirs[i]);
		if (sysroot_exists(ctx->sr, p))
			snprintf(lib, sizeof(lib), "%s", p);
	}
	if (!dev)
		r = emit(ctx, ctx->host, ST_PASS, C_GDRCOPY_PRESENT,
			 "GDRCopy driver present (/dev/gdrdrv); informational: "
			 "GPUDirect RDMA does not need it");
	else if (path_state_of(dev) == PATH_UNREADABLE)
		r = emit(ctx, ctx->host, ST_SKIP, C_GDRCOPY_UNREADABLE,
			 "cannot look at /dev/gdrdrv: %s (informational: "
			 "GPUDirect RDMA does not need it)", strerror(-dev));
	else if (lib[0])
		r = emit(ctx, ctx->host, ST_WARN, C_GDRCOPY_LIB_WITHOUT_DRIVER,
			 "%s present but /dev/gdrdrv missing: GDRCopy is not "
			 "usable (informational: GPUDirect RDMA does not need it)",
			 lib);
	else
		r = emit(ctx, ctx->host, ST_SKIP, C_GDRCOPY_ABSENT,
			 "GDRCopy not installed (informational: GPUDirect RDMA "
			 "does not need it)");
	ev_path(r, "dev_gdrdrv", dev);
	ev_path(r, "proc_gdrdrv", proc);
	ev_str(r, "libgdrapi", "%s", lib[0] ? lib : "none");
}
