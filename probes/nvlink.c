// SPDX-License-Identifier: MIT
/*
 * NVML facts: gpu.nvml (the library and nvmlInit) and topo.nvlink (per GPU:
 * NVLink peers, directly or through NVSwitch, and C2C to a Grace CPU), and
 * the queries other probes build on (gpu_nvlink_peers, gpu_is_c2c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "access/nvml.h"
#include "decode/nvml_api.h"
#include "probes/probes.h"

/* NVML's answers, counted only as far as the worker recorded them. */
static int nvml_recorded(const struct gdr_ctx *ctx)
{
	return vf_upto(ctx->vf->nvml.gpus_recorded, ctx->vf->cap.gpus);
}

static bool nvml_usable(const struct gdr_ctx *ctx)
{
	const struct nvml_facts *nf = &ctx->vf->nvml;

	return nf->lib.loaded && nf->init.called &&
	       nf->init.rc == NVML_SUCCESS && nf->count_call.called &&
	       nf->count_call.rc == NVML_SUCCESS;
}

/* The NVML record of an inventory GPU (matched by PCI address), or NULL. */
static const struct nvml_gpu *ctx_nvml_gpu(const struct gdr_ctx *ctx, int gpu)
{
	const char *pci;

	if (gpu < 0 || (size_t)gpu >= ctx->inv.ngpu || !nvml_usable(ctx))
		return NULL;
	pci = ctx->inv.gpu[gpu].pci;
	if (!pci[0])
		return NULL;
	for (int i = 0; i < nvml_recorded(ctx); i++)
		if (!strcmp(ctx->vf->nvml.gpus[i].pci, pci))
			return &ctx->vf->nvml.gpus[i];
	return NULL;
}

/* The inventory GPU at a PCI address, or -1. */
static int inv_gpu_at(const struct gdr_ctx *ctx, const char *pci)
{
	if (!pci[0])
		return -1;
	for (size_t j = 0; j < ctx->inv.ngpu; j++)
		if (!strcmp(ctx->inv.gpu[j].pci, pci))
			return (int)j;
	return -1;
}

static int links_asked(const struct nvml_gpu *g)
{
	return g->links_asked < 0 ? 0 : g->links_asked > NV_MAX_LINKS ?
	       NV_MAX_LINKS : g->links_asked;
}

/* A link that does not exist on this GPU answers so (V100: 6, A100: 12). */
static bool no_such_link(int rc)
{
	return rc == NVML_ERROR_NOT_SUPPORTED ||
	       rc == NVML_ERROR_INVALID_ARGUMENT;
}

/* What the far end of an active link is. */
enum far_end { FAR_UNKNOWN, FAR_GPU, FAR_SWITCH, FAR_CPU };

static enum far_end link_far_end(const struct gdr_ctx *ctx,
				 const struct nvml_link *k, int *peer)
{
	*peer = -1;
	if (k->remote_type == NVML_NVLINK_DEVICE_TYPE_SWITCH)
		return FAR_SWITCH;
	if (k->remote_type == NVML_NVLINK_DEVICE_TYPE_IBMNPU)
		return FAR_CPU;
	if (k->remote_rc == NVML_SUCCESS)
		*peer = inv_gpu_at(ctx, k->remote_pci);
	/* Without the device type (older drivers), a far end at a GPU's
	 * address is that GPU; anything else stays unknown. */
	if (k->remote_type == NVML_NVLINK_DEVICE_TYPE_GPU || *peer >= 0)
		return *peer >= 0 ? FAR_GPU : FAR_UNKNOWN;
	return FAR_UNKNOWN;
}

struct nvlink_summary {
	int answered;		/* links whose state was answered */
	int active;
	int to_switch;
	int to_gpu;
	int to_cpu;
	int unresolved;		/* active, far end unknown */
	const char *fail_fn;	/* a query that failed, or NULL */
	int fail_rc;
	int fail_link;
};

