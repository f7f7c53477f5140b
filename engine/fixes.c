// SPDX-License-Identifier: MIT
/*
 * Fixes that fit where gdrcheck runs (issue 23): a result whose cause is
 * owned by a later or wider gate takes that gate's fix, so the report
 * lists one fix for both, in the words that apply here. A pod short of
 * locked memory was told `ulimit -l unlimited` under "to fix" while
 * host.container's containerd LimitMEMLOCK advice sat under "optional";
 * a pod in an exclusive RDMA namespace was told to attach a NIC; the
 * peermem fix came three times (mech.peermem, reg.peermem, its VMM twin).
 * Runs after the gates, before the verdict; only remediation text moves.
 */
#include <string.h>

#include "engine/gates.h"

/* A result of gate g on subject s (any status), or NULL. */
static struct result *result_at(struct report *r, enum gate_index g, int s)
{
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].gate == &gate_descs[g] && r->res[i].subject == s)
			return &r->res[i];
	return NULL;
}

/* The first result of gate g with code c and a fix, or NULL. */
static const struct result *owner(const struct report *r, enum gate_index g,
				  enum reason_code c)
{
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].gate == &gate_descs[g] &&
		    r->res[i].code_index == (int)c && r->res[i].remediation)
			return &r->res[i];
	return NULL;
}

static bool code_in(const struct result *res, const enum reason_code *codes,
		    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (res->code_index == (int)codes[i])
			return true;
	return false;
}

/* Every result with one of codes and a fix takes o's fix. */
static void take_fix(struct report *r, const struct result *o,
		     const enum reason_code *codes, size_t n)
{
	if (!o)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		if (res != o && res->remediation && code_in(res, codes, n))
			res->remediation = o->remediation;
	}
}

/*
 * The VMM buffer failing as the cuMemAlloc one does (same pair, same
 * code) has the same fix: one line lists both results.
 */
static void vmm_twins(struct report *r)
{
	static const enum gate_index twin[][2] = {
		{ G_REG_VMM_PEERMEM, G_REG_PEERMEM },
		{ G_REG_VMM_DMABUF, G_REG_DMABUF },
	};

	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		for (size_t k = 0; k < sizeof(twin) / sizeof(twin[0]); k++) {
			const struct result *o;

			if (res->gate != &gate_descs[twin[k][0]] ||
			    !res->remediation)
				continue;
			o = result_at(r, twin[k][1], res->subject);
			if (o && o->remediation && o->code_index == res->code_index)
				res->remediation = o->remediation;
		}
	}
}

void fixes_in_context(struct report *r)
{
	/* Locked memory in a container: the runtime's limit, not ulimit. */
	static const enum reason_code memlock[] = {
		C_MEMLOCK_LIMITED, C_MEMLOCK_TOO_SMALL, C_PIN_LIMIT,
		C_REG_PERMISSION,
	};
	/* Devices hidden by an exclusive RDMA netns: move one in. */
	static const enum reason_code netns[] = {
		C_NO_RDMA_DEVICE, C_KERNEL_VERBS_HIDDEN,
	};
	/* No peer-memory client: mech.peermem owns the module's fix. */
	static const enum reason_code peermem[] = { C_NO_PEER_MEMORY_CLIENT };

	take_fix(r, owner(r, G_HOST_CONTAINER, C_CONTAINER_MEMLOCK_NO_IPC_LOCK),
		 memlock, sizeof(memlock) / sizeof(memlock[0]));
	take_fix(r, owner(r, G_NIC_NETNS, C_NETNS_EXCLUSIVE_HIDDEN), netns,
		 sizeof(netns) / sizeof(netns[0]));
	take_fix(r, owner(r, G_MECH_PEERMEM, C_PEERMEM_NOT_LOADED), peermem,
		 sizeof(peermem) / sizeof(peermem[0]));
	vmm_twins(r);
}
