// SPDX-License-Identifier: MIT
/*
 * Which results make the policy fail: what a CI system should count as a
 * failure (JUnit) and what stands between the node and its verdict. A run
 * that exits 0 has none. Otherwise, when no path the policy accepts is
 * READY, the blockers of each accepted path (and the decisive result of an
 * undecided one) fail; with --warn-fails, every WARN does. A BLOCKED
 * result on a path the policy does not require is never a failure.
 */
#include <string.h>

#include "core/result.h"
#include "core/xalloc.h"

unsigned int report_accepted_paths(const struct report *r)
{
	const char *req = r->meta.require ? r->meta.require : "any";

	if (!strcmp(req, "dmabuf"))
		return P_DMABUF;
	if (!strcmp(req, "peermem"))
		return P_PEERMEM;
	if (!strcmp(req, "nccl"))
		return P_NCCL;
	return P_BOTH;
}

bool *report_failing(const struct report *r)
{
	bool *fails = xcalloc(r->nres ? r->nres : 1, sizeof(*fails));
	unsigned int accepted = report_accepted_paths(r);
	bool any_ready = false;

	if (r->exit_code == 0)
		return fails;
	for (int p = 0; p < PATH_COUNT; p++)
		if ((accepted & (1u << p)) && r->path[p].verdict == V_READY)
			any_ready = true;
	for (int p = 0; p < PATH_COUNT && !any_ready; p++) {
		const struct path_verdict *pv = &r->path[p];

		if (!(accepted & (1u << p)) || pv->verdict == V_READY)
			continue;
		for (size_t b = 0; b < pv->nblockers; b++)
			if (pv->blockers[b] >= 0 && (size_t)pv->blockers[b] < r->nres)
				fails[pv->blockers[b]] = true;
		if (pv->decisive >= 0 && (size_t)pv->decisive < r->nres)
			fails[pv->decisive] = true;
	}
	if (r->meta.policy.warn_fails)
		for (size_t i = 0; i < r->nres; i++)
			if (r->res[i].status == ST_WARN)
				fails[i] = true;
	return fails;
}
