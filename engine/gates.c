// SPDX-License-Identifier: MIT
/* Runs the gate chain of gate/gates.def: each gate over its subjects. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/xalloc.h"
#include "access/symtab.h"
#include "engine/gates.h"
#include "probes/probes.h"

const gate_fn gate_run[G_COUNT] = {
#define GATE(e, i, l, sc, p, pr, st, dp, t, fn) [G_##e] = fn,
#define CODE(...)
#define REMEDY(...)
#define REMEDY_F(...)
#include "gate/gates.def"
#undef GATE
#undef CODE
#undef REMEDY
#undef REMEDY_F
};

struct result *emit(struct gdr_ctx *ctx, int subject, enum gdr_status st,
		    enum reason_code code, const char *fmt, ...)
{
	const struct gate_desc *g = ctx->gate;
	struct result *r;
	double now = now_ms();
	va_list ap;

	catalog_check_emit(g, st, code);
	va_start(ap, fmt);
	r = report_vadd(ctx->rep, g, g->layer, g->paths, subject, st,
			code_descs[code].name, fmt, ap);
	va_end(ap);
	r->code_index = (int)code;
	r->duration_ms = now - ctx->mark_ms;
	r->proof = g->proof;
	ctx->mark_ms = now;
	return r;
}

/* Is word (n bytes) gate g's id or its layer's name? */
static bool names_gate(const char *word, size_t n, const struct gate_desc *g)
{
	const char *layer = layer_name(g->layer);

	return (strlen(g->id) == n && !strncmp(g->id, word, n)) ||
	       (strlen(layer) == n && !strncmp(layer, word, n));
}

