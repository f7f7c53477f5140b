// SPDX-License-Identifier: MIT
/*
 * Provisioning policy on top of the verdict: --max-distance CLASS drops
 * ready GPU/port combinations farther apart than CLASS, --every-gpu wants
 * every GPU ready with one of its nearest NICs, --warn-fails turns any WARN
 * into a failed gate. Violations are recorded in the report and the path
 * and overall verdicts recomputed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gates.h"

static void violation(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violation(struct report *r, const char *fmt, ...)
{
	struct report_policy *pol = &r->meta.policy;
	va_list ap;

	if (pol->nviolations >= POLICY_MAX_VIOLATIONS)
		return;
	va_start(ap, fmt);
	vsnprintf(pol->violations[pol->nviolations++],
		  sizeof(pol->violations[0]), fmt, ap);
	va_end(ap);
}

/*
 * The distance class of a pair subject, from its typed pair fact (set by
 * topo.path), and in *res_idx the result that established it (-1 when
 * the class is unknown).
 */
static int pair_class(const struct report *r, int pair, int *res_idx)
{
	const struct pair_fact *f = report_pair_fact(r, pair);

	*res_idx = f->distance != TOPO_UNKNOWN ? f->distance_result : -1;
	return f->distance;
}

/* The pair subject of a ready (GPU, port or port-less NIC), or -1. */
static int pair_of(const struct report *r, const struct pair_grid *grid,
		   int gpu, int port)
{
	int nic = r->subj[port].kind == SUBJ_PORT ? r->subj[port].parent : port;

	return nic >= 0 ? pair_grid_find(grid, gpu, nic) : -1;
}

static void close_path(struct report *r, enum gdr_path p, int decisive,
		       const char *why)
{
	struct path_verdict *pv = &r->path[p];

	pv->verdict = V_BLOCKED;
	pv->decisive = decisive;
	pv->nready = 0;
	snprintf(pv->summary, sizeof(pv->summary), "BLOCKED by policy: %s", why);
}

/*
 * --max-distance: keep the ready combinations within the class; none left
 * closes the path at the path result of the first one dropped. Returns
 * whether the path is still READY.
 */
static bool apply_max_distance(struct report *r, enum gdr_path p,
			       const struct pair_grid *grid, int max_distance)
{
	struct path_verdict *pv = &r->path[p];
	size_t kept = 0;
	int first_far = -1;
	char why[160];

	for (size_t i = 0; i < pv->nready; i++) {
		int idx = -1, pair = pair_of(r, grid, pv->ready[i][0],
					pv->ready[i][1]);
		int cls = pair >= 0 ? pair_class(r, pair, &idx) : TOPO_UNKNOWN;

		if (cls <= max_distance) {
			pv->ready[kept][0] = pv->ready[i][0];
			pv->ready[kept++][1] = pv->ready[i][1];
		} else if (first_far < 0) {
			first_far = idx;
		}
	}
	pv->nready = kept;
	if (kept) {
		snprintf(pv->summary, sizeof(pv->summary),
			 "READY: %s with %s%s (within %s)",
			 r->subj[pv->ready[0][0]].id,
			 r->subj[pv->ready[0][1]].id,
			 kept > 1 ? " and more" : "",
			 topo_class_name((enum topo_class)max_distance));
		return true;
	}
	snprintf(why, sizeof(why), "no ready GPU-NIC pair within %s "
		 "(--max-distance)",
		 topo_class_name((enum topo_class)max_distance));
	violation(r, "%s: %s", path_name(p), why);
	close_path(r, p, first_far, why);
	return false;
}

/*
 * GPU subject g's nearest class over all its pairs (TOPO_UNKNOWN: none
 * known), the path result that set it in *first and that pair in *near.
 */
static int nearest_class(const struct report *r, int g, int *first, int *near)
{
	int best = TOPO_UNKNOWN, idx;

	*first = -1;
	*near = -1;
	for (size_t q = 0; q < r->nsubj; q++) {
		int c;

		if (r->subj[q].kind != SUBJ_PAIR || r->subj[q].pair_gpu != g)
			continue;
		c = pair_class(r, (int)q, &idx);
		if (c < best) {
			best = c;
			*first = idx;
			*near = (int)q;
		}
	}
	return best;
}

/* Is GPU subject g on the ready list with a pair no farther than best? */
static bool ready_within(const struct report *r, enum gdr_path p,
			 const struct pair_grid *grid, int g, int best)
{
	const struct path_verdict *pv = &r->path[p];
	int idx;

	for (size_t i = 0; i < pv->nready; i++) {
		int pair = pair_of(r, grid, pv->ready[i][0], pv->ready[i][1]);

		if (pv->ready[i][0] == g && pair >= 0 &&
		    pair_class(r, pair, &idx) <= best)
			return true;
	}
	return false;
}

