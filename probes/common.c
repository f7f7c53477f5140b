// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/cuda_api.h"
#include "access/sysroot.h"
#include "core/xalloc.h"
#include "probes/probes.h"

struct result *not_replayed(struct gdr_ctx *ctx, const struct lib_facts *lf,
			    bool named, enum worker_stage s, const char *lib)
{
	const struct vendor_facts *vf = ctx->vf;
	struct result *r;

	if (lf->attempted || !ctx->opt->sysroot || named ||
	    (vf->replayed_from[0] && vf->stage[s].state != STAGE_NOT_RUN))
		return NULL;
	if (vf->replayed_from[0])
		return emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
			    "not replayed: the captured run did not load %s",
			    lib);
	if (!vf->replay_error[0])
		return emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
			    "not replayed: --sysroot analyses a captured "
			    "node; its vendor answers are not in the capture");
	r = emit(ctx, ctx->host, ST_SKIP, C_NOT_REPLAYED,
		 "not replayed: the capture's vendor answers cannot be read: "
		 "%s", vf->replay_error);
	ev_str(r, "replay_error", "%s", vf->replay_error);
	return r;
}

bool capture_replaying(struct gdr_ctx *ctx)
{
	return ctx->opt->sysroot && sysroot_is_dir(ctx->sr, "/gdrcheck");
}

#define CAPFACT_MAX	(64 * 1024)

char *capfact_read(struct gdr_ctx *ctx, const char *name)
{
	char path[128], *buf = xcalloc(1, CAPFACT_MAX + 1);
	ssize_t n;

	snprintf(path, sizeof(path), "/gdrcheck/%s", name);
	n = sysroot_read(ctx->sr, path, buf, CAPFACT_MAX);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

bool node_getenv(struct gdr_ctx *ctx, const char *name, char *buf,
		 size_t len)
{
	size_t n = strlen(name);
	char *text, *line, *save = NULL;
	const char *v;
	bool found = false;

	if (!capture_replaying(ctx)) {
		v = getenv(name);
		if (v)
			snprintf(buf, len, "%s", v);
		return v != NULL;
	}
	text = capfact_read(ctx, "environ");
	if (!text)
		return false;
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, name, n) && line[n] == '=') {
			snprintf(buf, len, "%s", line + n + 1);
			found = true;
		}
	free(text);
	return found;
}

void capfact_write(struct gdr_ctx *ctx, const char *name, const char *text)
{
	char path[128];

	if (!sysroot_recording(ctx->sr))
		return;
	snprintf(path, sizeof(path), "/gdrcheck/%s", name);
	sysroot_record_file(ctx->sr, path, text, strlen(text));
}

enum gdr_status stage_problem(const struct gdr_ctx *ctx,
			      enum worker_stage s, char *buf, size_t len)
{
	const struct stage_status *st = &ctx->vf->stage[s];
	const char *call = st->call[0] ? st->call : "worker start-up";

