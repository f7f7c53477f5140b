// SPDX-License-Identifier: MIT
/* The catalog's tables, generated from gate/gates.def. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/catalog.h"

_Static_assert(G_COUNT <= 64, "gate_desc.deps holds 64 gates");

const struct gate_desc gate_descs[G_COUNT] = {
#define GATE(e, i, l, sc, p, pr, st, dp, t, fn)			\
	[G_##e] = { .index = G_##e, .id = i, .layer = l, .scope = sc,	\
		    .paths = p, .proof = pr, .stages = st, .deps = dp,	\
		    .title = t },
#define CODE(...)
#define REMEDY(...)
#define REMEDY_F(...)
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
};

/*
 * Each row's owner is the row above it of the kind that owns it: a code
 * belongs to the last GATE row (none before the first: shared), a remedy
 * to the last CODE row. The row enum counts them in file order.
 */
enum catalog_row {
#define GATE(e, ...) ROW_G_##e,
#define CODE(n, ...) ROW_C_##n,
#define REMEDY(n, ...) ROW_R_##n,
#define REMEDY_F(n, ...) ROW_R_##n,
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
	ROW_COUNT
};

/* Per row: 'g', 'c' or 'r' and the index in its own enum. */
static const struct { char kind; int index; } rows[ROW_COUNT] = {
#define GATE(e, ...) { 'g', G_##e },
#define CODE(n, ...) { 'c', C_##n },
#define REMEDY(n, ...) { 'r', R_##n },
#define REMEDY_F(n, ...) { 'r', R_##n },
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
};

const struct code_desc code_descs[C_COUNT] = {
#define GATE(...)
#define CODE(n, st, m) [C_##n] = { .name = #n, .statuses = st, .meaning = m },
#define REMEDY(...)
#define REMEDY_F(...)
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
};

const struct remedy_desc remedy_descs[R_COUNT] = {
#define GATE(...)
#define CODE(...)
#define REMEDY(n, t) [R_##n] = { .name = #n, .text = t },
#define REMEDY_F(n, params, fmt, ...) \
	[R_##n] = { .name = #n, .text = fmt, .format = true },
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
};

/* GATE and DEP rows in file order: a DEP belongs to the GATE above it. */
static const struct { int owner, gate, code; } dep_rows[] = {
#define GATE(e, ...) { G_##e, -1, -1 },
#define CODE(...)
#define REMEDY(...)
#define REMEDY_F(...)
#define DEP(g, c) { -1, G_##g, C_##c },
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
#undef DEP
};
#define DEP_ROWS (sizeof(dep_rows) / sizeof(dep_rows[0]))

const struct gate_dep *gate_deps(int g, size_t *n)
{
	static struct gate_dep all[DEP_ROWS];
	static size_t first[G_COUNT], count[G_COUNT];
	static bool built;

	if (!built) {
		size_t k = 0;
		int owner = -1;

		for (size_t i = 0; i < DEP_ROWS; i++) {
			if (dep_rows[i].owner >= 0) {
				owner = dep_rows[i].owner;
				first[owner] = k;
				continue;
			}
			all[k].gate = dep_rows[i].gate;
			all[k].code = (enum reason_code)dep_rows[i].code;
			count[owner]++;
			k++;
		}
		built = true;
	}
	*n = g >= 0 && g < G_COUNT ? count[g] : 0;
	return *n ? &all[first[g]] : NULL;
}

/* Owners, from the row order, once. */
static int code_gate_of[C_COUNT];
static int remedy_code_of[R_COUNT];

static void owners_build(void)
{
	static bool built;
	int gate = -1, code = -1;

	if (built)
		return;
	for (int i = 0; i < ROW_COUNT; i++) {
		switch (rows[i].kind) {
		case 'g':
			gate = rows[i].index;
			break;
		case 'c':
			code = rows[i].index;
			code_gate_of[code] = gate;
			break;
		default:
			remedy_code_of[rows[i].index] = code;
		}
	}
	built = true;
}

int code_gate(enum reason_code c)
{
	owners_build();
	return code_gate_of[c];
}

enum reason_code remedy_code(enum remedy_id id)
{
	owners_build();
	return (enum reason_code)remedy_code_of[id];
}

const struct gate_desc *gate_find(const char *id)
{
	for (int i = 0; i < G_COUNT; i++)
		if (!strcmp(gate_descs[i].id, id))
			return &gate_descs[i];
	return NULL;
}

enum reason_code code_by_name(const char *name)
{
	for (int i = 0; i < C_COUNT; i++)
		if (!strcmp(code_descs[i].name, name))
			return (enum reason_code)i;
	fprintf(stderr, "gdrcheck: internal error: reason code %s is not in "
		"the catalog\n", name);
	abort();
}

void catalog_check_emit(const struct gate_desc *g, enum gdr_status st,
			enum reason_code c)
{
	int owner = code_gate(c);

	if (!(code_descs[c].statuses & (1u << st)))
		fprintf(stderr, "gdrcheck: internal error: %s: code %s with "
			"status %s, not in the catalog\n", g->id,
			code_descs[c].name, status_name(st));
	if (owner >= 0 && owner != g->index)
		fprintf(stderr, "gdrcheck: internal error: %s emits %s, a "
			"code of %s\n", g->id, code_descs[c].name,
			gate_descs[owner].id);
}

void remedy_attach(struct result *res, enum remedy_id id, const char *fmt,
		   ...)
{
	enum reason_code c = remedy_code(id);
	int owner = code_gate(c);
	va_list ap;

	if (owner >= 0 && res->gate && owner != res->gate->index)
		fprintf(stderr, "gdrcheck: internal error: remedy %s (of %s) "
			"on a result of %s\n", remedy_descs[id].name,
			gate_descs[owner].id, res->gate->id);
	va_start(ap, fmt);
	result_vremedy(res, fmt, ap);
	va_end(ap);
}