static void summarise(const struct gdr_ctx *ctx, const struct nvml_gpu *g,
		      struct nvlink_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->fail_link = -1;
	for (int l = 0; l < links_asked(g); l++) {
		const struct nvml_link *k = &g->links[l];
		int peer;

		if (k->state_rc != NVML_SUCCESS) {
			if (!no_such_link(k->state_rc) && !s->fail_fn) {
				s->fail_fn = "nvmlDeviceGetNvLinkState";
				s->fail_rc = k->state_rc;
				s->fail_link = l;
			}
			continue;
		}
		s->answered++;
		if (k->active != 1)
			continue;
		s->active++;
		switch (link_far_end(ctx, k, &peer)) {
		case FAR_SWITCH:
			s->to_switch++;
			break;
		case FAR_GPU:
			s->to_gpu++;
			break;
		case FAR_CPU:
			s->to_cpu++;
			break;
		case FAR_UNKNOWN:
			s->unresolved++;
			if (s->fail_fn)
				break;
			s->fail_link = l;
			if (k->remote_rc != NVML_SUCCESS) {
				s->fail_fn = "nvmlDeviceGetNvLinkRemotePciInfo_v2";
				s->fail_rc = k->remote_rc;
			} else if (k->type_rc != NV_UNKNOWN &&
				   k->type_rc != NVML_SUCCESS) {
				s->fail_fn = "nvmlDeviceGetNvLinkRemoteDeviceType";
				s->fail_rc = k->type_rc;
			}
			break;
		}
	}
}

static bool has_switch_link(const struct gdr_ctx *ctx,
			    const struct nvml_gpu *g)
{
	struct nvlink_summary s;

	summarise(ctx, g, &s);
	return s.to_switch > 0;
}

int gpu_nvlink_peers(const struct gdr_ctx *ctx, int gpu, int *peers, int max)
{
	const struct nvml_gpu *g = ctx_nvml_gpu(ctx, gpu);
	struct nvlink_summary s;
	int n = 0;

	if (!g || !g->complete)
		return -1;
	summarise(ctx, g, &s);
	if (s.fail_fn || s.unresolved)
		return -1;
	for (size_t j = 0; j < ctx->inv.ngpu; j++) {
		const struct nvml_gpu *o;
		bool linked = false;

		if ((int)j == gpu)
			continue;
		/* Directly: one of our active links ends at GPU j. */
		for (int l = 0; l < links_asked(g) && !linked; l++) {
			int peer;

			if (g->links[l].state_rc == NVML_SUCCESS &&
			    g->links[l].active == 1 &&
			    link_far_end(ctx, &g->links[l], &peer) == FAR_GPU &&
			    peer == (int)j)
				linked = true;
		}
		/* Through the NVSwitch fabric both GPUs are attached to. */
		o = ctx_nvml_gpu(ctx, (int)j);
		if (!linked && s.to_switch && o && o->complete &&
		    has_switch_link(ctx, o))
			linked = true;
		if (!linked)
			continue;
		if (peers && n < max)
			peers[n] = (int)j;
		n++;
	}
	return n;
}

int gpu_is_c2c(const struct gdr_ctx *ctx, int gpu)
{
	const struct nvml_gpu *g = ctx_nvml_gpu(ctx, gpu);

	if (!g || !g->complete)
		return -1;
	if (g->c2c == 1 || g->c2c == 0)
		return g->c2c;
	/* The driver knows the call and says this GPU has no C2C mode. */
	if (g->c2c_rc == NVML_ERROR_NOT_SUPPORTED)
		return 0;
	return -1;
}

