// SPDX-License-Identifier: MIT
/*
 * A run context's end-of-gates hooks: a probe that keeps working state
 * across gates (the NCCL model) says how to free it, so the engine frees
 * it without knowing what it is.
 */
#include <stdlib.h>

#include "gate/context.h"

void ctx_at_end(struct gdr_ctx *ctx, void (*fn)(struct gdr_ctx *ctx))
{
	for (int i = 0; i < ctx->nat_end; i++)
		if (ctx->at_end[i] == fn)
			return;
	/* A fixed few probes register: more is a programming error. */
	if (ctx->nat_end >= CTX_AT_END_MAX)
		abort();
	ctx->at_end[ctx->nat_end++] = fn;
}

void ctx_end(struct gdr_ctx *ctx)
{
	while (ctx->nat_end > 0)
		ctx->at_end[--ctx->nat_end](ctx);
}
