// SPDX-License-Identifier: MIT
/*
 * The top of the text report: the node's verdict, each path's, what NCCL
 * would do, and one count line per layer instead of a PASS line per item.
 */
#include <string.h>

#include "gate/catalog.h"
#include "report/text_sections.h"

/*
 * What NCCL would do, from the model's typed rails (report.nccl): how many
 * rails, how many use GPUDirect RDMA both ways and by which mechanism, and
 * how many of those were proven by a real registration and transfer.
 */
static void text_nccl_rails(const struct text_ctx *t)
{
	const struct nccl_facts *f = &t->r->nccl;
	int rails = 0, both = 0, recv = 0, host = 0, dmabuf = 0, peermem = 0;
	int proven = 0, registered = 0, pxn = 0, undecided = 0, hidden = 0;

	if (!f->modelled || !f->ngpus)
		return;
	for (size_t g = 0; g < f->ngpus; g++)
		for (int k = 0; k < f->gpus[g].nrails; k++) {
			const struct nccl_rail *rl = &f->gpus[g].rail[k];

			rails++;
			if (rl->hidden)
				hidden++;
			else if (rl->undecided)
				undecided++;
			else if (rl->gdr_send && rl->gdr_recv)
				both++;
			else if (rl->gdr_recv)
				recv++;
			else
				host++;
			if (rl->gdr_recv && !strcmp(rl->mech_recv, "dmabuf"))
				dmabuf++;
			else if (rl->gdr_recv && !strcmp(rl->mech_recv, "peermem"))
				peermem++;
			proven += !strcmp(rl->proof, "proven");
			registered += !strcmp(rl->proof, "registered");
			pxn += rl->relay_gpu >= 0;
		}
	if (!rails) {
		fprintf(t->out, "  %-8s none: NCCL %s%s would use no RDMA device "
			"for any GPU\n", "rails", f->version,
			f->version_assumed ? " (assumed)" : "");
		return;
	}
	fprintf(t->out, "  %-8s %d rail(s) on %zu GPU(s), NCCL %s%s: GPUDirect "
		"RDMA both ways on %d", "rails", rails, f->ngpus, f->version,
		f->version_assumed ? " (assumed)" : "", both);
	if (recv)
		fprintf(t->out, ", receive-only on %d", recv);
	if (host)
		fprintf(t->out, ", host staging on %d", host);
	if (undecided)
		fprintf(t->out, ", undecided on %d (inputs unread)", undecided);
	if (hidden)
		fprintf(t->out, ", hidden from this process on %d", hidden);
	if (dmabuf)
		fprintf(t->out, "; DMA-BUF on %d", dmabuf);
	if (peermem)
		fprintf(t->out, "; peermem on %d", peermem);
	if (pxn)
		fprintf(t->out, "; PXN on %d", pxn);
	if (registered)
		fprintf(t->out, "; registered only (no transfer run) on %d",
			registered);
	fprintf(t->out, "; proven on %d\n", proven);
}

/* Two-node mode: the wire to the other node, in one line. */
static void text_wire(const struct text_ctx *t)
{
	const struct report *r = t->r;
	const struct peer_report *p = &r->peer;
	int tested = 0, failed = 0, first_bad = -1, last_bad = -1;

	if (!p->active)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (res->layer != L_PEER)
			continue;
		if (res->gate->index == G_PEER_LINK && res->status != ST_SKIP)
			tested++;
		if (res->status != ST_BLOCKED && res->status != ST_ERROR)
			continue;
		/* One count per subject: results come gate by gate. */
		if (last_bad < 0 || r->res[last_bad].gate != res->gate ||
		    res->subject > r->res[last_bad].subject)
			failed += res->gate->scope == SUBJ_GPU;
		last_bad = (int)i;
		if (first_bad < 0)
			first_bad = (int)i;
	}
	fprintf(t->out, "  %-8s %s%s%s ", "wire", text_verdict_color(t,
		p->verdict), verdict_name(p->verdict), text_reset(t));
	text_put_clean(p->peer_host[0] ? p->peer_host : p->endpoint, t->out);
	fprintf(t->out, " (this node the %s): %d rail(s) compared, %d "
		"failing result(s)", p->role, tested, failed);
	if (first_bad >= 0) {
		fprintf(t->out, "; first: %s (%s): ", r->res[first_bad].gate->id,
			r->subj[r->res[first_bad].subject].id);
		text_put_clean(r->res[first_bad].reason, t->out);
	}
	fputc('\n', t->out);
}

void text_summary(const struct text_ctx *t)
{
	const struct report *r = t->r;
	char list[1024];

	fprintf(t->out, "\n%sverdict%s\n", text_bold(t), text_reset(t));
	fprintf(t->out, "  %-8s %s%s%s (--require %s%s, exit %d)\n", "overall",
		text_verdict_color(t, r->overall), verdict_name(r->overall),
		text_reset(t), r->meta.require_auto ? "auto: " : "",
		r->meta.require, r->exit_code);
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
		/* The nccl path is judged per GPU: its rails say more. */
		if (pv->nready < 2 || p == PATH_NCCL)
			continue;
		text_pair_list(r, (const int (*)[2])pv->ready, pv->nready, " + ",
			       list, sizeof(list));
		fprintf(t->out, "  %-8s ready: %s\n", "", list);
	}
	text_nccl_rails(t);
	text_wire(t);
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
			/* A PROHIBITED GPU is visible, only unusable. */
			m += r->res[i].gate == &gate_descs[G_GPU_VISIBLE] &&
			     (r->res[i].status == ST_PASS ||
			      r->res[i].code_index == C_GPU_COMPUTE_PROHIBITED);
		fprintf(t->out, "%d GPU(s), %d visible to CUDA; ", n, m);
	} else if (l == L_NIC) {
		int ports = 0;

		for (size_t i = 0; i < r->nsubj; i++) {
			n += r->subj[i].kind == SUBJ_NIC;
			ports += r->subj[i].kind == SUBJ_PORT;
		}
		for (size_t i = 0; i < r->nres; i++)
			m += r->res[i].gate == &gate_descs[G_NIC_PORT] &&
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