	switch (st->state) {
	case STAGE_TIMEOUT:
		if (st->by_deadline)
			snprintf(buf, len, "timed out after %.3g s in %s: the "
				 "run's --deadline of %g s was spent",
				 st->limit, call, ctx->opt->deadline);
		else
			snprintf(buf, len, "timed out after %g s in %s",
				 ctx->opt->timeout, call);
		return ST_ERROR;
	case STAGE_DEADLINE:
		snprintf(buf, len, "not run: the run's --deadline of %g s was "
			 "spent before the %s stage", ctx->opt->deadline,
			 stage_name(s));
		return ST_ERROR;
	case STAGE_CRASHED:
		if (st->signal)
			snprintf(buf, len, "crashed with signal %d (%s) in %s",
				 st->signal, strsignal(st->signal), call);
		else
			snprintf(buf, len, "worker exited unexpectedly in %s",
				 call);
		return ST_ERROR;
	case STAGE_FAILED:
		snprintf(buf, len, "could not start the isolated worker: %s "
			 "failed: %s", st->call[0] ? st->call : "start-up",
			 st->err ? strerror(st->err) : "unknown error");
		return ST_ERROR;
	case STAGE_SKIPPED_DEP:
		/* Name the stage and call that poisoned the library. */
		for (int o = 0; o < WSTAGE_COUNT; o++) {
			char inner[192];

			if (o == (int)s || (ctx->vf->stage[o].state != STAGE_TIMEOUT &&
					    ctx->vf->stage[o].state != STAGE_CRASHED))
				continue;
			stage_problem(ctx, (enum worker_stage)o, inner,
				      sizeof(inner));
			snprintf(buf, len, "not run: the %s stage before it %s",
				 stage_name((enum worker_stage)o), inner);
			return ST_ERROR;
		}
		snprintf(buf, len, "not run: the vendor library hung or "
			 "crashed in an earlier stage");
		return ST_ERROR;
	case STAGE_INTERRUPTED:
		snprintf(buf, len, "interrupted (SIGINT/SIGTERM)%s%s",
			 st->call[0] ? " in " : "", st->call);
		return ST_ERROR;
	case STAGE_RUNNING:
		snprintf(buf, len, "stage did not finish (in %s)", call);
		return ST_ERROR;
	case STAGE_NOT_RUN:
	case STAGE_DONE:
	default:
		buf[0] = '\0';
		return ST_PASS;
	}
}

const struct cuda_gpu *ctx_cuda_gpu(const struct gdr_ctx *ctx, int gpu)
{
	int i = ctx->inv.gpu[gpu].cuda;

	if (i < 0 || i >= ctx->vf->cuda.gpus_recorded)
		return NULL;
	return &ctx->vf->cuda.gpus[i];
}

/*
 * The pointer is into the report's results: an emit() may move them
 * (realloc), so read what is needed from it before emitting.
 */
const struct result *ctx_result_of(const struct gdr_ctx *ctx,
				   const char *gate, int subject)
{
	const struct report *r = ctx->rep;

	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].subject == subject &&
		    !strcmp(r->res[i].gate->id, gate))
			return &r->res[i];
	return NULL;
}

bool ctx_gpu_hidden(const struct gdr_ctx *ctx, int gpu)
{
	const struct result *r;

	if (gpu < 0 || (size_t)gpu >= ctx->inv.ngpu)
		return false;
	r = ctx_result_of(ctx, "gpu.visible", ctx->inv.gpu[gpu].subject);
	return r && r->code_index == C_GPU_HIDDEN;
}

const struct reg_pair *ctx_reg_pair(const struct gdr_ctx *ctx,
				   const struct inv_pair *pr)
{
	/* Linked once by inventory_build (gate/inventory.c). */
	return pr->reg >= 0 && pr->reg < ctx->vf->reg.npairs ?
	       &ctx->vf->reg.pairs[pr->reg] : NULL;
}

const struct verbs_nic *ctx_verbs_nic(const struct gdr_ctx *ctx, int nic)
{
	int i = ctx->inv.nic[nic].verbs;

	if (i < 0 || i >= vf_upto(ctx->vf->verbs.count, ctx->vf->cap.nics))
		return NULL;
	return &ctx->vf->verbs.nics[i];
}

int nvidia_module(struct gdr_ctx *ctx, enum nv_flavour *fl,
		  const char **version)
{
	struct nv_module *nv = &ctx->nv_module;
	char text[4096];
	ssize_t n;

	if (!nv->read) {
		nv->read = true;
		n = sysroot_read(ctx->sr, "/proc/driver/nvidia/version", text,
				 sizeof(text));
		if (n < 0)
			nv->ret = (int)n;
		else if (parse_nvidia_version(text, &nv->fl, nv->version,
					      sizeof(nv->version)))
			nv->ret = -EINVAL;
	}
	*fl = nv->fl;
	*version = nv->version;
	return nv->ret;
}

