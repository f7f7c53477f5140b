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
#include "core/xalloc.h"

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
 * What the policy looks up per ready pair, indexed once: the pair subject
 * of a (GPU, NIC) and the topo.path result of each pair subject.
 */
struct pair_index {
	struct pair_grid grid;
	int *path_result;	/* pair subject -> its topo.path result, -1 */
};

static void pair_index_build(const struct report *r, struct pair_index *ix)
{
	pair_grid_build(r, &ix->grid);
	ix->path_result = xcalloc(r->nsubj, sizeof(*ix->path_result));
	for (size_t i = 0; i < r->nsubj; i++)
		ix->path_result[i] = -1;
	for (size_t i = 0; i < r->nres; i++)
		if (ix->path_result[r->res[i].subject] < 0 &&
		    r->res[i].gate->index == G_TOPO_PATH)
			ix->path_result[r->res[i].subject] = (int)i;
}

static void pair_index_free(struct pair_index *ix)
{
	pair_grid_free(&ix->grid);
	free(ix->path_result);
}

/* The nvidia-smi class of a pair subject and its topo.path result. */
static int pair_class(const struct report *r, const struct pair_index *ix,
		      int pair, int *res_idx)
{
	static const char *const names[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };
	int i = ix->path_result[pair];
	const char *cls = i >= 0 ?
			  ev_find_str(&r->res[i], "nvidia_smi") : NULL;

	for (int c = 0; cls && c < 5; c++)
		if (!strcmp(cls, names[c])) {
			*res_idx = i;
			return c;
		}
	*res_idx = -1;
	return TOPO_UNKNOWN;
}

static int pair_of(const struct report *r, const struct pair_index *ix,
		   int gpu, int port)
{
	int nic = r->subj[port].kind == SUBJ_PORT ? r->subj[port].parent : port;

	return nic >= 0 ? pair_grid_find(&ix->grid, gpu, nic) : -1;
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

void policy_apply(struct report *r, const struct options *o)
{
	struct report_policy *pol = &r->meta.policy;
	bool by_pair = o->max_distance >= 0 || o->every_gpu;
	struct pair_index ix;
	char why[160];

	pol->every_gpu = o->every_gpu;
	pol->max_distance = o->max_distance;
	pol->warn_fails = o->warn_fails;
	if (by_pair)
		pair_index_build(r, &ix);

	for (int p = 0; p < PATH_COUNT; p++) {
		struct path_verdict *pv = &r->path[p];
		size_t kept = 0;
		int first_far = -1;

		if (pv->verdict != V_READY)
			continue;
		if (o->max_distance >= 0) {
			for (size_t i = 0; i < pv->nready; i++) {
				int idx, pair = pair_of(r, &ix, pv->ready[i][0],
							pv->ready[i][1]);
				int cls = pair >= 0 ?
					  pair_class(r, &ix, pair, &idx) :
					  TOPO_UNKNOWN;

				if (cls <= o->max_distance) {
					pv->ready[kept][0] = pv->ready[i][0];
					pv->ready[kept++][1] = pv->ready[i][1];
				} else if (first_far < 0) {
					first_far = idx;
				}
			}
			pv->nready = kept;
			if (kept)
				snprintf(pv->summary, sizeof(pv->summary),
					 "READY: %s with %s%s (within %s)",
					 r->subj[pv->ready[0][0]].id,
					 r->subj[pv->ready[0][1]].id,
					 kept > 1 ? " and more" : "",
					 topo_class_name(o->max_distance));
			if (!kept) {
				snprintf(why, sizeof(why), "no ready GPU-NIC pair "
					 "within %s (--max-distance)",
					 topo_class_name(o->max_distance));
				violation(r, "%s: %s", path_name(p), why);
				close_path(r, p, first_far, why);
				continue;
			}
		}
		if (o->every_gpu) {
			int close_at = -2;

			/* Judge every GPU on the same ready list, then close. */
			for (size_t g = 0; g < r->nsubj; g++) {
				int best = TOPO_UNKNOWN, idx, first = -1, near = -1;
				bool ok = false;

				if (r->subj[g].kind != SUBJ_GPU)
					continue;
				/* Its nearest NICs: the lowest class it has. */
				for (size_t q = 0; q < r->nsubj; q++)
					if (r->subj[q].kind == SUBJ_PAIR &&
					    r->subj[q].pair_gpu == (int)g) {
						int c = pair_class(r, &ix, (int)q, &idx);

						if (c < best) {
							best = c;
							first = idx;
							near = (int)q;
						}
					}
				for (size_t i = 0; i < pv->nready && !ok; i++) {
					int pair = pair_of(r, &ix, pv->ready[i][0],
							   pv->ready[i][1]);

					ok = pv->ready[i][0] == (int)g && pair >= 0 &&
					     pair_class(r, &ix, pair, &idx) <= best;
				}
				if (ok)
					continue;
				snprintf(why, sizeof(why), "%s is not ready with "
					 "its nearest NIC (--every-gpu)",
					 r->subj[g].id);
				violation(r, "%s: %s", path_name(p), why);
				if (close_at == -2) {
					/* Name what closed the GPU's nearest pair. */
					for (size_t i = 0; i < r->nres; i++)
						if ((r->res[i].subject == (int)g ||
						     r->res[i].subject == near) &&
						    r->res[i].status == ST_BLOCKED &&
						    (r->res[i].paths & (1u << p))) {
							first = (int)i;
							break;
						}
					for (size_t i = 0; i < r->nres && first < 0; i++)
						if (r->res[i].subject == (int)g)
							first = (int)i;
					close_at = first;
					snprintf(pv->summary, sizeof(pv->summary),
						 "%s", why);
				}
			}
			if (close_at != -2) {
				snprintf(why, sizeof(why), "%s", pv->summary);
				close_path(r, p, close_at, why);
			}
		}
	}
	if (by_pair)
		pair_index_free(&ix);
	if (o->warn_fails) {
		size_t warns = 0;

		for (size_t i = 0; i < r->nres; i++)
			warns += r->res[i].status == ST_WARN;
		if (warns)
			violation(r, "%zu WARN result(s) (--warn-fails)", warns);
	}
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
	else if (d == V_BLOCKED && p == V_BLOCKED)
		r->overall = V_BLOCKED;
	else
		r->overall = V_UNKNOWN;
	if (warn_fails && r->overall == V_READY) {
		for (size_t i = 0; i < r->nres; i++)
			if (r->res[i].status == ST_WARN) {
				r->overall = V_BLOCKED;
				break;
			}
	}
	r->exit_code = r->overall == V_READY ? 0 :
		       r->overall == V_BLOCKED ? 1 : 3;
}