void gate_gpu_nvml(struct gdr_ctx *ctx, const struct target *t)
{
	const struct nvml_facts *nf = &ctx->vf->nvml;
	const struct lib_facts *lf = &nf->lib;
	char why[256] = "";
	struct result *r;
	int failed = 0;

	r = not_replayed(ctx, lf, ctx->opt->libnvml, WSTAGE_NVML,
			 "libnvidia-ml");
	if (r) {
		remedy_NOT_REPLAYED_NVML(r);
		return;
	}
	/* A hang or crash (even in nvmlShutdown, after the answers were
	 * in): the library misbehaved, which gpu.nvml reports. */
	if (stage_problem(ctx, WSTAGE_NVML, why, sizeof(why)) != ST_PASS) {
		r = emit(ctx, ctx->host, ST_ERROR, C_NVML_PROBE_FAILED,
			 "NVML: %s", why);
		ev_str(r, "path", "%s", lf->path);
		return;
	}
	if (!lf->attempted) {
		emit(ctx, ctx->host, ST_ERROR, C_NVML_PROBE_FAILED,
		     "NVML: the nvml stage did not run");
		return;
	}
	if (!lf->loaded) {
		if (lf->missing_required[0]) {
			r = emit(ctx, ctx->host, ST_ERROR, C_NVML_INCOMPLETE,
				 "%s lacks required symbols: %s", lf->path,
				 lf->missing_required);
			remedy_NVML_INCOMPLETE(r);
		} else {
			r = emit(ctx, ctx->host, ST_SKIP, C_NVML_NOT_FOUND,
				 "cannot load %s: %s; no NVLink, NVSwitch or "
				 "C2C facts", lf->path, lf->error);
			remedy_NVML_NOT_FOUND(r);
		}
		ev_str(r, "path", "%s", lf->path);
		ev_str(r, "error", "%s", lf->error);
		return;
	}
	if (nf->init.rc != NVML_SUCCESS) {
		r = emit(ctx, ctx->host, ST_ERROR, C_NVML_INIT_FAILED,
			 "nvmlInit_v2 failed: %s (%d)", nf->init.name,
			 nf->init.rc);
		remedy_NVML_INIT_FAILED(r);
		ev_str(r, "path", "%s", lf->path);
		ev_int(r, "rc", nf->init.rc);
		r->duration_ms = nf->init.ms;
		return;
	}
	if (nf->count_call.rc != NVML_SUCCESS) {
		r = emit(ctx, ctx->host, ST_ERROR, C_NVML_COUNT_FAILED,
			 "nvmlInit_v2 succeeded; nvmlDeviceGetCount_v2 failed: "
			 "%s (%d)", nf->count_call.name, nf->count_call.rc);
		ev_int(r, "rc", nf->count_call.rc);
		return;
	}
	for (int i = 0; i < nvml_recorded(ctx); i++)
		failed += !nf->gpus[i].complete || nf->gpus[i].fail.called;
	r = emit(ctx, ctx->host, ST_PASS, C_NVML_OK,
		 "%s loaded, nvmlInit_v2 succeeded: %d GPU(s)%s%s%s", lf->path,
		 nf->count, nf->driver_version[0] ? ", driver " : "",
		 nf->driver_version, failed ? " (some queries failed: see "
		 "topo.nvlink)" : "");
	ev_str(r, "path", "%s", lf->path);
	ev_str(r, "missing_optional", "%s", lf->missing_optional);
	ev_str(r, "driver_version", "%s", nf->driver_version);
	ev_int(r, "gpus", nf->count);
	ev_int(r, "gpus_failed", failed);
	ev_bool(r, "remote_device_type", nf->have_remote_type);
	ev_bool(r, "c2c_mode", nf->have_c2c);
	r->duration_ms = nf->init.ms;
}

/* "GPU1 GPU2" from inventory indexes (their subject ids). */
static void peer_list(const struct gdr_ctx *ctx, const int *peers, int n,
		      char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? " " : "",
				 ctx->rep->subj[ctx->inv.gpu[peers[i]].subject].id);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (!n)
		snprintf(buf, len, "none");
}

static const char *c2c_word(int c2c)
{
	return c2c == 1 ? "on" : c2c == 0 ? "off" : "unknown";
}

