// SPDX-License-Identifier: MIT
/*
 * The human report, summary first: the verdicts, a count line per layer,
 * the GPU x NIC table, the problems that matter, the fixes; every result
 * with its evidence under -v. The parts live in report/text_*.c (see
 * report/text_sections.h); this file alone calls them, orders them and writes the header, the -v
 * detail and the -q line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
#include "core/xalloc.h"
#include "report/text_sections.h"

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

int render_quiet(const struct report *r, FILE *out)
{
	fprintf(out, "gdrcheck: %s (--require %s%s)", verdict_name(r->overall),
		r->meta.require_auto ? "auto: " : "", r->meta.require);
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];

		fprintf(out, "; %s %s", path_name((enum gdr_path)p),
			verdict_name(pv->verdict));
		if (pv->decisive >= 0)
			fprintf(out, " at %s (%s)", r->res[pv->decisive].gate->id,
				r->subj[r->res[pv->decisive].subject].id);
	}
	/* A lost rail fails every policy: name its port on the one line. */
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		const char *nic = ev_find_str(res, "nic");
		const char *cause = ev_find_str(res, "cause");
		long long port = ev_find_int(res, "port", 0);

		if (!report_rail_failure(r, i))
			continue;
		fprintf(out, "; lost rail %s %s", r->subj[res->subject].id,
			nic ? nic : "?");
		if (port > 0)
			fprintf(out, "/%lld", port);
		fprintf(out, " (%s)", cause ? cause : "?");
	}
	if (r->peer.active)
		fprintf(out, "; wire %s", verdict_name(r->peer.verdict));
	fprintf(out, "%s\n", r->meta.interrupted ? "; INTERRUPTED" : "");
	return ferror(out) ? -1 : 0;
}

/*
 * The subject column of result @i: its subject, or for a folded group
 * (core/fold.c) the compressed list of every subject it stands for.
 */
static const char *detail_subject(const struct report *r, size_t i,
				  int *subj, char *buf, size_t size)
{
	size_t n;

	if (r->res[i].fold_n < 2)
		return r->subj[r->res[i].subject].id;
	n = result_fold_subjects(r, i, subj);
	text_subject_list(r, subj, n, buf, size);
	return buf;
}

/* Every result, layer by layer, with its evidence (-v); a folded group
 * once, where its first result stands. */
static void print_detail(const struct text_ctx *t)
{
	const struct report *r = t->r;
	enum gdr_layer last = L_COUNT;
	int gw = 8, sw = 4;
	int *subj = xcalloc(r->nres ? r->nres : 1, sizeof(*subj));
	char list[512];

	for (size_t i = 0; i < r->nres; i++) {
		int g = (int)strlen(r->res[i].gate->id);
		int s = (int)strlen(r->subj[r->res[i].subject].id);

		gw = g > gw ? g : gw;
		sw = s > sw ? s : sw;
	}
	fprintf(t->out, "\n%ssubjects%s\n", text_bold(t), text_reset(t));
	for (size_t i = 0; i < r->nsubj; i++) {
		if (r->subj[i].kind == SUBJ_HOST || r->subj[i].kind == SUBJ_PORT ||
		    r->subj[i].kind == SUBJ_PAIR)
			continue;
		fprintf(t->out, "  %-*s  %s\n", sw, r->subj[i].id,
			r->subj[i].label);
	}
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (res->fold_rep >= 0)
			continue;
		if (res->layer != last) {
			fprintf(t->out, "\n%s%s%s\n", text_bold(t),
				layer_name(res->layer), text_reset(t));
			last = res->layer;
		}
		fprintf(t->out, "  %s%-7s%s  %-*s  %-*s  %s\n",
			text_status_color(t, res->status),
			status_name(res->status), text_reset(t),
			gw, res->gate->id, sw,
			detail_subject(r, i, subj, list, sizeof(list)),
			res->reason);
		print_evidence(res, 13 + gw + sw, t->out);
	}
	free(subj);
}

/* GPUs and NICs, one line each kind: "GPU0-7: NVIDIA H100 80GB HBM3". */
static const char *or_unknown(const char *s)
{
	return s[0] ? s : "unknown";
}

/*
 * What support asks for first, in a few lines: the NVIDIA module, CUDA,
 * NVML, rdma-core and MLNX_OFED/DOCA, NCCL, and each kind of NIC with
 * its firmware (NICs of equal model, firmware, board and rate folded).
 */
