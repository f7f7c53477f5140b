// SPDX-License-Identifier: MIT
/*
 * Layers 6 and 7: the proof. Real registrations of GPU memory with the NIC
 * (peermem: ibv_reg_mr on the CUDA pointer; DMA-BUF: the exported fd into
 * ibv_reg_dmabuf_mr) and a verified loopback RDMA transfer through each
 * MR. The worker did the work (access/reg.c); these gates read its facts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decode/cuda_api.h"
#include "access/reg.h"
#include "decode/parse.h"
#include "probes/probes.h"

/*
 * One libibverbs device per name, or results cannot be attributed: two
 * devices of one name (a broken provider, a hostile library) would make the
 * first match, and so the verdict, depend on enumeration order. Emits an
 * ERROR for @subject and returns true then.
 */
static bool nic_ambiguous(struct gdr_ctx *ctx, int subject, int nic)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	const char *name = ctx->inv.nic[nic].name;
	int n = 0;

	for (int i = 0; i < rf->nnics; i++)
		n += !strcmp(rf->nics[i].nic, name);
	if (n < 2)
		return false;
	emit(ctx, subject, ST_ERROR, C_DEVICE_NAME_AMBIGUOUS,
	     "libibverbs lists %d devices named %s: whose result is whose "
	     "cannot be told", n, name);
	return true;
}

static bool reg_inferred(struct gdr_ctx *ctx, const struct inv_pair *pr,
			 const struct reg_pair *pp);

static const struct reg_nic *reg_nic_of(const struct gdr_ctx *ctx, int nic)
{
	const struct reg_facts *rf = &ctx->vf->reg;

	for (int i = 0; i < rf->nnics; i++)
		if (!strcmp(rf->nics[i].nic, ctx->inv.nic[nic].name))
			return &rf->nics[i];
	return NULL;
}

/*
 * Why the registration stage has nothing for this subject: a SKIP (the
 * user's choice or an earlier gate), or an ERROR when the stage itself
 * failed. Returns true when a result was emitted.
 */
static bool stage_missing_gpu(struct gdr_ctx *ctx, int subject,
			      const char *what, bool needs_gpu)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	char why[256];

	if (ctx->opt->no_alloc) {
		emit(ctx, subject, ST_SKIP, C_NO_ALLOC,
		     "--no-alloc: no GPU memory allocated, %s not tried", what);
		return true;
	}
	if (stage_problem(ctx, WSTAGE_REGISTRATION, why, sizeof(why))) {
		emit(ctx, subject, ST_ERROR, C_REGISTRATION_PROBE_FAILED,
		     "%s: %s", what, why);
		return true;
	}
	if (rf->ran && needs_gpu && !rf->cuda &&
	    cuda_poisoned(ctx, why, sizeof(why))) {
		emit(ctx, subject, ST_ERROR, C_REGISTRATION_PROBE_FAILED,
		     "%s not tried without libcuda: %s", what, why);
		return true;
	}
	/* What the registration stage could load (vendor facts), not a DEP. */
	if (!rf->ran || (needs_gpu && !rf->cuda)) {
		emit(ctx, subject, ST_SKIP, C_VENDOR_UNAVAILABLE,
		     "%s not tried: %s unusable (see the %s layer)", what,
		     rf->ran ? "libcuda" : "libibverbs", rf->ran ? "gpu" : "nic");
		return true;
	}
	return false;
}

static bool stage_missing(struct gdr_ctx *ctx, int subject, const char *what)
{
	return stage_missing_gpu(ctx, subject, what, true);
}

static void mr_evidence(struct result *r, const struct mr_result *m,
			unsigned long long bytes, bool keys)
{
	ev_int(r, "bytes", (long long)bytes);
	ev_real(r, "cold_ms", m->ms_cold);
	ev_real(r, "warm_ms", m->ms_warm);
	ev_real(r, "dereg_ms", m->ms_dereg);
	ev_bool(r, "relaxed_ordering", m->relaxed_ordering);
	ev_bool(r, "keys_present", m->lkey || m->rkey);
	if (keys) {
		ev_str(r, "lkey", "0x%x", m->lkey);
		ev_str(r, "rkey", "0x%x", m->rkey);
	}
}

/* "; and a VMM buffer of 2 MiB on 1 GPU(s)", or "" without any. */
static const char *vmm_plan_note(const struct gdr_ctx *ctx, char *buf,
				 size_t len)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	int n = ctx->vf->cuda.gpus_recorded, ok = 0;
	unsigned long long bytes = 0;
	char human[32];

	for (int g = 0; g < n; g++)
		if (rf->vmm[g].ok) {
			ok++;
			bytes = rf->vmm[g].size;
		}
	buf[0] = '\0';
	if (!ok)
		return buf;
	format_bytes(bytes, human, sizeof(human));
	snprintf(buf, len, "; and an NCCL-style VMM buffer of %s on %d GPU(s)",
		 human, ok);
	return buf;
}

/*
 * The NCCL-style VMM buffers beside the cuMemAlloc ones: how many GPUs got
 * one, and the first GPU's reason when one did not (a node without RDMA
 * devices shows it only here).
 */
static void vmm_plan_evidence(const struct gdr_ctx *ctx, struct result *r)
{
	static const char *const why[] = {
		[VMMS_NOT_RUN] = "not_run", [VMMS_TRIED] = "alloc_failed",
		[VMMS_NO_API] = "no_api", [VMMS_ATTR_FAILED] = "attr_failed",
		[VMMS_UNSUPPORTED] = "vmm_unsupported",
		[VMMS_GDR_UNSUPPORTED] = "gdr_unsupported",
	};
	const struct reg_facts *rf = &ctx->vf->reg;
	int n = ctx->vf->cuda.gpus_recorded, ok = 0, first = -1;

	for (int g = 0; g < n; g++) {
		if (rf->vmm[g].ok)
			ok++;
		else if (first < 0 && rf->vmm[g].skip != VMMS_NOT_RUN)
			first = g;
	}
	ev_int(r, "vmm_gpus", ok);
	if (ok)
		for (int g = 0; g < n; g++)
			if (rf->vmm[g].ok) {
				ev_int(r, "vmm_granularity",
				       (long long)rf->vmm[g].granularity);
				break;
			}
	if (first < 0)
		return;
	ev_int(r, "vmm_first_missing_cuda", first);
	if (rf->vmm[first].skip >= 0 && rf->vmm[first].skip <= VMMS_GDR_UNSUPPORTED)
		ev_str(r, "vmm_missing_why", "%s", why[rf->vmm[first].skip]);
	if (rf->vmm[first].fail.called)
		ev_str(r, "vmm_failed_call", "%s: %s", rf->vmm[first].fail_fn,
		       rf->vmm[first].fail.name);
}

/*
 * The GPU whose set-up failed with CUDA_ERROR_DEVICE_UNAVAILABLE, for its
 * compute mode: its pairs say which (reg_facts keeps only the first
 * failure's call); NULL without one.
 */