/*
 * The result to name when GPU subject g is not ready with its nearest
 * pair near: what closed g or that pair on path p, else g's first result,
 * else fallback (the path result of its nearest pair).
 */
static int gpu_closer(const struct report *r, enum gdr_path p, int g,
		      int near, int fallback)
{
	for (size_t i = 0; i < r->nres; i++)
		if ((r->res[i].subject == g || r->res[i].subject == near) &&
		    r->res[i].status == ST_BLOCKED &&
		    (result_paths(&r->res[i]) & (1u << p)))
			return (int)i;
	if (fallback >= 0)
		return fallback;
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].subject == g)
			return (int)i;
	return -1;
}

/*
 * A GPU hidden from this process (CUDA_VISIBLE_DEVICES, a container's or a
 * Slurm step's device cgroup) is not the node's fault: the policy judges
 * only the GPUs the process was given (gpu.visible says GPU_HIDDEN).
 */
static bool gpu_hidden(const struct report *r, int g)
{
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].subject == g &&
		    r->res[i].gate == &gate_descs[G_GPU_VISIBLE])
			return r->res[i].code_index == C_GPU_HIDDEN;
	return false;
}

/*
 * --every-gpu: every GPU must be ready with one of its nearest NICs. All
 * GPUs are judged on the same ready list (one violation each), then the
 * path closes at what closed the first GPU that failed.
 */
static void apply_every_gpu(struct report *r, enum gdr_path p,
			    const struct pair_grid *grid)
{
	struct path_verdict *pv = &r->path[p];
	int close_at = -2;
	char why[160];

	for (size_t g = 0; g < r->nsubj; g++) {
		int best, first, near;

		if (r->subj[g].kind != SUBJ_GPU || gpu_hidden(r, (int)g))
			continue;
		best = nearest_class(r, (int)g, &first, &near);
		if (ready_within(r, p, grid, (int)g, best))
			continue;
		snprintf(why, sizeof(why), "%s is not ready with its nearest "
			 "NIC (--every-gpu)", r->subj[g].id);
		violation(r, "%s: %s", path_name(p), why);
		if (close_at == -2) {
			close_at = gpu_closer(r, p, (int)g, near, first);
			snprintf(pv->summary, sizeof(pv->summary), "%s", why);
		}
	}
	if (close_at != -2) {
		snprintf(why, sizeof(why), "%s", pv->summary);
		close_path(r, p, close_at, why);
	}
}

/*
 * A lost rail fails the node whatever the policy: its GPU's jobs run at
 * the pace of the rails left (issue 23). Each is a violation naming the
 * port; the nccl path closes at the first.
 */
static void apply_rails(struct report *r)
{
	int first = -1;

	for (size_t i = 0; i < r->nres; i++) {
		if (!report_rail_failure(r, i))
			continue;
		violation(r, "%s", r->res[i].reason);
		if (first < 0)
			first = (int)i;
	}
	if (first >= 0 && (r->path[PATH_NCCL].verdict == V_READY ||
			   r->path[PATH_NCCL].verdict == V_READY_UNPROVEN)) {
		struct path_verdict *pv = &r->path[PATH_NCCL];

		close_path(r, PATH_NCCL, first, "");
		snprintf(pv->summary, sizeof(pv->summary), "BLOCKED at %s "
			 "(%s): %s", r->res[first].gate->id,
			 r->subj[r->res[first].subject].id,
			 r->res[first].reason);
	}
}

/* --warn-fails: one violation counting the WARN results. */
static void apply_warn_fails(struct report *r)
{
	size_t warns = 0;

	for (size_t i = 0; i < r->nres; i++)
		warns += r->res[i].status == ST_WARN;
	if (warns)
		violation(r, "%zu WARN result(s) (--warn-fails)", warns);
}