static void print_versions(const struct text_ctx *t)
{
	const struct report *r = t->r;
	const struct report_versions *v = &r->meta.versions;
	char list[512];
	FILE *out = t->out;

	fputs("versions NVIDIA ", out);
	text_put_clean(v->nvidia[0] ? v->nvidia : "module not loaded", out);
	if (v->nvidia_flavour[0])
		fprintf(out, " (%s)", v->nvidia_flavour);
	fputs(", CUDA ", out);
	text_put_clean(or_unknown(v->cuda), out);
	fputs(", NVML ", out);
	text_put_clean(or_unknown(v->nvml), out);
	fputs("\n         rdma-core ", out);
	text_put_clean(or_unknown(v->rdma_core), out);
	if (v->libibverbs[0]) {
		fputs(" (", out);
		text_put_clean(v->libibverbs, out);
		fputc(')', out);
	}
	if (v->ofed[0]) {
		fputs(", MLNX_OFED/DOCA mlx5_core ", out);
		text_put_clean(v->ofed, out);
	}
	fputs(", NCCL ", out);
	text_put_clean(r->nccl.version[0] ? r->nccl.version : "unknown", out);
	if (!r->nccl.found)
		fputs(" (not found: the model's release)", out);
	fputc('\n', out);
	for (int i = 0; i < v->nnic_kinds; i++) {
		const struct nic_kind *k = &v->nic[i];

		text_subject_list(r, k->nics, (size_t)k->count, list,
				  sizeof(list));
		fputs(i ? "         " : "NIC fw   ", out);
		text_put_clean(list, out);
		fputs(": ", out);
		text_put_clean(k->model[0] ? k->model : "model unknown", out);
		fputs(" fw ", out);
		text_put_clean(or_unknown(k->fw), out);
		if (k->board[0]) {
			fputs(" (", out);
			text_put_clean(k->board, out);
			fputc(')', out);
		}
		if (k->rate[0]) {
			fputs(", ", out);
			text_put_clean(k->rate, out);
		}
		fputc('\n', out);
	}
	if (v->nic_kinds_more)
		fprintf(out, "         (%d NIC(s) of other kinds: --json lists "
			"the kinds above only)\n", v->nic_kinds_more);
}

static void print_inventory(const struct text_ctx *t)
{
	const struct report *r = t->r;
	int *v = xcalloc(r->nsubj ? r->nsubj : 1, sizeof(*v));
	char list[1024];
	size_t n = 0;

	for (int kind = SUBJ_GPU; kind <= SUBJ_NIC; kind++) {
		n = 0;
		for (size_t i = 0; i < r->nsubj; i++)
			if ((int)r->subj[i].kind == kind)
				v[n++] = (int)i;
		if (!n)
			continue;
		text_subject_list(r, v, n, list, sizeof(list));
		fprintf(t->out, "%-8s ", kind == SUBJ_GPU ? "GPUs" : "NICs");
		text_put_clean(list, t->out);
		fputc('\n', t->out);
	}
	free(v);
}

int render_text(const struct report *r, const struct render_opts *o,
		FILE *out)
{
	struct text_ctx t = { .r = r, .o = o, .out = out };
	unsigned int accepted = report_accepted_paths(r), ready = 0;

	t.width = o->width >= 40 ? o->width : 80;
	t.failing = report_failing(r);
	for (int p = 0; p < PATH_COUNT; p++)
		if ((accepted & (1u << p)) && (r->path[p].verdict == V_READY ||
		    r->path[p].verdict == V_READY_UNPROVEN))
			ready |= 1u << p;
	/* A READY path the policy accepts: the others are not needed. */
	t.required = ready ? ready : accepted;

	fprintf(out, "%sgdrcheck %s%s: GPUDirect RDMA readiness of ",
		text_bold(&t), r->meta.tool_version, text_reset(&t));
	text_put_clean(r->meta.hostname, out);
	fputs(" (kernel ", out);
	text_put_clean(r->meta.kernel, out);
	fputs(")\n", out);
	if (strcmp(r->meta.sysroot, "/")) {
		fputs("sysroot  ", out);
		text_put_clean(r->meta.sysroot, out);
		fputc('\n', out);
	}
	if (r->meta.capture[0]) {
		fputs("capture  ", out);
		text_put_clean(r->meta.capture, out);
		fputs(" (replay: gdrcheck --sysroot <extracted dir>)\n", out);
	}
	if (r->meta.interrupted)
		fputs("INTERRUPTED: stopped by a signal, this report is partial\n",
		      out);
	print_inventory(&t);
	print_versions(&t);
	if (!r->nsubj || (r->nsubj == 1 && r->subj[0].kind == SUBJ_HOST))
		fputs("(no GPU and no RDMA device found)\n", out);

	text_summary(&t);
	text_layers(&t);
	text_table(&t);
	text_problems(&t);
	text_fixes(&t);
	if (o->verbose)
		print_detail(&t);
	free(t.failing);
	return ferror(out) ? -1 : 0;
}
