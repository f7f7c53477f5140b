/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CATALOG_H
#define GDRCHECK_CATALOG_H

/*
 * The gate catalog (gate/gates.def) as C: G_* gate indices, C_* reason
 * codes, their descriptor tables, and one remedy_NAME() per REMEDY row.
 */
#include <stdbool.h>
#include <stdint.h>

#include "access/vendor.h"
#include "core/result.h"

/* Row helpers for gates.def. */
#define S_PASS		(1u << ST_PASS)
#define S_WARN		(1u << ST_WARN)
#define S_BLOCKED	(1u << ST_BLOCKED)
#define S_SKIP		(1u << ST_SKIP)
#define S_ERROR		(1u << ST_ERROR)
#define STG(s)		(1u << WSTAGE_##s)
#define D(g)		(1ull << G_##g)
#define CATALOG_STRIP(...)	__VA_ARGS__

enum gate_index {
#define GATE(e, ...) G_##e,
#define CODE(...)
#define REMEDY(...)
#define REMEDY_F(...)
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
	G_COUNT
};

enum reason_code {
#define GATE(...)
#define CODE(n, ...) C_##n,
#define REMEDY(...)
#define REMEDY_F(...)
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
	C_COUNT
};

enum remedy_id {
#define GATE(...)
#define CODE(...)
#define REMEDY(n, ...) R_##n,
#define REMEDY_F(n, ...) R_##n,
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
	R_COUNT
};

/*
 * A set of gates, bit G_x for gate x (as a GATE row's dependencies, D()).
 * Sixty-four gates fit; past that this becomes an array.
 */
typedef uint64_t gate_mask;
#define GATE_BIT(i)	((gate_mask)1 << (i))
#define GATE_ALL	(G_COUNT == 64 ? ~(gate_mask)0 : GATE_BIT(G_COUNT) - 1)
_Static_assert(G_COUNT <= 64, "gate_mask holds 64 gates");

struct code_desc {
	const char *name;
	unsigned int statuses;	/* S_* */
	const char *meaning;
};

struct remedy_desc {
	const char *name;
	const char *text;	/* a printf format for REMEDY_F rows */
	bool format;
};

extern const struct gate_desc gate_descs[G_COUNT];
extern const struct code_desc code_descs[C_COUNT];
extern const struct remedy_desc remedy_descs[R_COUNT];

/* A DEP(OTHER, CODE) row: its gate needs OTHER; where not, SKIP with code. */
struct gate_dep {
	int gate;		/* G_* of the dependency */
	enum reason_code code;	/* C_* the skipped subject carries */
};

/* The DEP rows of gate g, in file order; *n of them (maybe 0). */
const struct gate_dep *gate_deps(int g, size_t *n);

/* The G_* whose GATE row a code follows; -1 for a shared code. */
int code_gate(enum reason_code c);
/* The C_* whose CODE row a remedy follows. */
enum reason_code remedy_code(enum remedy_id id);

/*
 * The runtime guard of emit(): a code emitted with a status its row does
 * not allow, or by another gate than its own, is reported on stderr.
 */
void catalog_check_emit(const struct gate_desc *g, enum gdr_status st,
			enum reason_code c);

/* The gate with this id, or NULL. */
const struct gate_desc *gate_find(const char *id);
/* The code of this name; a name not in the catalog is a bug: abort. */
enum reason_code code_by_name(const char *name);

/*
 * Attach remedy row id to res. Checks (and reports on stderr) a remedy
 * attached to a result of another gate than the remedy's code.
 */
void remedy_attach(struct result *res, enum remedy_id id, const char *fmt,
		   ...) __attribute__((format(printf, 3, 4)));

/* remedy_NAME(res[, values]) for every REMEDY and REMEDY_F row. */
#define GATE(...)
#define CODE(...)
#define REMEDY(n, text)							\
	static inline void remedy_##n(struct result *res)		\
	{								\
		remedy_attach(res, R_##n, "%s", text);			\
	}
#define REMEDY_F(n, params, fmt, ...)					\
	static inline void remedy_##n(struct result *res,		\
				      CATALOG_STRIP params)		\
	{								\
		remedy_attach(res, R_##n, fmt, __VA_ARGS__);		\
	}
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F

#endif