int gates_parse_list(const char *list, gate_mask *mask, char *bad,
		     size_t badlen)
{
	const char *p = list;

	*mask = 0;
	if (!p || !*p) {
		snprintf(bad, badlen, "%s", "");
		return -1;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		gate_mask got = 0;

		for (int i = 0; i < G_COUNT; i++)
			if (names_gate(p, n, &gate_descs[i]))
				got |= GATE_BIT(i);
		if (!got) {
			snprintf(bad, badlen, "%.*s", (int)(n < 60 ? n : 60), p);
			return -1;
		}
		*mask |= got;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

bool gate_selected(const struct options *o, const struct gate_desc *g)
{
	return (o->gates & GATE_BIT(g->index)) != 0;
}

const char *gates_list_hint(const char *bad)
{
	/* The layers' long names until schema 2.0: not aliases, a hint. */
	static const char *const old[L_COUNT] = {
		[L_MECHANISM] = "mechanism", [L_TOPOLOGY] = "topology",
		[L_REGISTRATION] = "registration", [L_DATAPATH] = "datapath",
	};
	static char hint[64];

	for (int l = 0; l < L_COUNT; l++)
		if (old[l] && !strcmp(bad, old[l])) {
			snprintf(hint, sizeof(hint), " (did you mean %s?)",
				 layer_name((enum gdr_layer)l));
			return hint;
		}
	return " (see --list-gates)";
}

unsigned int gates_stages(const struct options *o)
{
	unsigned int st = 0;

	for (int i = 0; i < G_COUNT; i++)
		if (gate_selected(o, &gate_descs[i]))
			st |= gate_descs[i].stages;
	return st;
}

void gates_vendor_skips(const struct options *o, struct vendor_options *vo)
{
	unsigned int st = gates_stages(o);

	vo->skip_cuda |= !(st & STG(CUDA));
	vo->skip_export |= !(st & STG(CUDA_EXPORT));
	vo->skip_verbs |= !(st & STG(VERBS));
	vo->skip_registration |= !(st & STG(REGISTRATION));
	vo->skip_nvml |= !(st & STG(NVML));
}

static void skip_no_subject(struct gdr_ctx *ctx, const struct gate_desc *g)
{
	struct result *r = emit(ctx, ctx->host, ST_SKIP, C_NO_SUBJECT,
		"no %s to check", g->scope == SUBJ_GPU ? "GPU" :
		g->scope == SUBJ_NIC ? "RDMA device" :
		g->scope == SUBJ_PAIR ? "GPU x RDMA device pair" : "RDMA port");

	/* Nothing to prove: the missing subject is decided by other gates. */
	r->waived = true;
}

/*
 * What the run knows of the gates already run: where each one's results
 * lie in the report, and (built on first use, for DEP rows) per subject
 * the result that decides whether a dependent gate may run there.
 */
struct dep_state {
	size_t first[G_COUNT], end[G_COUNT];
	int *by_subject[G_COUNT];	/* result index, -1 none */
};

/* The subject a probe is asked about for target t. */
static int target_subject(const struct gdr_ctx *ctx,
			  const struct gate_desc *g, const struct target *t)
{
	const struct inv_nic *nic;

	switch (g->scope) {
	case SUBJ_GPU:
		return ctx->inv.gpu[t->gpu].subject;
	case SUBJ_NIC:
		return ctx->inv.nic[t->nic].subject;
	case SUBJ_PORT:
		nic = &ctx->inv.nic[t->nic];
		return t->port < 0 ? nic->subject : nic->ports[t->port].subject;
	case SUBJ_PAIR:
		return ctx->inv.pair[t->pair].subject;
	default:
		return ctx->host;
	}
}

/*
 * The subject of kind scope that subject subj depends on: itself, its
 * pair's GPU or NIC, its port's NIC, or the host; -1 when none relates
 * (tests/unit/test_catalog.c keeps DEP rows to relatable kinds).
 */
static int related_subject(const struct gdr_ctx *ctx, int subj,
			   enum subject_kind scope)
{
	const struct subject *s = &ctx->rep->subj[subj];

	if (scope == SUBJ_HOST)
		return ctx->host;
	if (s->kind == scope)
		return subj;
	if (s->kind == SUBJ_PAIR && scope == SUBJ_GPU)
		return s->pair_gpu;
	if (s->kind == SUBJ_PAIR && scope == SUBJ_NIC)
		return s->pair_nic;
	if (s->kind == SUBJ_PORT && scope == SUBJ_NIC)
		return s->parent;
	return -1;
}

static bool status_usable(enum gdr_status st)
{
	return st == ST_PASS || st == ST_WARN;
}

/* Per subject, gate d's first result that is not PASS/WARN, else its first. */
static const int *dep_results(struct gdr_ctx *ctx, struct dep_state *ds,
			      int d)
{
	const struct report *rep = ctx->rep;
	int *m = ds->by_subject[d];

	if (m)
		return m;
	m = xcalloc(rep->nsubj ? rep->nsubj : 1, sizeof(*m));
	for (size_t s = 0; s < rep->nsubj; s++)
		m[s] = -1;
	for (size_t i = ds->first[d]; i < ds->end[d]; i++) {
		int s = rep->res[i].subject;

		if (s < 0 || (size_t)s >= rep->nsubj)
			continue;
		if (m[s] < 0 || (status_usable(rep->res[m[s]].status) &&
				  !status_usable(rep->res[i].status)))
			m[s] = (int)i;
	}
	ds->by_subject[d] = m;
	return m;
}

/*
 * The catalog's DEP rows of gate g for subject subj: true (and a SKIP
 * emitted with the row's code) when a dependency did not PASS or WARN
 * there, or did not run.
 */
static bool dep_unmet(struct gdr_ctx *ctx, struct dep_state *ds,
		      const struct gate_desc *g, int subj)
{
	size_t n;
	const struct gate_dep *dp = gate_deps(g->index, &n);

	for (size_t k = 0; k < n; k++) {
		const struct gate_desc *d = &gate_descs[dp[k].gate];
		int rs = related_subject(ctx, subj, d->scope);
		const struct result *r;
		int ri;

		if (!gate_selected(ctx->opt, d)) {
			emit(ctx, subj, ST_SKIP, dp[k].code, "not checked: %s "
			     "was excluded by --only/--skip", d->id);
			return true;
		}
		ri = rs < 0 ? -1 : dep_results(ctx, ds, d->index)[rs];
		if (ri < 0) {
			emit(ctx, subj, ST_SKIP, dp[k].code, "not checked: %s "
			     "has no result%s%s", d->id,
			     rs >= 0 && rs != ctx->host ? " for " : "",
			     rs >= 0 && rs != ctx->host ?
			     ctx->rep->subj[rs].id : "");
			return true;
		}
		r = &ctx->rep->res[ri];
		if (status_usable(r->status))
			continue;
		emit(ctx, subj, ST_SKIP, dp[k].code, "not checked: %s is %s%s%s "
		     "(%s)", d->id, status_name(r->status),
		     rs != ctx->host ? " for " : "",
		     rs != ctx->host ? ctx->rep->subj[rs].id : "", r->code);
		return true;
	}
	return false;
}

/* Ask gate g's probe about target t, unless a dependency rules it out. */
static void run_probe(struct gdr_ctx *ctx, struct dep_state *ds,
		      const struct gate_desc *g, const struct target *t)
{
	if (dep_unmet(ctx, ds, g, target_subject(ctx, g, t)))
		return;
	gate_run[g->index](ctx, t);
}

/* Gate i of the chain, on each subject of its scope. */
static void run_gate(struct gdr_ctx *ctx, struct dep_state *ds, int i)
{
	const struct gate_desc *g = &gate_descs[i];
	struct target t = { -1, -1, -1, -1 };
	bool any = false;

	ds->first[i] = ctx->rep->nres;

	/* data.nccl weighs the inferences: after the transfers. */
	if (i == G_DATA_NCCL)
		proof_outranks_inference(ctx->rep);
	ctx->gate = g;
	ctx->mark_ms = now_ms();
	if (!gate_selected(ctx->opt, g)) {
		struct result *r = emit(ctx, ctx->host, ST_SKIP, C_EXCLUDED,
					"excluded by --only/--skip");

		/*
		 * Leaving out the transfer is the user's call; data.nccl
		 * is the nccl path's only proof (registration and
		 * transfer): left out, that path is undecided, never
		 * READY on nothing.
		 */
		r->waived = g->layer == L_DATAPATH &&
			    !(g->paths & P_NCCL);
		ds->end[i] = ctx->rep->nres;
		return;
	}
	switch (g->scope) {
	case SUBJ_HOST:
		run_probe(ctx, ds, g, &t);
		any = true;
		break;
	case SUBJ_GPU:
		for (t.gpu = 0; t.gpu < (int)ctx->inv.ngpu; t.gpu++) {
			run_probe(ctx, ds, g, &t);
			any = true;
		}
		break;
	case SUBJ_NIC:
		for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
			run_probe(ctx, ds, g, &t);
			any = true;
		}
		break;
	case SUBJ_PORT:
		for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
			/* Ports that cannot be listed: ask about the NIC. */
			if (ctx->inv.nic[t.nic].ports_err &&
			    ctx->inv.nic[t.nic].ports_err != ENOENT) {
				t.port = -1;
				run_probe(ctx, ds, g, &t);
				any = true;
			}
			for (t.port = 0;
			     t.port < (int)ctx->inv.nic[t.nic].nports;
			     t.port++) {
				run_probe(ctx, ds, g, &t);
				any = true;
			}
		}
		break;
	case SUBJ_PAIR:
		for (t.pair = 0; t.pair < (int)ctx->inv.npair; t.pair++) {
			t.gpu = ctx->inv.pair[t.pair].gpu;
			t.nic = ctx->inv.pair[t.pair].nic;
			run_probe(ctx, ds, g, &t);
			any = true;
		}
		break;
	}
	/* Every gate shows up in the report, if only to say why not. */
	if (!any)
		skip_no_subject(ctx, g);
	ds->end[i] = ctx->rep->nres;
}