void probe_caches_free(struct gdr_ctx *ctx)
{
	free(ctx->uverbs.node);
	free(ctx->uverbs.ibdev);
	memset(&ctx->uverbs, 0, sizeof(ctx->uverbs));
	memset(&ctx->nv_module, 0, sizeof(ctx->nv_module));
	memset(&ctx->platform, 0, sizeof(ctx->platform));
}

bool cuda_poisoned(const struct gdr_ctx *ctx, char *buf, size_t len)
{
	static const enum worker_stage cuda_stages[] = {
		WSTAGE_CUDA, WSTAGE_CUDA_EXPORT,
	};

	for (size_t i = 0; i < 2; i++) {
		enum stage_state st = ctx->vf->stage[cuda_stages[i]].state;

		if (st == STAGE_TIMEOUT || st == STAGE_CRASHED) {
			stage_problem(ctx, cuda_stages[i], buf, len);
			return true;
		}
	}
	return false;
}

bool cuda_usable(const struct gdr_ctx *ctx)
{
	const struct cuda_facts *cf = &ctx->vf->cuda;

	return cf->lib.loaded && cf->init.called && cf->init.rc == CUDA_SUCCESS;
}

/*
 * Where what a library printed during a stage is shown: the first result of
 * the first of the stage's gates that ran (one copy, not one per subject).
 */
static const struct {
	int n;
	enum gate_index g[5];
} output_gates[WSTAGE_COUNT] = {
	[WSTAGE_CUDA] = { 5, { G_GPU_LIBCUDA, G_GPU_CUINIT, G_GPU_DEVICES,
			       G_MECH_DMABUF_EXPORT, G_REG_PLAN } },
	[WSTAGE_CUDA_EXPORT] = { 2, { G_MECH_DMABUF_EXPORT, G_REG_DMABUF } },
	[WSTAGE_VERBS] = { 4, { G_NIC_LIBIBVERBS, G_NIC_UVERBS,
				G_MECH_DMABUF_PROVIDER, G_REG_HOST_MR } },
	[WSTAGE_NVML] = { 2, { G_GPU_NVML, G_TOPO_NVLINK } },
	[WSTAGE_REGISTRATION] = { 5, { G_REG_PLAN, G_REG_HOST_MR, G_REG_DMABUF,
				       G_REG_PEERMEM, G_DATA_DMABUF } },
	[WSTAGE_RELEASE] = { 4, { G_GPU_CUINIT, G_GPU_LIBCUDA, G_REG_PLAN,
				  G_MECH_DMABUF_EXPORT } },
};

/* Results that already show a stage's output (one stage's each). */
struct output_taken {
	const struct result *r[WSTAGE_COUNT];
	int n;
};

static bool taken(const struct output_taken *t, const struct result *r)
{
	for (int i = 0; i < t->n; i++)
		if (t->r[i] == r)
			return true;
	return false;
}

/* A gate that ran first; one left out by --only/--skip as a last resort. */
static struct result *output_result(struct report *rep, enum worker_stage s,
				    const struct output_taken *t)
{
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < output_gates[s].n; g++)
			for (size_t i = 0; i < rep->nres; i++) {
				struct result *r = &rep->res[i];

				if (r->gate->index != (int)output_gates[s].g[g] ||
				    taken(t, r) ||
				    (!pass && r->code_index == C_EXCLUDED))
					continue;
				return r;
			}
	return NULL;
}

void stage_output_evidence(struct gdr_ctx *ctx)
{
	struct output_taken t = { .n = 0 };

	for (int s = 0; s < WSTAGE_COUNT; s++) {
		const struct stage_status *st = &ctx->vf->stage[s];
		struct result *r;

		if (!st->output_bytes)
			continue;
		r = output_result(ctx->rep, (enum worker_stage)s, &t);
		if (!r)
			continue;	/* none of its gates ran */
		t.r[t.n++] = r;
		/* Untrusted bytes: the renderers escape them. */
		ev_str(r, "library_output", "%s", st->output);
		ev_int(r, "library_output_bytes", (long long)st->output_bytes);
		ev_bool(r, "library_output_truncated", st->output_truncated);
	}
}