static const struct cuda_gpu *busy_gpu(const struct gdr_ctx *ctx)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	const struct cuda_facts *cf = &ctx->vf->cuda;

	for (int i = 0; i < rf->npairs; i++)
		if (rf->pairs[i].gpu_rc == CUDA_ERROR_DEVICE_UNAVAILABLE &&
		    rf->pairs[i].gpu >= 0 && rf->pairs[i].gpu < cf->gpus_recorded)
			return &cf->gpus[rf->pairs[i].gpu];
	return NULL;
}

void gate_reg_plan(struct gdr_ctx *ctx, const struct target *t)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	char per[32], all[32], vmm[96];
	struct result *r;

	if (stage_missing(ctx, ctx->host, "registration"))
		return;
	format_bytes(rf->bytes, per, sizeof(per));
	format_bytes(rf->bytes * (unsigned long long)rf->gpus_allocated, all,
		     sizeof(all));
	if (rf->alloc_fail.called &&
	    rf->alloc_fail.rc == CUDA_ERROR_DEVICE_UNAVAILABLE) {
		char what[96];

		snprintf(what, sizeof(what), "GPU memory for the proof (%d of "
			 "%d GPU(s))", ctx->vf->cuda.gpus_recorded -
			 rf->gpus_allocated, ctx->vf->cuda.gpus_recorded);
		r = gpu_unavailable(ctx, ctx->host, busy_gpu(ctx),
				    rf->alloc_fail.rc, rf->alloc_fn, what, true);
	} else if (rf->alloc_fail.called) {
		r = emit(ctx, ctx->host, ST_ERROR, C_GPU_ALLOC_FAILED,
			 "cuMemAlloc(%s) failed on %d GPU(s): %s", per,
			 ctx->vf->cuda.gpus_recorded - rf->gpus_allocated,
			 rf->alloc_fail.name);
		/* Only an error that does not say why may guess. */
		if (rf->alloc_fail.rc == CUDA_ERROR_OUT_OF_MEMORY)
			remedy_GPU_MEMORY_FULL(r);
		else
			remedy_GPU_ALLOC_FAILED(r);
	} else {
		r = emit(ctx, ctx->host, ST_PASS, C_REG_PLAN,
			 "%s of GPU memory per GPU on %d GPU(s) (%s in all, freed "
			 "again), %d GPU x RDMA device pair(s)%s%s", per,
			 rf->gpus_allocated, all, rf->npairs,
			 rf->pairs_truncated ? " (more were not tried)" : "",
			 vmm_plan_note(ctx, vmm, sizeof(vmm)));
	}
	ev_int(r, "bytes_per_gpu", (long long)rf->bytes);
	ev_int(r, "gpus", rf->gpus_allocated);
	vmm_plan_evidence(ctx, r);
	ev_int(r, "pairs", rf->npairs);
	ev_bool(r, "pairs_truncated", rf->pairs_truncated);
}

void gate_reg_host_mr(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct reg_nic *rn;
	const struct result *memlock;
	struct classified c;
	struct result *r;

	if (stage_missing_gpu(ctx, nic->subject, "the host-memory MR", false) ||
	    nic_ambiguous(ctx, nic->subject, t->nic))
		return;
	rn = reg_nic_of(ctx, t->nic);
	/* From the registration stage's own open, not nic.uverbs's result. */
	if (!rn || rn->open_err || rn->pd_err) {
		emit(ctx, nic->subject, ST_SKIP, C_DEVICE_NOT_OPENED,
		     "device not usable through libibverbs (see nic.uverbs)%s%s",
		     rn && rn->pd_err ? ": ibv_alloc_pd " : "",
		     rn && rn->pd_err ? strerror(rn->pd_err) : "");
		return;
	}
	if (rn->host.ok) {
		r = emit(ctx, nic->subject, ST_PASS, C_HOST_MR_OK,
			 "host memory registers (the verbs control)");
		mr_evidence(r, &rn->host, 2 * ctx->vf->reg.bytes,
			    ctx->opt->verbose);
		return;
	}
	c = classify_reg_errno(rn->host.err, false);
	memlock = ctx_result_of(ctx, "host.memlock", ctx->host);
	if (rn->host.err == ENOMEM && memlock && memlock->status == ST_PASS) {
		/* host.memlock owns the limit, and it allows this. */
		r = emit(ctx, nic->subject, ST_BLOCKED, C_PIN_LIMIT,
			 "%s of %llu bytes of host memory failed with ENOMEM "
			 "although RLIMIT_MEMLOCK allows it (host.memlock: %s): "
			 "the kernel could not pin the pages", rn->host.call,
			 2 * ctx->vf->reg.bytes, memlock->reason);
		remedy_HOST_PIN_FAILED(r);
	} else if (rn->host.err == ENOMEM) {
		r = emit(ctx, nic->subject, ST_BLOCKED, C_MEMLOCK_TOO_SMALL,
			 "%s of %llu bytes of host memory failed with ENOMEM: "
			 "RLIMIT_MEMLOCK is too small", rn->host.call,
			 2 * ctx->vf->reg.bytes);
		remedy_MEMLOCK_TOO_SMALL(r);
	} else {
		r = emit(ctx, nic->subject, c.status, code_by_name(c.code),
			 "%s on host memory failed: %s (%s)", rn->host.call,
			 strerror(rn->host.err), c.meaning);
	}
	ev_int(r, "errno", rn->host.err);
}

/*
 * The pair's GPU had no buffer because the driver called it unavailable
 * (held by another process, or PROHIBITED): say that, not the stage's
 * generic "no GPU buffer". Returns true when a result was emitted.
 */
static bool pair_gpu_unavailable(struct gdr_ctx *ctx, int subject,
				 const struct reg_pair *pp, const char *what,
				 bool fix)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;
	const struct cuda_gpu *g = NULL;

	if (!pp || !pp->skip[0])
		return false;
	if (pp->gpu >= 0 && pp->gpu < cf->gpus_recorded)
		g = &cf->gpus[pp->gpu];
	return gpu_unavailable(ctx, subject, g, pp->gpu_rc, pp->gpu_fn,
			       what, fix) != NULL;
}

