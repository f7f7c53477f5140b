// SPDX-License-Identifier: MIT
/* The human report: layered, aligned, one line per result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
#include "core/xalloc.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"

static const char *status_color(enum gdr_status st)
{
	switch (st) {
	case ST_PASS: return "\033[32m";
	case ST_WARN: return "\033[33m";
	case ST_BLOCKED: return "\033[1;31m";
	case ST_SKIP: return "\033[2m";
	case ST_ERROR: return "\033[35m";
	default: return "";
	}
}

static const char *verdict_color(enum verdict v)
{
	return v == V_READY ? "\033[1;32m" : v == V_BLOCKED ? "\033[1;31m" :
	       "\033[1;35m";
}

/*
 * Strings the model did not make (the run's metadata, a path given on the
 * command line, a summary cut in mid-sequence) pass the model's rule here:
 * nothing reaches the terminal that could move its cursor.
 */
static void put_clean(const char *s, FILE *out)
{
	int n;

	while ((n = report_safe_seq(s))) {
		if (n < 0) {
			fprintf(out, "\\x%02X", *(const unsigned char *)s);
			s++;
		} else {
			fwrite(s, 1, (size_t)n, out);
			s += n;
		}
	}
}

static void print_evidence(const struct result *res, int indent, FILE *out)
{
	int col = indent;

	if (!res->nev)
		return;
	fprintf(out, "%*s", indent, "");
	for (size_t e = 0; e < res->nev; e++) {
		const struct evidence *ev = &res->ev[e];
		char val[320];
		int len;

		if (ev->type == EV_STR)	/* cut between whole sequences */
			report_clean(val, sizeof(val), ev->s);
		else if (ev->type == EV_INT)
			snprintf(val, sizeof(val), "%lld", ev->i);
		else if (ev->type == EV_REAL)
			snprintf(val, sizeof(val), "%.3f", ev->d);
		else
			snprintf(val, sizeof(val), "%s", ev->b ? "yes" : "no");
		len = (int)(strlen(ev->key) + strlen(val) + 2);
		if (col > indent && col + len > 100) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(out, "%s=%s  ", ev->key, val);
		col += len + 1;
	}
	fputc('\n', out);
}

/*
 * The GPU x RDMA device matrix, like `nvidia-smi topo -m` but with what
 * NCCL decides and the ACS verdict per pair, read back from the results.
 * Indexed before the first byte is written, in one pass over the subjects
 * and one over the results: a 64 x 64 node has 4096 pairs and ~30000
 * results.
 */
enum { CELL_PATH, CELL_NCCL, CELL_ACS, CELL_GATES };
static const char *const cell_gates[CELL_GATES] = {
	[CELL_PATH] = "topo.path", [CELL_NCCL] = "topo.nccl",
	[CELL_ACS] = "platform.acs",
};

struct matrix {
	struct pair_grid grid;
	const struct result *(*cell)[CELL_GATES];	/* by pair subject */
};

static void matrix_build(const struct report *r, struct matrix *m)
{
	pair_grid_build(r, &m->grid);
	m->cell = xcalloc(r->nsubj, sizeof(*m->cell));
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (r->subj[res->subject].kind != SUBJ_PAIR)
			continue;
		for (int c = 0; c < CELL_GATES; c++)
			if (!m->cell[res->subject][c] &&
			    !strcmp(res->gate->id, cell_gates[c]))
				m->cell[res->subject][c] = res;
	}
}

static void matrix_free(struct matrix *m)
{
	pair_grid_free(&m->grid);
	free(m->cell);
}