void gate_topo_nvlink(struct gdr_ctx *ctx, const struct target *t)
{
	const struct inv_gpu *ig = &ctx->inv.gpu[t->gpu];
	const struct nvml_gpu *g = ctx_nvml_gpu(ctx, t->gpu);
	int subj = ig->subject, *peers = NULL, n, c2c;
	struct nvlink_summary s;
	char list[1024], why[256];
	struct result *r;

	/* Not a DEP: gpu.nvml ERRORs on a late hang with usable answers. */
	if (!nvml_usable(ctx)) {
		emit(ctx, subj, ST_SKIP, C_NVML_UNAVAILABLE,
		     "NVML unavailable (see gpu.nvml): NVLink and C2C unknown");
		return;
	}
	if (!g) {
		/* A GPU NVML could not name may be this one. */
		for (int i = 0; i < nvml_recorded(ctx); i++) {
			const struct nvml_gpu *o = &ctx->vf->nvml.gpus[i];

			if (o->pci[0])
				continue;
			if (o->fail.called)
				snprintf(why, sizeof(why), "%s failed: %s (%d)",
					 o->fail_fn, o->fail.name, o->fail.rc);
			else if (stage_problem(ctx, WSTAGE_NVML, why,
					       sizeof(why)) == ST_PASS)
				snprintf(why, sizeof(why), "no PCI address");
			emit(ctx, subj, ST_ERROR, C_GPU_NOT_IN_NVML,
			     "NVML lists no GPU at %s: NVML GPU %d is unnamed (%s)",
			     ig->pci[0] ? ig->pci : "(address unknown)", o->index,
			     why);
			return;
		}
		r = emit(ctx, subj, ST_SKIP, C_GPU_NOT_IN_NVML,
			 "NVML lists no GPU at %s (of its %d)", ig->pci[0] ?
			 ig->pci : "(address unknown)", ctx->vf->nvml.count);
		return;
	}
	if (g->fail.called) {
		r = emit(ctx, subj, ST_ERROR, C_NVLINK_QUERY_FAILED,
			 "NVML GPU %d: %s failed: %s (%d)", g->index,
			 g->fail_fn, g->fail.name, g->fail.rc);
		ev_int(r, "rc", g->fail.rc);
		return;
	}
	if (!g->complete) {
		stage_problem(ctx, WSTAGE_NVML, why, sizeof(why));
		emit(ctx, subj, ST_ERROR, C_NVLINK_QUERY_FAILED,
		     "NVML GPU %d: its queries did not finish: %s", g->index,
		     why[0] ? why : "the nvml stage stopped");
		return;
	}
	summarise(ctx, g, &s);
	if (s.fail_fn || s.unresolved) {
		const char *fn = s.fail_fn ? s.fail_fn :
				 "nvmlDeviceGetNvLinkRemoteDeviceType";
		const char *name = s.fail_fn ?
			nvml_result_name(s.fail_rc) : "far end not a known GPU";

		r = emit(ctx, subj, ST_ERROR, C_NVLINK_QUERY_FAILED,
			 "link %d: %s failed: %s (%d)", s.fail_link, fn,
			 name ? name : "unknown nvmlReturn", s.fail_rc);
		ev_int(r, "link", s.fail_link);
		ev_int(r, "links_active", s.active);
		ev_int(r, "links_unresolved", s.unresolved);
		return;
	}
	/* NOT_SUPPORTED: the driver says this GPU has no C2C mode. */
	if (g->c2c_rc != NV_UNKNOWN && g->c2c_rc != NVML_SUCCESS &&
	    g->c2c_rc != NVML_ERROR_NOT_SUPPORTED) {
		const char *name = nvml_result_name(g->c2c_rc);

		r = emit(ctx, subj, ST_ERROR, C_NVLINK_QUERY_FAILED,
			 "NVML GPU %d: nvmlDeviceGetC2cModeInfoV failed: %s (%d)",
			 g->index, name ? name : "unknown nvmlReturn",
			 g->c2c_rc);
		ev_int(r, "rc", g->c2c_rc);
		return;
	}
	peers = xcalloc(ctx->inv.ngpu + 1, sizeof(*peers));
	n = gpu_nvlink_peers(ctx, t->gpu, peers, (int)ctx->inv.ngpu);
	c2c = gpu_is_c2c(ctx, t->gpu);
	peer_list(ctx, peers, n < 0 ? 0 : n, list, sizeof(list));
	free(peers);
	if (s.to_switch)
		r = emit(ctx, subj, ST_PASS, C_NVLINK_SWITCH,
			 "%d NVLink(s) active, to NVSwitch: NVLink peers %s; "
			 "C2C %s", s.active, list, c2c_word(c2c));
	else if (s.to_gpu)
		r = emit(ctx, subj, ST_PASS, C_NVLINK_DIRECT,
			 "%d NVLink(s) active, GPU to GPU: NVLink peers %s; "
			 "C2C %s", s.active, list, c2c_word(c2c));
	else if (c2c == 1)
		r = emit(ctx, subj, ST_PASS, C_NVLINK_C2C,
			 "C2C-attached to the CPU (Grace); no active NVLink");
	else
		r = emit(ctx, subj, ST_PASS, C_NVLINK_NONE,
			 "no active NVLink (%d link(s) answered); C2C %s",
			 s.answered, c2c_word(c2c));
	ev_str(r, "uuid", "%s", g->uuid);
	ev_int(r, "nvml_index", g->index);
	ev_int(r, "links_answered", s.answered);
	ev_int(r, "links_active", s.active);
	ev_int(r, "links_to_switch", s.to_switch);
	ev_int(r, "links_to_gpu", s.to_gpu);
	ev_int(r, "links_to_cpu", s.to_cpu);
	ev_str(r, "nvlink_peers", "%s", n > 0 ? list : "");
	ev_int(r, "c2c", c2c);
}