void gate_reg_peermem(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct reg_pair *pp;
	struct classified c;
	const struct result *owner;
	struct result *r;

	if (stage_missing(ctx, pr->subject, "ibv_reg_mr on GPU memory") ||
	    nic_ambiguous(ctx, pr->subject, pr->nic))
		return;
	pp = ctx_reg_pair(ctx, pr);
	if (pair_gpu_unavailable(ctx, pr->subject, pp, "ibv_reg_mr", true))
		return;
	if (reg_inferred(ctx, pr, pp))
		return;
	/* The registration stage's own reason (vendor facts), not a DEP. */
	if (!pp || pp->skip[0] || !pp->peermem.tried) {
		emit(ctx, pr->subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: %s", pp && pp->skip[0] ? pp->skip :
		     "GPU or RDMA device not usable (see earlier layers)");
		return;
	}
	if (pp->peermem.ok) {
		r = emit(ctx, pr->subject, ST_PASS, C_PEERMEM_MR_OK,
			 "%s accepted GPU memory: lkey/rkey issued",
			 pp->peermem.relaxed_ordering ? "ibv_reg_mr_iova2" :
			 "ibv_reg_mr");
		mr_evidence(r, &pp->peermem, ctx->vf->reg.bytes,
			    ctx->opt->verbose);
		return;
	}
	c = classify_reg_errno(pp->peermem.err, false);
	owner = ctx_result_of(ctx, "mech.peermem", ctx->host);
	if (pp->peermem.err == EFAULT && owner &&
	    (owner->status == ST_PASS || owner->status == ST_WARN)) {
		/* mech.peermem owns "loaded": EFAULT is not "not loaded". */
		r = emit(ctx, pr->subject, ST_BLOCKED, C_PEER_CLIENT_NOT_CLAIMING,
			 "%s on GPU memory: EFAULT although a peer-memory client "
			 "is loaded (mech.peermem): it did not claim the GPU "
			 "addresses", pp->peermem.call);
		remedy_PEER_CLIENT_NOT_CLAIMING(r);
		ev_int(r, "errno", pp->peermem.err);
		ev_str(r, "call", "%s", pp->peermem.call);
		return;
	}
	r = emit(ctx, pr->subject, c.status, code_by_name(c.code),
		 "%s on GPU memory: %s", pp->peermem.call, c.meaning);
	if (pp->peermem.err == EFAULT &&
	    nic_is_efa(ctx, &ctx->inv.nic[pr->nic]))
		remedy_NO_PEER_MEMORY_CLIENT_EFA(r);
	else if (pp->peermem.err == EFAULT)
		remedy_NO_PEER_MEMORY_CLIENT(r);
	else if (pp->peermem.err == ENOMEM)
		remedy_PIN_LIMIT(r);
	else if (pp->peermem.err == EPERM || pp->peermem.err == EACCES)
		remedy_REG_PERMISSION(r);
	ev_int(r, "errno", pp->peermem.err);
	ev_str(r, "call", "%s", pp->peermem.call);
}

