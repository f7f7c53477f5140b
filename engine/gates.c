// SPDX-License-Identifier: MIT
/* Runs the gate chain of gate/gates.def: each gate over its subjects. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
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
	r->duration_ms = now - ctx->mark_ms;
	r->proof = g->proof;
	ctx->mark_ms = now;
	return r;
}

static bool in_list(const char *list, const struct gate_desc *g)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if ((strlen(g->id) == n && !strncmp(g->id, p, n)) ||
		    (strlen(layer_name(g->layer)) == n &&
		     !strncmp(layer_name(g->layer), p, n)))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

bool gate_selected(const struct options *o, const struct gate_desc *g)
{
	if (o->only && !in_list(o->only, g))
		return false;
	return !(o->skip && in_list(o->skip, g));
}

const char *gates_check_list(const char *list)
{
	static char bad[64];
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		bool known = false;

		for (int i = 0; i < G_COUNT && !known; i++)
			known = (strlen(gate_descs[i].id) == n &&
				 !strncmp(gate_descs[i].id, p, n)) ||
				(strlen(layer_name(gate_descs[i].layer)) == n &&
				 !strncmp(layer_name(gate_descs[i].layer), p, n));
		if (!known) {
			snprintf(bad, sizeof(bad), "%.*s", (int)(n < 60 ? n : 60), p);
			return bad;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

bool layers_selected(const struct options *o, unsigned int mask)
{
	for (int i = 0; i < G_COUNT; i++)
		if ((mask & (1u << gate_descs[i].layer)) &&
		    gate_selected(o, &gate_descs[i]))
			return true;
	return false;
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

void gates_run(struct gdr_ctx *ctx)
{
	for (int i = 0; i < G_COUNT; i++) {
		const struct gate_desc *g = &gate_descs[i];
		struct target t = { -1, -1, -1, -1 };
		bool any = false;

		ctx->gate = g;
		ctx->mark_ms = now_ms();
		if (!gate_selected(ctx->opt, g)) {
			struct result *r = emit(ctx, ctx->host, ST_SKIP, C_EXCLUDED,
						"excluded by --only/--skip");

			/* Leaving out the transfer is the user's call. */
			r->waived = g->layer == L_DATAPATH;
			continue;
		}
		switch (g->scope) {
		case SUBJ_HOST:
			gate_run[i](ctx, &t);
			any = true;
			break;
		case SUBJ_GPU:
			for (t.gpu = 0; t.gpu < (int)ctx->inv.ngpu; t.gpu++) {
				gate_run[i](ctx, &t);
				any = true;
			}
			break;
		case SUBJ_NIC:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
				gate_run[i](ctx, &t);
				any = true;
			}
			break;
		case SUBJ_PORT:
			for (t.nic = 0; t.nic < (int)ctx->inv.nnic; t.nic++) {
				/* Ports that cannot be listed: ask about the NIC. */
				if (ctx->inv.nic[t.nic].ports_err &&
				    ctx->inv.nic[t.nic].ports_err != ENOENT) {
					t.port = -1;
					gate_run[i](ctx, &t);
					any = true;
				}
				for (t.port = 0;
				     t.port < (int)ctx->inv.nic[t.nic].nports;
				     t.port++) {
					gate_run[i](ctx, &t);
					any = true;
				}
			}
			break;
		case SUBJ_PAIR:
			for (t.pair = 0; t.pair < (int)ctx->inv.npair; t.pair++) {
				t.gpu = ctx->inv.pair[t.pair].gpu;
				t.nic = ctx->inv.pair[t.pair].nic;
				gate_run[i](ctx, &t);
				any = true;
			}
			break;
		}
		/* Every gate shows up in the report, if only to say why not. */
		if (!any)
			skip_no_subject(ctx, g);
	}
	ctx->gate = NULL;
	nccl_state_free(ctx);	/* issue 14: the NCCL model's working state */
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
			fprintf(out, "%s%s\n", i ? "\n" : "", layer_name(g->layer));
			last = g->layer;
		}
		paths_string(g->paths, paths, sizeof(paths));
		fprintf(out, "  %-22s %-5s %-15s %s\n", g->id,
			subject_kind_name(g->scope), paths, g->title);
	}
}
