// SPDX-License-Identifier: MIT
/*
 * The storage of struct vendor_facts' node-sized arrays: one block, laid
 * out from the capacities alone, so that a parent can point the arrays
 * again after a worker wrote the header (access/vendor.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "access/vendor.h"

/* Each array starts on this boundary (the widest member alignment). */
#define VF_ALIGN 16

static size_t round_up(size_t n)
{
	return (n + VF_ALIGN - 1) & ~(size_t)(VF_ALIGN - 1);
}

static bool caps_valid(const struct vf_caps *c)
{
	return c->gpus >= 0 && c->gpus <= VF_CAPS_MAX_GPUS &&
	       c->nics >= 0 && c->nics <= VF_CAPS_MAX_NICS &&
	       c->pairs >= 0 && c->pairs <= VF_CAPS_MAX_PAIRS;
}

/* Lay the arrays out from @base (NULL: only count); returns the bytes. */
static size_t layout(struct vendor_facts *vf, char *base)
{
	const struct vf_caps *c = &vf->cap;
	size_t at = 0;

#define PLACE(ptr, n) do {						\
		if (base)						\
			(ptr) = (void *)(base + at);			\
		at += round_up((size_t)(n) * sizeof(*(ptr)));		\
	} while (0)
	PLACE(vf->cuda.gpus, c->gpus);
	PLACE(vf->nvml.gpus, c->gpus);
	PLACE(vf->reg.vmm, c->gpus);
	PLACE(vf->verbs.nics, c->nics);
	PLACE(vf->reg.nics, c->nics);
	PLACE(vf->reg.pairs, c->pairs);
#undef PLACE
	return at;
}

int vendor_facts_alloc(struct vendor_facts *vf, const struct vf_caps *caps,
		       bool shared)
{
	void *block;
	size_t size;

	memset(vf, 0, sizeof(*vf));
	if (!caps_valid(caps))
		return -EINVAL;
	vf->cap = *caps;
	size = layout(vf, NULL);
	if (!size)
		size = VF_ALIGN;	/* no arrays: still one valid block */
	if (shared) {
		/* Pages are made on first touch: a wide capacity costs
		 * address space, not memory, until the worker fills it. */
		block = mmap(NULL, size, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (block == MAP_FAILED)
			block = NULL;
	} else {
		block = calloc(1, size);
	}
	if (!block) {
		int err = errno ? errno : ENOMEM;

		memset(vf, 0, sizeof(*vf));
		return -err;
	}
	vf->arena = block;
	vf->arena_size = size;
	vf->arena_shared = shared;
	layout(vf, block);
	return 0;
}

void vendor_facts_layout(struct vendor_facts *vf)
{
	if (vf->arena)
		layout(vf, vf->arena);
	/* What the arrays hold cannot exceed them, whatever a worker wrote
	 * (verbs.count is a total: readers bound it with vf_upto()). */
	vf->cuda.gpus_recorded = vf_upto(vf->cuda.gpus_recorded, vf->cap.gpus);
	vf->nvml.gpus_recorded = vf_upto(vf->nvml.gpus_recorded, vf->cap.gpus);
	vf->reg.npairs = vf_upto(vf->reg.npairs, vf->cap.pairs);
	vf->reg.nnics = vf_upto(vf->reg.nnics, vf->cap.nics);
}

void vendor_facts_free(struct vendor_facts *vf)
{
	if (vf->arena) {
		if (vf->arena_shared)
			munmap(vf->arena, vf->arena_size);
		else
			free(vf->arena);
	}
	memset(vf, 0, sizeof(*vf));
}