static void print_cell(const struct result *const *cell, int width, FILE *out)
{
	const struct result *nccl = cell[CELL_NCCL], *acs = cell[CELL_ACS];
	const char *cls = ev_find_str(cell[CELL_PATH], "nvidia_smi");
	const char *gdr, *acs_s;
	char full[256], text[64];

	/* issue 14: pairs NCCL does not use are not "gdr". */
	gdr = !nccl || nccl->status == ST_SKIP ? "?" :
	      !strcmp(nccl->code, "NCCL_NOT_A_RAIL") ? "far" :
	      !strcmp(nccl->code, "NCCL_NET_NOT_IB") ? "off" :
	      nccl->status == ST_PASS ? "gdr" :
	      !strcmp(nccl->code, "NCCL_GDR_WRITE_ONLY") ? "recv" : "host";
	acs_s = !acs || acs->status == ST_SKIP || acs->status == ST_ERROR ?
		"acs?" : acs->status == ST_PASS ? "ok" :
		acs->status == ST_WARN ? "redir" : "REDIR";
	snprintf(full, sizeof(full), "%s %s %s", cls ? cls : "-", gdr, acs_s);
	/* A cut never splits a UTF-8 sequence or an escape. */
	report_clean(text, sizeof(text), full);
	fprintf(out, "%-*s", width, text);
}

static void print_matrix(const struct report *r, const struct matrix *m,
			 FILE *out)
{
	const struct pair_grid *g = &m->grid;
	const int cw = 18;

	if (!g->nnic)
		return;
	fputs("\nGPU x NIC (distance, NCCL GDR, ACS)\n          ", out);
	/* No padding after the last column: no trailing blanks. */
	for (size_t j = 0; j < g->nnic; j++)
		fprintf(out, "%-*s", j + 1 < g->nnic ? cw : 0,
			r->subj[g->nics[j]].id);
	fputc('\n', out);
	for (size_t i = 0; i < g->ngpu; i++) {
		bool any = false;

		for (size_t j = 0; j < g->nnic; j++) {
			int pair = g->pair[i * g->nnic + j];

			if (pair < 0)
				continue;
			if (!any)
				fprintf(out, "  %-8s", r->subj[g->gpus[i]].id);
			any = true;
			print_cell(m->cell[pair], j + 1 < g->nnic ? cw : 0, out);
		}
		if (any)
			fputc('\n', out);
	}
	fputs("  gdr: NCCL uses GPUDirect RDMA both ways; recv: receives only; "
	      "host: stages through\n  host memory; far: not a rail NCCL uses; "
	      "off: NCCL does not use the device.\n  ok: no ACS redirect; "
	      "redir/REDIR: redirect (REDIR: the IOMMU\n  translates, BLOCKED); "
	      "acs?: not readable.\n", out);
}

int render_quiet(const struct report *r, FILE *out)
{
	fprintf(out, "gdrcheck: %s (--require %s)", verdict_name(r->overall),
		r->meta.require);
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];

		fprintf(out, "; %s %s", path_name((enum gdr_path)p),
			verdict_name(pv->verdict));
		if (pv->decisive >= 0)
			fprintf(out, " at %s (%s)", r->res[pv->decisive].gate->id,
				r->subj[r->res[pv->decisive].subject].id);
	}
	fprintf(out, "%s\n", r->meta.interrupted ? "; INTERRUPTED" : "");
	return ferror(out) ? -1 : 0;
}