void policy_apply(struct report *r, const struct options *o)
{
	struct report_policy *pol = &r->meta.policy;
	bool by_pair = o->max_distance >= 0 || o->every_gpu;
	struct pair_grid grid;

	pol->every_gpu = o->every_gpu;
	pol->max_distance = o->max_distance;
	pol->warn_fails = o->warn_fails;
	if (by_pair)
		pair_grid_build(r, &grid);
	for (int p = 0; by_pair && p < PATH_COUNT; p++) {
		if (r->path[p].verdict != V_READY &&
		    r->path[p].verdict != V_READY_UNPROVEN)
			continue;
		if (o->max_distance >= 0 &&
		    !apply_max_distance(r, (enum gdr_path)p, &grid,
					o->max_distance))
			continue;
		if (o->every_gpu)
			apply_every_gpu(r, (enum gdr_path)p, &grid);
	}
	if (by_pair)
		pair_grid_free(&grid);
	if (o->warn_fails)
		apply_warn_fails(r);
	apply_rails(r);
}

const char *require_name(enum require_policy req)
{
	switch (req) {
	case REQUIRE_DMABUF:
		return "dmabuf";
	case REQUIRE_PEERMEM:
		return "peermem";
	case REQUIRE_NCCL:
		return "nccl";
	case REQUIRE_AUTO:
		return "auto";
	case REQUIRE_ANY:
		break;
	}
	return "any";
}

/*
 * A node whose jobs run NCCL fails when NCCL's path does, whatever the
 * other mechanism can do: nccl-dmabuf-fails (DMA-BUF registration EINVAL,
 * peermem fine) was READY under "any" while every NCCL job on it failed.
 * Without NCCL found, nothing says which mechanism the jobs use: any. On
 * an AWS EFA node NCCL runs through aws-ofi-nccl, which the nccl path
 * does not model: any, whose registrations are the proof there.
 */
enum require_policy policy_resolve(struct report *r, enum require_policy req)
{
	if (req == REQUIRE_AUTO)
		req = r->nccl.found && !r->nccl.ofi_only ? REQUIRE_NCCL :
		      REQUIRE_ANY;
	r->meta.require = require_name(req);
	return req;
}

/* The overall verdict again, after the policy; WARN can fail it. */
void policy_overall(struct report *r, enum require_policy req, bool warn_fails)
{
	enum verdict d = r->path[PATH_DMABUF].verdict;
	enum verdict p = r->path[PATH_PEERMEM].verdict;

	if (req == REQUIRE_DMABUF)
		r->overall = d;
	else if (req == REQUIRE_PEERMEM)
		r->overall = p;
	else if (req == REQUIRE_NCCL)	/* issue 14: the nccl path alone */
		r->overall = r->path[PATH_NCCL].verdict;
	else if (d == V_READY || p == V_READY)
		r->overall = V_READY;
	else if (d == V_READY_UNPROVEN || p == V_READY_UNPROVEN)
		r->overall = V_READY_UNPROVEN;
	else if (d == V_BLOCKED && p == V_BLOCKED)
		r->overall = V_BLOCKED;
	else
		r->overall = V_UNKNOWN;
	for (size_t i = 0; i < r->nres; i++)
		if (report_rail_failure(r, i))
			r->overall = V_BLOCKED;
	if (warn_fails && (r->overall == V_READY ||
			   r->overall == V_READY_UNPROVEN)) {
		for (size_t i = 0; i < r->nres; i++)
			if (r->res[i].status == ST_WARN) {
				r->overall = V_BLOCKED;
				break;
			}
	}
	r->exit_code = r->overall == V_READY ||
		       r->overall == V_READY_UNPROVEN ? 0 :
		       r->overall == V_BLOCKED ? 1 : 3;
}

/*
 * Two-node mode: the wire's verdict (report.peer.verdict) joins the
 * node's. A failed rail fails the run (exit 1); a peer that could not be
 * asked, or no rail proven, leaves it undecided (exit 3) unless the node
 * itself is BLOCKED.
 */
void policy_wire(struct report *r, bool warn_fails)
{
	bool blocked = false, error = false, proven = false;

	if (!r->peer.active)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (res->layer != L_PEER)
			continue;
		blocked |= res->status == ST_BLOCKED ||
			   (warn_fails && res->status == ST_WARN);
		error |= res->status == ST_ERROR;
		proven |= res->gate->index == G_PEER_TRANSFER &&
			  (res->status == ST_PASS || res->status == ST_WARN);
	}
	r->peer.verdict = blocked ? V_BLOCKED : error || !proven ? V_UNKNOWN :
			  V_READY;
	if (r->peer.verdict == V_BLOCKED)
		r->overall = V_BLOCKED;
	else if (r->peer.verdict == V_UNKNOWN && r->overall != V_BLOCKED)
		r->overall = V_UNKNOWN;
	r->exit_code = r->overall == V_READY ||
		       r->overall == V_READY_UNPROVEN ? 0 :
		       r->overall == V_BLOCKED ? 1 : 3;
}