/* The gates of one side of the L_PEER line: the node's own chain, or
 * two-node mode's peer layer (run later, after the node's verdict). */
static void run_gates(struct gdr_ctx *ctx, bool peer)
{
	struct dep_state ds;

	memset(&ds, 0, sizeof(ds));
	for (int i = 0; i < G_COUNT; i++)
		if ((gate_descs[i].layer == L_PEER) == peer)
			run_gate(ctx, &ds, i);
	for (int i = 0; i < G_COUNT; i++)
		free(ds.by_subject[i]);
	ctx->gate = NULL;
}

void gates_run(struct gdr_ctx *ctx)
{
	run_gates(ctx, false);
	ctx_end(ctx);	/* state probes kept across gates (the NCCL model) */
}

void gates_run_peer(struct gdr_ctx *ctx)
{
	run_gates(ctx, true);
}

static void paths_string(unsigned int paths, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", paths & P_DMABUF ? "dmabuf" : "",
		 (paths & P_BOTH) == P_BOTH ? "," : "",
		 paths & P_PEERMEM ? "peermem" : "",
		 paths & P_NCCL ? "nccl" : paths ? "" : "-");
}

void gates_list(FILE *out)
{
	enum gdr_layer last = L_COUNT;

	for (int i = 0; i < G_COUNT; i++) {
		const struct gate_desc *g = &gate_descs[i];
		char paths[32];

		if (g->layer != last) {
			fprintf(out, "%s%s%s\n", i ? "\n" : "",
				layer_name(g->layer), g->layer == L_PEER ?
				" (two-node mode only: --listen / --peer)" : "");
			last = g->layer;
		}
		paths_string(g->paths, paths, sizeof(paths));
		fprintf(out, "  %-22s %-5s %-15s %s\n", g->id,
			subject_kind_name(g->scope), paths, g->title);
	}
}