int render_text(const struct report *r, const struct render_opts *o,
		FILE *out)
{
	int gw = 8, sw = 4;
	enum gdr_layer last = L_COUNT;
	struct remedy *rem;
	struct matrix m;
	size_t nrem;
	int shown = 0;

	/* Gathered before the first byte: nothing allocates mid-report. */
	nrem = report_remedies(r, &rem);
	matrix_build(r, &m);
	for (size_t i = 0; i < r->nres; i++) {
		int g = (int)strlen(r->res[i].gate->id);
		int s = (int)strlen(r->subj[r->res[i].subject].id);

		gw = g > gw ? g : gw;
		sw = s > sw ? s : sw;
	}
	fprintf(out, "%sgdrcheck %s%s: GPUDirect RDMA readiness of ",
		o->color ? C_BOLD : "", r->meta.tool_version,
		o->color ? C_RESET : "");
	put_clean(r->meta.hostname, out);
	fputs(" (kernel ", out);
	put_clean(r->meta.kernel, out);
	fputs(")\n", out);
	if (strcmp(r->meta.sysroot, "/")) {
		fputs("sysroot ", out);
		put_clean(r->meta.sysroot, out);
		fputc('\n', out);
	}
	if (r->meta.capture[0]) {
		fputs("capture ", out);
		put_clean(r->meta.capture, out);
		fputs(" (replay: gdrcheck --sysroot <extracted dir>)\n", out);
	}
	if (r->meta.interrupted)
		fputs("INTERRUPTED: stopped by a signal, this report is partial\n",
		      out);

	fputs("\nsubjects\n", out);
	for (size_t i = 0; i < r->nsubj; i++) {
		if (r->subj[i].kind == SUBJ_HOST || r->subj[i].kind == SUBJ_PORT)
			continue;
		fprintf(out, "  %-*s  %s\n", sw, r->subj[i].id, r->subj[i].label);
		shown++;
	}
	if (!shown)
		fputs("  (no GPU and no RDMA device found)\n", out);

	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (res->layer != last) {
			fprintf(out, "\n%s%s%s\n", o->color ? C_BOLD : "",
				layer_name(res->layer), o->color ? C_RESET : "");
			last = res->layer;
		}
		fprintf(out, "  %s%-7s%s  %-*s  %-*s  %s\n",
			o->color ? status_color(res->status) : "",
			status_name(res->status), o->color ? C_RESET : "",
			gw, res->gate->id, sw, r->subj[res->subject].id, res->reason);
		if (o->verbose)
			print_evidence(res, 13 + gw + sw, out);
	}

	print_matrix(r, &m, out);
	fprintf(out, "\n%sverdict%s\n", o->color ? C_BOLD : "",
		o->color ? C_RESET : "");
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const char *summary = pv->summary;
		const char *verdict = verdict_name(pv->verdict);

		/* The summary starts with the verdict word: colour just that. */
		if (!strncmp(summary, verdict, strlen(verdict)))
			summary += strlen(verdict);
		fprintf(out, "  %-8s %s%s%s", path_name((enum gdr_path)p),
			o->color ? verdict_color(pv->verdict) : "", verdict,
			o->color ? C_RESET : "");
		put_clean(summary, out);
		fputc('\n', out);
	}
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];

		if (pv->nready < 2)
			continue;
		fprintf(out, "  %-8s ready pairs:", path_name((enum gdr_path)p));
		for (size_t i = 0; i < pv->nready; i++)
			fprintf(out, "%s %s+%s", i ? "," : "",
				r->subj[pv->ready[i][0]].id,
				r->subj[pv->ready[i][1]].id);
		fputc('\n', out);
	}
	for (int i = 0; i < r->meta.policy.nviolations; i++) {
		fprintf(out, "  %-8s ", "policy");
		put_clean(r->meta.policy.violations[i], out);
		fputc('\n', out);
	}
	fprintf(out, "  %-8s %s%s%s (--require %s, exit %d)\n", "overall",
		o->color ? verdict_color(r->overall) : "",
		verdict_name(r->overall), o->color ? C_RESET : "",
		r->meta.require, r->exit_code);

	if (nrem) {
		fprintf(out, "\n%sto fix%s\n", o->color ? C_BOLD : "",
			o->color ? C_RESET : "");
		for (size_t i = 0; i < nrem; i++) {
			fprintf(out, "  %zu. [%s] %s (", i + 1,
				status_name(rem[i].status), rem[i].gate);
			for (size_t s = 0; s < rem[i].nsubjects; s++)
				fprintf(out, "%s%s", s ? ", " : "",
					r->subj[rem[i].subjects[s]].id);
			fprintf(out, "): %s\n", rem[i].text);
		}
	}
	report_remedies_free(rem, nrem);
	matrix_free(&m);
	return ferror(out) ? -1 : 0;
}
