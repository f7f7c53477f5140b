/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_GATES_H
#define GDRCHECK_GATES_H

#include <stdio.h>

#include "engine/context.h"

enum gate_scope {
	SCOPE_HOST = 0,
	SCOPE_GPU,
	SCOPE_NIC,
	SCOPE_PORT,
	SCOPE_PAIR,
};

struct gate {
	const char *id;
	enum gdr_layer layer;
	enum gate_scope scope;
	unsigned int paths;	/* which paths a BLOCKED here closes */
	const char *title;
	void (*run)(struct gdr_ctx *ctx, const struct target *t);
};

extern const struct gate gate_table[];
extern const size_t gate_count;

/* Run every gate in order over its subjects. */
void gates_run(struct gdr_ctx *ctx);
void gates_list(FILE *out);

/* Fold results into the per-path verdicts and the overall verdict. */
void verdict_fold(struct report *r, enum require_policy req);

#endif
