// SPDX-License-Identifier: MIT
/*
 * The top of the text report: the node's verdict, each path's, what NCCL
 * would do, and one count line per layer instead of a PASS line per item.
 */
#include <string.h>

#include "report/text.h"

void text_summary(const struct text_ctx *t)
{
	const struct report *r = t->r;
	int gdr = 0, recv = 0, host = 0, unknown = 0;
	char list[1024];

	fprintf(t->out, "\n%sverdict%s\n", text_bold(t), text_reset(t));
	fprintf(t->out, "  %-8s %s%s%s (--require %s, exit %d)\n", "overall",
		text_verdict_color(t, r->overall), verdict_name(r->overall),
		text_reset(t), r->meta.require, r->exit_code);
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const char *summary = pv->summary;
		const char *verdict = verdict_name(pv->verdict);

		/* The summary starts with the verdict word: colour just that. */
		if (!strncmp(summary, verdict, strlen(verdict)))
			summary += strlen(verdict);
		fprintf(t->out, "  %-8s %s%s%s", path_name((enum gdr_path)p),
			text_verdict_color(t, pv->verdict), verdict,
			text_reset(t));
		text_put_clean(summary, t->out);
		fputc('\n', t->out);
		if (pv->nready < 2)
			continue;
		text_pair_list(r, (const int (*)[2])pv->ready, pv->nready, " + ",
			       list, sizeof(list));
		fprintf(t->out, "  %-8s ready: %s\n", "", list);
	}
	/* NCCL's own decision per pair (topo.nccl), counted. */
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		/* Per pair only: "no pair to check" on the host is no pair. */
		if (strcmp(res->gate->id, "topo.nccl") ||
		    r->subj[res->subject].kind != SUBJ_PAIR)
			continue;
		if (res->status == ST_PASS)
			gdr++;
		else if (res->status == ST_SKIP || res->status == ST_ERROR)
			unknown++;
		else if (!strcmp(res->code, "NCCL_GDR_WRITE_ONLY"))
			recv++;
		else
			host++;
	}
	if (gdr + recv + host + unknown) {
		fprintf(t->out, "  %-8s GPUDirect RDMA on %d of %d GPU-NIC pair(s)",
			"nccl", gdr, gdr + recv + host + unknown);
		if (recv)
			fprintf(t->out, ", receive-only on %d", recv);
		if (host)
			fprintf(t->out, ", host staging on %d", host);
		if (unknown)
			fprintf(t->out, ", undecided on %d", unknown);
		fputc('\n', t->out);
	}
	for (int i = 0; i < r->meta.policy.nviolations; i++) {
		fprintf(t->out, "  %-8s ", "policy");
		text_put_clean(r->meta.policy.violations[i], t->out);
		fputc('\n', t->out);
	}
}

/* "nic: 12 devices, 12 ports ACTIVE" and the like, then the counts. */
static void layer_subjects(const struct text_ctx *t, enum gdr_layer l)
{
	const struct report *r = t->r;
	int n = 0, m = 0;

	if (l == L_GPU) {
		for (size_t i = 0; i < r->nsubj; i++)
			n += r->subj[i].kind == SUBJ_GPU;
		for (size_t i = 0; i < r->nres; i++)
			m += !strcmp(r->res[i].gate->id, "gpu.visible") &&
			     r->res[i].status == ST_PASS;
		fprintf(t->out, "%d GPU(s), %d visible to CUDA; ", n, m);
	} else if (l == L_NIC) {
		int ports = 0;

		for (size_t i = 0; i < r->nsubj; i++) {
			n += r->subj[i].kind == SUBJ_NIC;
			ports += r->subj[i].kind == SUBJ_PORT;
		}
		for (size_t i = 0; i < r->nres; i++)
			m += !strcmp(r->res[i].gate->id, "nic.port") &&
			     r->res[i].status == ST_PASS;
		fprintf(t->out, "%d device(s), %d of %d port(s) ACTIVE; ", n, m,
			ports);
	}
}

void text_layers(const struct text_ctx *t)
{
	const struct report *r = t->r;
	static const enum gdr_status order[] = {
		ST_PASS, ST_WARN, ST_BLOCKED, ST_ERROR, ST_SKIP,
	};

	fprintf(t->out, "\n%slayers%s\n", text_bold(t), text_reset(t));
	for (int l = 0; l < L_COUNT; l++) {
		int count[ST_ERROR + 1] = { 0 }, total = 0, shown = 0;

		for (size_t i = 0; i < r->nres; i++)
			if ((int)r->res[i].layer == l) {
				count[r->res[i].status]++;
				total++;
			}
		if (!total)
			continue;
		fprintf(t->out, "  %-13s", layer_name((enum gdr_layer)l));
		layer_subjects(t, (enum gdr_layer)l);
		fprintf(t->out, "%d result(s):", total);
		for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			if (!count[order[k]])
				continue;
			fprintf(t->out, "%s %d %s", shown++ ? "," : "",
				count[order[k]], status_name(order[k]));
		}
		fputc('\n', t->out);
	}
}
