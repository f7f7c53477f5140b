// SPDX-License-Identifier: MIT
/*
 * Which results make the policy fail: what a CI system should count as a
 * failure (JUnit) and what stands between the node and its verdict. A run
 * that exits 0 has none. Otherwise, when no path the policy accepts is
 * READY, the blockers of each accepted path (and the decisive result of an
 * undecided one) fail, except those of a path whose blockers include all of
 * another accepted path's; with --warn-fails, every WARN does. A BLOCKED
 * result on a path the policy does not require is never a failure.
 */
#include <string.h>

#include <stdio.h>

#include "core/result.h"
#include "gate/catalog.h"
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

/* Is result i a blocker (or the decisive result) of path p? */
static bool path_has(const struct path_verdict *pv, int i)
{
	if (pv->decisive == i)
		return true;
	for (size_t b = 0; b < pv->nblockers; b++)
		if (pv->blockers[b] == i)
			return true;
	return false;
}

/*
 * Under a policy that accepts several paths (--require any), a path whose
 * blockers include all of another accepted path's is not needed: clearing
 * the other's clears the verdict. container-no-uverbs listed "modprobe
 * nvidia_peermem" (peermem: nic.uverbs, mech.peermem, reg.peermem) as a fix
 * beside nic.uverbs's, which alone makes DMA-BUF READY. Equal sets: the
 * first path stays.
 */
static bool dominated(const struct report *r, unsigned int accepted, int p)
{
	const struct path_verdict *pv = &r->path[p];

	for (int q = 0; q < PATH_COUNT; q++) {
		const struct path_verdict *qv = &r->path[q];
		bool subset = true, equal = true;

		if (q == p || !(accepted & (1u << q)) || qv->verdict == V_READY ||
		    (!qv->nblockers && qv->decisive < 0))
			continue;
		for (size_t b = 0; b < qv->nblockers && subset; b++)
			subset = path_has(pv, qv->blockers[b]);
		if (subset && qv->decisive >= 0)
			subset = path_has(pv, qv->decisive);
		if (!subset)
			continue;
		for (size_t b = 0; b < pv->nblockers && equal; b++)
			equal = path_has(qv, pv->blockers[b]);
		if (equal && pv->decisive >= 0)
			equal = path_has(qv, pv->decisive);
		if (!equal || q < p)
			return true;
	}
	return false;
}

bool report_rail_failure(const struct report *r, size_t i)
{
	return r->res[i].gate == &gate_descs[G_TOPO_RAILS] &&
	       r->res[i].status == ST_BLOCKED;
}

/*
 * A lost rail fails with the result that says why: nic.port owns the
 * port's state and its fix (node-8x12-broken-rail listed the DOWN port's
 * fix as optional), nic.uverbs a device that does not open
 * (node-8x24-rails-fail-open).
 */
static void rail_cause(const struct report *r, size_t i, bool *fails)
{
	const char *nic = ev_find_str(&r->res[i], "nic");
	char port[96];

	fails[i] = true;
	if (!nic)
		return;
	snprintf(port, sizeof(port), "%s/%lld", nic,
		 ev_find_int(&r->res[i], "port", 0));
	for (size_t k = 0; k < r->nres; k++) {
		const char *subj = r->subj[r->res[k].subject].id;

		if (r->res[k].status != ST_BLOCKED)
			continue;
		if ((r->res[k].gate == &gate_descs[G_NIC_PORT] &&
		     !strcmp(subj, port)) ||
		    (r->res[k].gate == &gate_descs[G_NIC_UVERBS] &&
		     !strcmp(subj, nic)))
			fails[k] = true;
	}
}

/*
 * A failing result that stands on another (evidence caused_by "gate
 * subject", data.nccl on the registration that failed) fails with it: the
 * root fix of a path the policy needs belongs under "to fix", not
 * "optional" (nccl-installed-dmabuf-fails listed reg.dmabuf's there).
 */
static void root_cause(const struct report *r, size_t i, bool *fails)
{
	const char *by = ev_find_str(&r->res[i], "caused_by");
	size_t glen;

	if (!by)
		return;
	glen = strcspn(by, " ");
	if (!by[glen])
		return;
	for (size_t k = 0; k < r->nres; k++)
		if (!fails[k] && r->res[k].status == ST_BLOCKED &&
		    strlen(r->res[k].gate->id) == glen &&
		    !strncmp(r->res[k].gate->id, by, glen) &&
		    !strcmp(r->subj[r->res[k].subject].id, by + glen + 1))
			fails[k] = true;
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

		if (!(accepted & (1u << p)) || pv->verdict == V_READY ||
		    dominated(r, accepted, p))
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
	for (size_t i = 0; i < r->nres; i++)
		if (report_rail_failure(r, i))
			rail_cause(r, i, fails);
	/* Two-node mode: a rail that failed against the peer fails the run. */
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].layer == L_PEER &&
		    (r->res[i].status == ST_BLOCKED ||
		     r->res[i].status == ST_ERROR))
			fails[i] = true;
	for (size_t i = 0; i < r->nres; i++)
		if (fails[i])
			root_cause(r, i, fails);
	return fails;
}