void gate_reg_dmabuf(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct reg_pair *pp;
	struct classified c;
	const struct result *owner;
	struct result *r;

	if (stage_missing(ctx, pr->subject,
			  "ibv_reg_dmabuf_mr on GPU memory") ||
	    nic_ambiguous(ctx, pr->subject, pr->nic))
		return;
	pp = ctx_reg_pair(ctx, pr);
	if (pair_gpu_unavailable(ctx, pr->subject, pp, "ibv_reg_dmabuf_mr",
				 true))
		return;
	if (reg_inferred(ctx, pr, pp))
		return;
	/* The registration stage's own reason (vendor facts), not a DEP. */
	if (!pp || pp->skip[0]) {
		emit(ctx, pr->subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: %s", pp && pp->skip[0] ? pp->skip :
		     "GPU or RDMA device not usable (see earlier layers)");
		return;
	}
	/* Not a DEP: libcuda or libibverbs may lack its half (the stage's
	 * record says which was tried). */
	if (!pp->export_call.called) {
		emit(ctx, pr->subject, ST_SKIP, C_NO_DMABUF_API,
		     "not tried: libcuda lacks the export or libibverbs lacks "
		     "ibv_reg_dmabuf_mr (see mech.dmabuf_verbs)");
		return;
	}
	if (pp->export_call.rc != CUDA_SUCCESS) {
		r = emit(ctx, pr->subject, ST_BLOCKED, C_EXPORT_FAILED,
			 "cuMemGetHandleForAddressRange(DMA_BUF_FD) failed: %s",
			 pp->export_call.name);
		ev_str(r, "error", "%s", pp->export_call.name);
		return;
	}
	/* A Data Direct device: NCCL's mlx5dv registration (net_ib reg.cc). */
	if (pp->dmabuf.data_direct) {
		const char *map = pp->export_flags &
			CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE ?
			"PCIe mapping" : "default mapping";

		if (pp->dmabuf.ok) {
			r = emit(ctx, pr->subject, ST_PASS, C_DD_MR_OK,
				 "mlx5dv_reg_dmabuf_mr(DATA_DIRECT) accepted the "
				 "exported dma-buf (%s), as NCCL registers on a "
				 "Data Direct device: lkey/rkey issued", map);
			mr_evidence(r, &pp->dmabuf, ctx->vf->reg.bytes,
				    ctx->opt->verbose);
		} else {
			r = emit(ctx, pr->subject, ST_BLOCKED, C_DD_MR_FAILED,
				 "mlx5dv_reg_dmabuf_mr(DATA_DIRECT) on the "
				 "exported dma-buf (%s): %s", map,
				 strerror(pp->dmabuf.err));
			remedy_DD_MR_FAILED(r);
			ev_int(r, "errno", pp->dmabuf.err);
		}
		ev_bool(r, "data_direct", true);
		ev_bool(r, "pcie_mapping", pp->export_flags &
			CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
		return;
	}
	if (pp->dmabuf.ok) {
		r = emit(ctx, pr->subject, ST_PASS, C_DMABUF_MR_OK,
			 "ibv_reg_dmabuf_mr accepted the exported dma-buf: "
			 "lkey/rkey issued, MR kept after the fd was closed");
		mr_evidence(r, &pp->dmabuf, ctx->vf->reg.bytes,
			    ctx->opt->verbose);
		return;
	}
	c = classify_reg_errno(pp->dmabuf.err, true);
	owner = ctx_result_of(ctx, "mech.dmabuf_provider",
			      ctx->inv.nic[pr->nic].subject);
	if (pp->dmabuf.err == EOPNOTSUPP && owner && owner->status == ST_PASS) {
		/* The provider's support is mech.dmabuf_provider's fact. */
		r = emit(ctx, pr->subject, ST_BLOCKED, C_DMABUF_MR_REFUSED,
			 "ibv_reg_dmabuf_mr: EOPNOTSUPP for this dma-buf, "
			 "although the provider implements dma-buf MRs "
			 "(mech.dmabuf_provider): the kernel or the driver "
			 "refused this memory");
		remedy_DMABUF_MR_REFUSED(r);
		ev_int(r, "errno", pp->dmabuf.err);
		return;
	}
	r = emit(ctx, pr->subject, c.status, code_by_name(c.code),
		 "ibv_reg_dmabuf_mr: %s", c.meaning);
	if (pp->dmabuf.err == EOPNOTSUPP)
		remedy_PROVIDER_LACKS_DMABUF_MR(r);
	else if (pp->dmabuf.err == EPROTONOSUPPORT)
		remedy_KERNEL_LACKS_DMABUF(r);
	else if (pp->dmabuf.err == ENOMEM)
		remedy_PIN_LIMIT(r);
	else if (pp->dmabuf.err == EPERM || pp->dmabuf.err == EACCES)
		remedy_REG_PERMISSION(r);
	else if (pp->dmabuf.err == EINVAL)
		remedy_DMABUF_OFFSETS_REJECTED(r);
	ev_int(r, "errno", pp->dmabuf.err);
}

/* --- NCCL-style VMM buffers (access/reg.c vmm_setup) ------------------- */

/*
 * r repeats the cuMemAlloc buffer's failure at gate: point to that fix,
 * when there is one (a failure with no known fix gets no dangling "apply
 * reg.dmabuf's fix"). Looked up after r's emit: no pointer kept across it.
 */
static void vmm_as_cumemalloc(struct gdr_ctx *ctx, struct result *r,
			      const char *gate, int subject)
{
	const struct result *o = ctx_result_of(ctx, gate, subject);

	if (o && o->remediation)
		remedy_VMM_AS_CUMEMALLOC(r, gate);
}

static const struct reg_vmm_gpu *vmm_of(const struct gdr_ctx *ctx,
					const struct inv_pair *pr)
{
	const struct cuda_gpu *g = ctx_cuda_gpu(ctx, pr->gpu);

	if (!g || g->ordinal < 0 || g->ordinal >= ctx->vf->cuda.gpus_recorded)
		return NULL;
	return &ctx->vf->reg.vmm[g->ordinal];
}

/*
 * The GPU of this pair has no VMM buffer: say why (once per gate and
 * pair) and return true.
 */
static bool vmm_no_buffer(struct gdr_ctx *ctx, int subject,
			  const struct reg_vmm_gpu *v)
{
	struct result *r;

	/* The stage's VMM record (vendor facts), not reg.plan's result. */
	if (!v || v->skip == VMMS_NOT_RUN) {
		emit(ctx, subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: no GPU buffer or context (see reg.plan)");
		return true;
	}
	switch (v->skip) {
	case VMMS_NO_API:
		emit(ctx, subject, ST_SKIP, C_VMM_NO_API,
		     "VMM not tried: libcuda lacks %s (a driver older than "
		     "CUDA 10.2)", v->missing);
		return true;
	case VMMS_ATTR_FAILED:
		r = emit(ctx, subject, ST_ERROR, C_VMM_ATTR_FAILED,
			 "VMM not tried: cuDeviceGetAttribute(%d) failed: %s",
			 v->attr, v->attr_call.name);
		ev_int(r, "attribute", v->attr);
		return true;
	case VMMS_UNSUPPORTED:
		emit(ctx, subject, ST_SKIP, C_VMM_UNSUPPORTED,
		     "VMM not tried: the driver says "
		     "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0 (NCCL does not "
		     "use cuMem here)");
		return true;
	case VMMS_GDR_UNSUPPORTED:
		r = emit(ctx, subject, ST_SKIP, C_VMM_GDR_UNSUPPORTED,
			 "VMM not tried: the driver says "
			 "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0 (no RDMA "
			 "to cuMemCreate memory)");
		remedy_VMM_GDR_UNSUPPORTED(r);
		return true;
	default:
		break;
	}
	if (v->ok)
		return false;
	r = emit(ctx, subject, ST_ERROR, C_VMM_ALLOC_FAILED,
		 "NCCL-style VMM allocation failed: %s returned %s",
		 v->fail_fn[0] ? v->fail_fn : "the set-up",
		 v->fail.called ? v->fail.name : "nothing (not finished)");
	remedy_VMM_ALLOC_FAILED(r);
	ev_str(r, "call", "%s", v->fail_fn);
	return true;
}

static void vmm_evidence(struct result *r, const struct reg_vmm_gpu *v)
{
	ev_int(r, "vmm_granularity", (long long)v->granularity);
	ev_int(r, "vmm_bytes", (long long)v->size);
	ev_bool(r, "gpu_direct_rdma_capable_flag", v->gdr_capable_flag);
}

/*
 * The pair and its GPU's VMM buffer, or NULL after emitting why there is
 * nothing to judge.
 */
static const struct reg_pair *vmm_pair_or_skip(struct gdr_ctx *ctx,
					       const struct inv_pair *pr,
					       const char *what,
					       const struct reg_vmm_gpu **vp)
{
	const struct reg_pair *pp;

	if (stage_missing(ctx, pr->subject, what) ||
	    nic_ambiguous(ctx, pr->subject, pr->nic))
		return NULL;
	pp = ctx_reg_pair(ctx, pr);
	*vp = vmm_of(ctx, pr);
	/* The registration stage's own record (vendor facts), not a DEP. */
	if (!pp) {
		emit(ctx, pr->subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: GPU or RDMA device not usable (see earlier "
		     "layers)");
		return NULL;
	}
	/* The pair's own reason first, as reg.peermem gives it. */
	if (pair_gpu_unavailable(ctx, pr->subject, pp, what, false))
		return NULL;
	if (pp->skip[0]) {
		emit(ctx, pr->subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: %s", pp->skip);
		return NULL;
	}
	if (vmm_no_buffer(ctx, pr->subject, *vp))
		return NULL;
	if (reg_inferred(ctx, pr, pp))
		return NULL;
	return pp;
}

void gate_reg_vmm_peermem(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct reg_vmm_gpu *v = NULL;
	const struct reg_pair *pp;
	struct classified c;
	struct result *r;

	pp = vmm_pair_or_skip(ctx, pr, "ibv_reg_mr on a VMM buffer", &v);
	if (!pp)
		return;
	/* The registration stage's own record (vendor facts), not a DEP. */
	if (!pp->vmm_peermem.tried) {
		emit(ctx, pr->subject, ST_SKIP, C_PAIR_NOT_TESTABLE,
		     "not tried: GPU or RDMA device not usable (see earlier "
		     "layers)");
		return;
	}
	if (pp->vmm_peermem.ok) {
		r = emit(ctx, pr->subject, ST_PASS, C_VMM_PEERMEM_MR_OK,
			 "%s accepted the VMM buffer (cuMemCreate, "
			 "gpuDirectRDMACapable): lkey/rkey issued",
			 pp->vmm_peermem.relaxed_ordering ? "ibv_reg_mr_iova2" :
			 "ibv_reg_mr");
		mr_evidence(r, &pp->vmm_peermem, ctx->vf->reg.bytes,
			    ctx->opt->verbose);
		vmm_evidence(r, v);
		return;
	}
	if (pp->vmm_peermem.err == EFAULT && pp->peermem.ok) {
		/* uccl-project/mKernel#26: cuMemAlloc pins, VMM faults. */
		r = emit(ctx, pr->subject, ST_BLOCKED, C_VMM_PEERMEM_EFAULT,
			 "EFAULT on the VMM buffer while cuMemAlloc memory "
			 "registers: the peer-memory client does not take "
			 "cuMemCreate memory");
		remedy_VMM_PEERMEM_EFAULT(r);
	} else {
		bool same = pp->peermem.tried && !pp->peermem.ok &&
			    pp->peermem.err == pp->vmm_peermem.err;

		c = classify_reg_errno(pp->vmm_peermem.err, false);
		r = emit(ctx, pr->subject, c.status, code_by_name(c.code),
			 "%s on the VMM buffer: %s%s", pp->vmm_peermem.call,
			 c.meaning, same ? " (as on cuMemAlloc memory, see "
			 "reg.peermem)" : "");
		/* The same failure as reg.peermem's has its fix there. */
		if (same)
			vmm_as_cumemalloc(ctx, r, "reg.peermem", pr->subject);
		else if (pp->vmm_peermem.err == EFAULT &&
			 nic_is_efa(ctx, &ctx->inv.nic[pr->nic]))
			remedy_NO_PEER_MEMORY_CLIENT_EFA(r);
		else if (pp->vmm_peermem.err == EFAULT)
			remedy_NO_PEER_MEMORY_CLIENT(r);
		else if (pp->vmm_peermem.err == ENOMEM)
			remedy_PIN_LIMIT(r);
	}
	ev_int(r, "errno", pp->vmm_peermem.err);
	ev_str(r, "call", "%s", pp->vmm_peermem.call);
	ev_bool(r, "cumemalloc_registered", pp->peermem.ok);
	vmm_evidence(r, v);
}

void gate_reg_vmm_dmabuf(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct reg_vmm_gpu *v = NULL;
	const struct reg_pair *pp;
	struct classified c;
	struct result *r;
	bool same;

	pp = vmm_pair_or_skip(ctx, pr, "ibv_reg_dmabuf_mr on a VMM buffer",
			      &v);
	if (!pp)
		return;
	/* Not a DEP: libcuda or libibverbs may lack its half (the stage's
	 * record says which was tried). */
	if (!pp->vmm_export_call.called) {
		emit(ctx, pr->subject, ST_SKIP, C_NO_DMABUF_API,
		     "not tried: libcuda lacks the export or libibverbs lacks "
		     "ibv_reg_dmabuf_mr (see mech.dmabuf_verbs)");
		return;
	}
	if (pp->vmm_export_call.rc != CUDA_SUCCESS) {
		same = pp->export_call.called &&
		       pp->export_call.rc == pp->vmm_export_call.rc;
		r = emit(ctx, pr->subject, ST_BLOCKED, C_VMM_EXPORT_FAILED,
			 "cuMemGetHandleForAddressRange(DMA_BUF_FD) on the VMM "
			 "buffer failed: %s%s", pp->vmm_export_call.name,
			 same ? " (as on cuMemAlloc memory, see reg.dmabuf)" :
			 "");
		/* The same failure as reg.dmabuf's has its fix there. */
		if (same)
			vmm_as_cumemalloc(ctx, r, "reg.dmabuf", pr->subject);
		else
			remedy_VMM_EXPORT_FAILED(r);
		ev_str(r, "error", "%s", pp->vmm_export_call.name);
		ev_bool(r, "cumemalloc_exported",
			pp->export_call.called &&
			pp->export_call.rc == CUDA_SUCCESS);
		vmm_evidence(r, v);
		return;
	}
	/* A Data Direct device: NCCL's mlx5dv registration (net_ib reg.cc). */
	if (pp->vmm_dmabuf.data_direct) {
		const char *map = pp->export_flags &
			CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE ?
			"PCIe mapping" : "default mapping";

		if (pp->vmm_dmabuf.ok) {
			r = emit(ctx, pr->subject, ST_PASS, C_VMM_DD_MR_OK,
				 "mlx5dv_reg_dmabuf_mr(DATA_DIRECT) accepted the "
				 "VMM buffer's dma-buf (%s), as NCCL registers on "
				 "a Data Direct device: lkey/rkey issued", map);
			mr_evidence(r, &pp->vmm_dmabuf, ctx->vf->reg.bytes,
				    ctx->opt->verbose);
		} else {
			same = pp->dmabuf.tried && !pp->dmabuf.ok &&
			       pp->dmabuf.data_direct &&
			       pp->dmabuf.err == pp->vmm_dmabuf.err;
			r = emit(ctx, pr->subject, ST_BLOCKED,
				 C_VMM_DD_MR_FAILED, "mlx5dv_reg_dmabuf_mr("
				 "DATA_DIRECT) on the VMM buffer's dma-buf (%s): "
				 "%s%s", map, strerror(pp->vmm_dmabuf.err),
				 same ? " (as on cuMemAlloc memory, see "
				 "reg.dmabuf)" : "");
			if (same)
				vmm_as_cumemalloc(ctx, r, "reg.dmabuf", pr->subject);
			else
				remedy_VMM_DD_MR_FAILED(r);
			ev_int(r, "errno", pp->vmm_dmabuf.err);
		}
		ev_bool(r, "data_direct", true);
		ev_bool(r, "pcie_mapping", pp->export_flags &
			CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
		vmm_evidence(r, v);
		return;
	}
	if (pp->vmm_dmabuf.ok) {
		r = emit(ctx, pr->subject, ST_PASS, C_VMM_DMABUF_MR_OK,
			 "ibv_reg_dmabuf_mr accepted the VMM buffer's dma-buf: "
			 "lkey/rkey issued");
		mr_evidence(r, &pp->vmm_dmabuf, ctx->vf->reg.bytes,
			    ctx->opt->verbose);
		vmm_evidence(r, v);
		return;
	}
	same = pp->dmabuf.tried && !pp->dmabuf.ok &&
	       pp->dmabuf.err == pp->vmm_dmabuf.err;
	c = classify_reg_errno(pp->vmm_dmabuf.err, true);
	r = emit(ctx, pr->subject, c.status, code_by_name(c.code),
		 "ibv_reg_dmabuf_mr on the VMM buffer: %s%s", c.meaning,
		 same ? " (as on cuMemAlloc memory, see reg.dmabuf)" : "");
	/* The same failure as reg.dmabuf's has its fix there. */
	if (same)
		vmm_as_cumemalloc(ctx, r, "reg.dmabuf", pr->subject);
	else if (pp->vmm_dmabuf.err == EOPNOTSUPP)
		remedy_PROVIDER_LACKS_DMABUF_MR(r);
	ev_int(r, "errno", pp->vmm_dmabuf.err);
	vmm_evidence(r, v);
}

int vmm_proof(const struct gdr_ctx *ctx, int pair, enum vmm_path path)
{
	const struct reg_pair *pp;
	const struct mr_result *m;
	const struct dp_result *d;
	const struct reg_vmm_gpu *v;

	if (pair < 0 || (size_t)pair >= ctx->inv.npair)
		return VMM_NOT_TRIED;
	pp = ctx_reg_pair(ctx, &ctx->inv.pair[pair]);
	v = vmm_of(ctx, &ctx->inv.pair[pair]);
	if (!pp || !v)
		return VMM_NOT_TRIED;
	/* A GPU that supports VMM and could not allocate: NCCL fails too. */
	if (v->skip == VMMS_TRIED && !v->ok && v->fail.called)
		return VMM_FAILED;
	if (!v->ok)
		return VMM_NOT_TRIED;
	m = path == VMM_PATH_DMABUF ? &pp->vmm_dmabuf : &pp->vmm_peermem;
	d = path == VMM_PATH_DMABUF ? &pp->dp_vmm_dmabuf : &pp->dp_vmm_peermem;
	if (path == VMM_PATH_DMABUF && pp->vmm_export_call.called &&
	    pp->vmm_export_call.rc != CUDA_SUCCESS)
		return VMM_FAILED;
	if (m->tried && !m->ok)
		return VMM_FAILED;
	if (d->tried)
		return d->ok ? VMM_PROVEN : VMM_FAILED;
	return VMM_NOT_TRIED;
}

/* A data check's finding, as evidence and in a reason. */
static const char *fault_word(int f)
{
	switch (f) {
	case DPF_NONE:
		return "ok";
	case DPF_NOT_LANDED:
		return "not_landed";
	case DPF_PARTIAL:
		return "partial";
	case DPF_STALE:
		return "stale";
	case DPF_CORRUPT:
		return "corrupt";
	case DPF_STRAY:
		return "stray";
	default:
		return "unknown";
	}
}

static const char *fault_human(int f)
{
	switch (f) {
	case DPF_NONE:
		return "ok";
	case DPF_NOT_LANDED:
		return "not landed";
	case DPF_PARTIAL:
		return "partly landed";
	case DPF_STALE:
		return "stale data";
	case DPF_STRAY:
		return "bytes outside the target";
	default:
		return "wrong data";
	}
}

static enum reason_code fault_code(int f)
{
	switch (f) {
	case DPF_NOT_LANDED:
		return C_DATA_NOT_LANDED;
	case DPF_PARTIAL:
		return C_DATA_INCOMPLETE;
	case DPF_STALE:
		return C_DATA_STALE;
	case DPF_STRAY:
		return C_DATA_STRAY_WRITE;
	default:
		return C_DATA_MISMATCH;
	}
}

static const char *write_fault_meaning(int f)
{
	switch (f) {
	case DPF_NOT_LANDED:
		return "no byte reached GPU memory, which still holds what it "
		       "held before: the NIC reports DMA it never did";
	case DPF_PARTIAL:
		return "only part of the data reached GPU memory, the rest "
		       "still holds the poison written before";
	case DPF_STRAY:
		return "bytes landed outside the range written (in the GPU "
		       "buffer's guards or in host memory)";
	default:
		return "GPU memory holds other bytes than were sent";
	}
}

static const char *read_fault_meaning(int f)
{
	switch (f) {
	case DPF_NOT_LANDED:
		return "no byte arrived in host memory, which still holds the "
		       "poison written before: the NIC reports DMA it never "
		       "did";
	case DPF_PARTIAL:
		return "only part of the data arrived in host memory";
	case DPF_STALE:
		return "it returned stale data: what GPU memory held "
		       "earlier in this run, not what it holds now";
	case DPF_STRAY:
		return "it wrote host memory outside its target range";
	default:
		return "it returned other bytes than GPU memory holds";
	}
}

/* Completions said success; the data checks say otherwise. */
static struct result *data_fault(struct gdr_ctx *ctx, int subject,
				 const struct dp_result *d)
{
	bool w = d->write_fault != DPF_NONE;
	int f = w ? d->write_fault : d->read_fault;
	const char *other;
	struct result *r;

	/* The WRITE is seen through cuMemcpyDtoH; without it only the READ. */
	other = d->verified_gpu ? "ok" : "not checked";
	r = emit(ctx, subject, ST_BLOCKED, fault_code(f),
		 "RDMA %s completed successfully but %s (WRITE: %s, READ: "
		 "%s)%s", w ? "WRITE" : "READ",
		 w ? write_fault_meaning(f) : read_fault_meaning(f),
		 w ? fault_human(f) : other, fault_human(d->read_fault),
		 d->fault_round ? "; in the round after the bandwidth run" : "");
	remedy_DATA_FAULT(r);
	ev_str(r, "write_check", "%s", d->verified_gpu || w ?
	       fault_word(d->write_fault) : "not_checked");
	ev_str(r, "read_check", "%s", fault_word(d->read_fault));
	ev_bool(r, "read_own_pattern", d->read_own_pattern);
	ev_int(r, "round", d->fault_round + 1);
	return r;
}

/*
 * A registered pair the transfer was not planned on (access/reg.c:
 * plan_transfers): say where it ran instead, for this GPU and this NIC.
 * Waived: the mechanism is proven on both ends by those pairs.
 */
static void off_rail(struct gdr_ctx *ctx, const struct inv_pair *pr)
{
	const struct inventory *inv = &ctx->inv;
	const char *gpu = ctx->rep->subj[inv->gpu[pr->gpu].subject].id;
	char rails[160] = "", nic_gpu[96] = "";
	size_t at = 0;
	int nrails = 0;
	struct result *r;

	/* Pairs are GPU-major (gate/inventory.c): this GPU's row, then this
	 * NIC's column, not every pair for every pair. */
	for (size_t n = 0; n < inv->nnic; n++) {
		const struct inv_pair *o = &inv->pair[(size_t)pr->gpu * inv->nnic + n];
		const struct reg_pair *op = ctx_reg_pair(ctx, o);

		if (!op || op->dp_off_rail || op->reg_inferred || op->skip[0])
			continue;
		/* The first four by name, then how many more. */
		if (nrails++ < 4 && at < sizeof(rails))
			at += (size_t)snprintf(rails + at, sizeof(rails) - at,
					       "%s%s", at ? ", " : "",
					       inv->nic[o->nic].name);
	}
	for (size_t g = 0; g < inv->ngpu && !nic_gpu[0]; g++) {
		const struct inv_pair *o = &inv->pair[g * inv->nnic + (size_t)pr->nic];
		const struct reg_pair *op = ctx_reg_pair(ctx, o);

		if (op && !op->dp_off_rail && !op->reg_inferred && !op->skip[0])
			snprintf(nic_gpu, sizeof(nic_gpu), "%s",
				 ctx->rep->subj[inv->gpu[o->gpu].subject].id);
	}
	if (nrails > 4 && at < sizeof(rails))
		snprintf(rails + at, sizeof(rails) - at, " and %d more",
			 nrails - 4);
	r = emit(ctx, pr->subject, ST_SKIP, C_TRANSFER_ON_RAILS,
		 "registered; the transfer ran on %s's rails (%s) and on %s "
		 "with %s (%s is not on a rail of %s; --every-pair runs it)",
		 gpu, rails[0] ? rails : "none", inv->nic[pr->nic].name,
		 nic_gpu[0] ? nic_gpu : "no GPU", inv->nic[pr->nic].name, gpu);
	ev_int(r, "gpu_rails_proven", nrails);
	r->waived = true;
}

/*
 * A pair the worker did not register (access/reg.c: plan_registrations):
 * its GPU is proven on a pair of its own, a transfer pair where there is
 * one, and so is its NIC. Says which (inferred_from) and waives the proof.
 * Returns true when it emitted.
 */
static bool reg_inferred(struct gdr_ctx *ctx, const struct inv_pair *pr,
			 const struct reg_pair *pp)
{
	const struct inventory *inv = &ctx->inv;
	const char *from = NULL;
	struct result *r;

	if (!pp || !pp->reg_inferred)
		return false;
	for (size_t n = 0; n < inv->nnic; n++) {
		const struct inv_pair *o = &inv->pair[(size_t)pr->gpu * inv->nnic + n];
		const struct reg_pair *op = ctx_reg_pair(ctx, o);

		if (!op || op->reg_inferred || op->skip[0])
			continue;
		if (!from || !op->dp_off_rail)
			from = ctx->rep->subj[o->subject].id;
		if (!op->dp_off_rail)
			break;
	}
	r = emit(ctx, pr->subject, ST_SKIP, C_PAIR_INFERRED,
		 "not tried on this pair: inferred from %s, %s's own pair (%s "
		 "is tried on pairs of its own); --every-pair tries every pair",
		 from ? from : "no pair",
		 ctx->rep->subj[inv->gpu[pr->gpu].subject].id,
		 inv->nic[pr->nic].name);
	ev_str(r, "inferred_from", "%s", from ? from : "");
	r->waived = true;
	return true;
}

static void data_gate(struct gdr_ctx *ctx, const struct target *t, bool dmabuf,
		      bool vmm)
{
	const struct inv_pair *pr = &ctx->inv.pair[t->pair];
	const struct reg_pair *pp;
	const struct dp_result *d;
	const struct mr_result *m;
	struct classified c;
	struct result *r;
	char human[32];

	if (ctx->opt->no_datapath) {
		r = emit(ctx, pr->subject, ST_SKIP, C_NO_DATAPATH,
			 "--no-datapath: registration only, no transfer");
		r->waived = true;
		return;
	}
	if (vmm) {
		const struct reg_vmm_gpu *v = NULL;

		pp = vmm_pair_or_skip(ctx, pr, "the loopback transfer on a "
				      "VMM buffer", &v);
		if (!pp)
			return;
		d = dmabuf ? &pp->dp_vmm_dmabuf : &pp->dp_vmm_peermem;
		m = dmabuf ? &pp->vmm_dmabuf : &pp->vmm_peermem;
	} else {
		if (stage_missing(ctx, pr->subject, "the loopback transfer") ||
		    nic_ambiguous(ctx, pr->subject, pr->nic))
			return;
		pp = ctx_reg_pair(ctx, pr);
		d = pp ? (dmabuf ? &pp->dp_dmabuf : &pp->dp_peermem) : NULL;
		m = pp ? (dmabuf ? &pp->dmabuf : &pp->peermem) : NULL;
	}
	if (!vmm && pp && !pp->skip[0] && reg_inferred(ctx, pr, pp))
		return;
	if (pp && pp->dp_off_rail && !pp->skip[0] && m && m->ok) {
		off_rail(ctx, pr);
		return;
	}
	/* The stage's transfer record (vendor facts), not a DEP. */
	if ((!d || !d->tried) &&
	    pair_gpu_unavailable(ctx, pr->subject, pp, "the transfer",
				 !vmm))
		return;
	if (!d || !d->tried) {
		emit(ctx, pr->subject, ST_SKIP, C_NOT_REGISTERED,
		     "no transfer: %s", pp && pp->skip[0] ? pp->skip :
		     m && m->tried && !m->ok ? "the registration failed" :
		     "no MR to transfer into (see the registration layer)");
		return;
	}
	format_bytes(d->bytes, human, sizeof(human));
	if (d->ok) {
		r = emit(ctx, pr->subject, ST_PASS, C_TRANSFER_VERIFIED,
			 "loopback RC on port %d: RDMA WRITE into and READ from "
			 "GPU memory, %s verified", pp->port, human);
	} else if (d->htod.called) {
		r = emit(ctx, pr->subject, ST_ERROR, C_GPU_COPY_FAILED,
			 "preparing GPU memory for the check failed: "
			 "cuMemcpyHtoD_v2: %s", d->htod.name);
	} else if (d->dtoh.called) {
		r = emit(ctx, pr->subject, ST_ERROR, C_GPU_COPY_FAILED,
			 "RDMA WRITE completed; checking GPU memory failed: "
			 "cuMemcpyDtoH_v2: %s", d->dtoh.name);
	} else if (d->timeout) {
		r = emit(ctx, pr->subject, ST_ERROR, C_NO_COMPLETION,
			 "%s: no completion within the deadline (the NIC never "
			 "finished the operation)", d->step);
	} else if (d->wc_status >= 0) {
		c = classify_wc_status(d->wc_status);
		r = emit(ctx, pr->subject, c.status, code_by_name(c.code),
			 "%s completed with status %d: %s", d->step,
			 d->wc_status, c.meaning);
		if (d->wc_status == 4)
			remedy_WC_LOC_PROT_ERR(r);
		else if (d->wc_status == 12)
			remedy_WC_RETRY_EXC_ERR(r);
	} else if (d->write_fault || d->read_fault) {
		r = data_fault(ctx, pr->subject, d);
	} else if (d->write_ok && d->read_ok) {
		r = emit(ctx, pr->subject, ST_BLOCKED, C_DATA_MISMATCH,
			 "RDMA completed but the data differs (READ %s, GPU copy "
			 "%s): the NIC did not really move GPU memory",
			 d->verified_read ? "ok" : "wrong",
			 d->verified_gpu ? "ok" : "wrong");
	} else if (d->err == EOPNOTSUPP && !strcmp(d->step, "ibv_create_qp") &&
		   nic_is_efa(ctx, &ctx->inv.nic[pr->nic])) {
		/*
		 * rdma-core providers/efa/verbs.c efa_create_qp: only UD (and
		 * SRD through efadv) QPs; the RC loopback cannot run.
		 */
		r = emit(ctx, pr->subject, ST_SKIP, C_EFA_NO_RC,
			 "%s is an AWS EFA: ibv_create_qp(RC) -> EOPNOTSUPP "
			 "(UD and SRD QPs only), so the loopback RC transfer "
			 "cannot run; the registration above is what gdrcheck "
			 "proves", ctx->inv.nic[pr->nic].name);
		remedy_EFA_NO_RC(r);
	} else {
		r = emit(ctx, pr->subject, ST_ERROR, C_DATAPATH_SETUP_FAILED,
			 "%s failed: %s", d->step, strerror(d->err));
	}
	ev_int(r, "port", pp->port);
	if (pp->gid_index >= 0)
		ev_int(r, "gid_index", pp->gid_index);
	ev_int(r, "bytes", (long long)d->bytes);
	ev_bool(r, "write_ok", d->write_ok);
	ev_bool(r, "read_ok", d->read_ok);
	ev_bool(r, "verified_read", d->verified_read);
	ev_bool(r, "verified_gpu_copy", d->verified_gpu);
	if (d->ok) {
		ev_real(r, "write_gbps", d->gbps);
		ev_int(r, "bandwidth_writes", d->iters);
	}
	if (d->wc_status >= 0)
		ev_int(r, "wc_status", d->wc_status);
}

void gate_data_peermem(struct gdr_ctx *ctx, const struct target *t)
{
	data_gate(ctx, t, false, false);
}

void gate_data_dmabuf(struct gdr_ctx *ctx, const struct target *t)
{
	data_gate(ctx, t, true, false);
}

void gate_data_vmm_peermem(struct gdr_ctx *ctx, const struct target *t)
{
	data_gate(ctx, t, false, true);
}

void gate_data_vmm_dmabuf(struct gdr_ctx *ctx, const struct target *t)
{
	data_gate(ctx, t, true, true);
}

/* A CUDA ordinal's GPU subject id (GPUn in PCI order), or "GPU ?". */
static const char *gpu_id_of_ordinal(const struct gdr_ctx *ctx, int ordinal)
{
	for (size_t g = 0; g < ctx->inv.ngpu; g++) {
		const struct cuda_gpu *cg = ctx_cuda_gpu(ctx, (int)g);

		if (cg && cg->ordinal == ordinal)
			return ctx->rep->subj[ctx->inv.gpu[g].subject].id;
	}
	return "GPU ?";
}

void gate_data_gpu_to_gpu(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_nic *nic = &ctx->inv.nic[t->nic];
	const struct reg_nic *rn;
	const char *src, *dst;
	struct result *r;

	if (ctx->opt->no_datapath) {
		emit(ctx, nic->subject, ST_SKIP, C_NO_DATAPATH,
		     "--no-datapath: no transfer");
		return;
	}
	if (stage_missing(ctx, nic->subject, "the GPU-to-GPU transfer") ||
	    nic_ambiguous(ctx, nic->subject, t->nic))
		return;
	rn = reg_nic_of(ctx, t->nic);
	if (!rn || !rn->g2g_tried) {
		emit(ctx, nic->subject, ST_SKIP, C_FEWER_THAN_TWO_GPU_MRS,
		     "needs two GPUs registered on this device");
		return;
	}
	src = gpu_id_of_ordinal(ctx, rn->g2g_src);
	dst = gpu_id_of_ordinal(ctx, rn->g2g_dst);
	if (rn->g2g_ok)
		r = emit(ctx, nic->subject, ST_PASS, C_GPU_TO_GPU_OK,
			 "RDMA WRITE from %s's MR into %s's MR verified",
			 src, dst);
	else if (rn->g2g_fault)
		r = emit(ctx, nic->subject, ST_WARN,
			 rn->g2g_fault == DPF_NOT_LANDED ?
			 C_GPU_TO_GPU_NOT_LANDED : C_GPU_TO_GPU_MISMATCH,
			 "RDMA WRITE from %s's MR into %s's MR completed "
			 "successfully but %s", src, dst,
			 rn->g2g_fault == DPF_NOT_LANDED ?
			 "no byte reached the destination GPU" :
			 write_fault_meaning(rn->g2g_fault));
	else if (nic_is_efa(ctx, nic) && strstr(rn->g2g_error, "ibv_create_qp")) {
		/* efa_create_qp: no RC QPs (see data_gate). */
		r = emit(ctx, nic->subject, ST_SKIP, C_EFA_NO_RC,
			 "%s is an AWS EFA: ibv_create_qp(RC) -> EOPNOTSUPP "
			 "(UD and SRD QPs only), so the loopback RC transfer "
			 "cannot run; the registration above is what gdrcheck "
			 "proves", nic->name);
		remedy_EFA_NO_RC(r);
	} else
		r = emit(ctx, nic->subject, ST_WARN, C_GPU_TO_GPU_FAILED,
			 "RDMA WRITE from %s's MR into %s's MR: %s",
			 src, dst, rn->g2g_error);
	ev_int(r, "src_cuda", rn->g2g_src);
	ev_int(r, "dst_cuda", rn->g2g_dst);
	if (rn->g2g_fault)
		ev_str(r, "check", "%s", fault_word(rn->g2g_fault));
}

void gate_data_kmsg(struct gdr_ctx *ctx, const struct target *t)
{
	const struct reg_facts *rf = &ctx->vf->reg;
	struct result *r;
	char key[16];

	if (!rf->ran) {
		emit(ctx, ctx->host, ST_SKIP, C_NO_WINDOW,
		     "no registration or transfer ran: nothing to watch");
		return;
	}
	if (!rf->kmsg_readable) {
		/* errno 0 would print "Success": say that it is unknown. */
		if (rf->kmsg_errno == ENODEV)
			r = emit(ctx, ctx->host, ST_SKIP, C_KMSG_UNREADABLE,
				 "kernel log unreadable (/dev/kmsg is not the "
				 "kernel's log device: not a character device, "
				 "or no driver behind it): IOMMU/AER faults "
				 "during the test cannot be seen");
		else if (rf->kmsg_errno > 0)
			r = emit(ctx, ctx->host, ST_SKIP, C_KMSG_UNREADABLE,
				 "kernel log unreadable (/dev/kmsg: %s): IOMMU/AER "
				 "faults during the test cannot be seen",
				 strerror(rf->kmsg_errno));
		else
			r = emit(ctx, ctx->host, ST_SKIP, C_KMSG_UNREADABLE,
				 "kernel log not watched (/dev/kmsg: no error "
				 "recorded, the registration worker ended before "
				 "opening it): IOMMU/AER faults during the test "
				 "cannot be seen");
		remedy_KMSG_UNREADABLE(r);
		return;
	}
	if (!rf->kmsg_count) {
		emit(ctx, ctx->host, ST_PASS, C_KMSG_CLEAN,
		     "no IOMMU, DMAR, AMD-Vi, AER or Xid lines logged during "
		     "the registrations and transfers");
		return;
	}
	r = emit(ctx, ctx->host, ST_WARN, C_KMSG_FAULTS,
		 "%d kernel log line(s) about IOMMU/PCIe/GPU faults during the "
		 "test", rf->kmsg_count);
	remedy_KMSG_FAULTS(r);
	for (int i = 0; i < rf->kmsg_count && i < KMSG_MAX_LINES; i++) {
		snprintf(key, sizeof(key), "line%d", i);
		ev_str(r, key, "%s", rf->kmsg[i]);
	}
}
