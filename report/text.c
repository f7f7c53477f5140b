// SPDX-License-Identifier: MIT
/* The human report: layered, aligned, one line per result. */
#include <stdio.h>
#include <string.h>

#include "report/result.h"

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

		if (ev->type == EV_STR)
			snprintf(val, sizeof(val), "%s", ev->s);
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

/* The result of gate on subject, or NULL. */
static const struct result *find_result(const struct report *r,
					const char *gate, int subject)
{
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].subject == subject && !strcmp(r->res[i].gate, gate))
			return &r->res[i];
	return NULL;
}

static const char *find_evidence(const struct result *res, const char *key)
{
	for (size_t e = 0; res && e < res->nev; e++)
		if (res->ev[e].type == EV_STR && !strcmp(res->ev[e].key, key))
			return res->ev[e].s;
	return NULL;
}

/*
 * The GPU x RDMA device matrix, like `nvidia-smi topo -m` but with what
 * NCCL decides and the ACS verdict per pair, read back from the results.
 */
static void print_matrix(const struct report *r, FILE *out)
{
	int nics[64], nn = 0, cw = 18;

	for (size_t i = 0; i < r->nsubj && nn < 64; i++)
		if (r->subj[i].kind == SUBJ_NIC)
			nics[nn++] = (int)i;
	if (!nn)
		return;
	fputs("\nGPU x NIC (distance, NCCL GDR, ACS)\n          ", out);
	/* No padding after the last column: no trailing blanks. */
	for (int j = 0; j < nn; j++)
		fprintf(out, "%-*s", j + 1 < nn ? cw : 0, r->subj[nics[j]].id);
	fputc('\n', out);
	for (size_t g = 0; g < r->nsubj; g++) {
		bool any = false;

		if (r->subj[g].kind != SUBJ_GPU)
			continue;
		for (int j = 0; j < nn; j++) {
			const struct result *path, *nccl, *acs;
			const char *cls, *gdr, *acs_s;
			char cell[64];
			int pair = -1;

			for (size_t p = 0; p < r->nsubj; p++)
				if (r->subj[p].kind == SUBJ_PAIR &&
				    r->subj[p].pair_gpu == (int)g &&
				    r->subj[p].pair_nic == nics[j])
					pair = (int)p;
			if (pair < 0)
				continue;
			if (!any)
				fprintf(out, "  %-8s", r->subj[g].id);
			any = true;
			path = find_result(r, "topo.path", pair);
			nccl = find_result(r, "topo.nccl", pair);
			acs = find_result(r, "platform.acs", pair);
			cls = find_evidence(path, "nvidia_smi");
			gdr = !nccl || nccl->status == ST_SKIP ? "?" :
			      nccl->status == ST_PASS ? "gdr" :
			      !strcmp(nccl->code, "NCCL_GDR_WRITE_ONLY") ? "recv" :
			      "host";
			acs_s = !acs || acs->status == ST_SKIP ||
				acs->status == ST_ERROR ? "acs?" :
				acs->status == ST_PASS ? "ok" :
				acs->status == ST_WARN ? "redir" : "REDIR";
			snprintf(cell, sizeof(cell), "%s %s %s", cls ? cls : "-",
				 gdr, acs_s);
			fprintf(out, "%-*s", j + 1 < nn ? cw : 0, cell);
		}
		if (any)
			fputc('\n', out);
	}
	fputs("  gdr: NCCL uses GPUDirect RDMA both ways; recv: receives only; "
	      "host: stages through\n  host memory. ok: no ACS redirect; "
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
			fprintf(out, " at %s (%s)", r->res[pv->decisive].gate,
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
	size_t nrem;
	int shown = 0;

	for (size_t i = 0; i < r->nres; i++) {
		int g = (int)strlen(r->res[i].gate);
		int s = (int)strlen(r->subj[r->res[i].subject].id);

		gw = g > gw ? g : gw;
		sw = s > sw ? s : sw;
	}
	fprintf(out, "%sgdrcheck %s%s: GPUDirect RDMA readiness of %s "
		"(kernel %s)\n", o->color ? C_BOLD : "", r->meta.tool_version,
		o->color ? C_RESET : "", r->meta.hostname, r->meta.kernel);
	if (strcmp(r->meta.sysroot, "/"))
		fprintf(out, "sysroot %s\n", r->meta.sysroot);
	if (r->meta.capture[0])
		fprintf(out, "capture %s (replay: gdrcheck --sysroot <extracted "
			"dir>)\n", r->meta.capture);
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
			gw, res->gate, sw, r->subj[res->subject].id, res->reason);
		if (o->verbose)
			print_evidence(res, 13 + gw + sw, out);
	}

	print_matrix(r, out);
	fprintf(out, "\n%sverdict%s\n", o->color ? C_BOLD : "",
		o->color ? C_RESET : "");
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const char *summary = pv->summary;
		const char *verdict = verdict_name(pv->verdict);

		/* The summary starts with the verdict word: colour just that. */
		if (!strncmp(summary, verdict, strlen(verdict)))
			summary += strlen(verdict);
		fprintf(out, "  %-8s %s%s%s%s\n", path_name((enum gdr_path)p),
			o->color ? verdict_color(pv->verdict) : "", verdict,
			o->color ? C_RESET : "", summary);
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
	for (int i = 0; i < r->meta.policy.nviolations; i++)
		fprintf(out, "  %-8s %s\n", "policy", r->meta.policy.violations[i]);
	fprintf(out, "  %-8s %s%s%s (--require %s, exit %d)\n", "overall",
		o->color ? verdict_color(r->overall) : "",
		verdict_name(r->overall), o->color ? C_RESET : "",
		r->meta.require, r->exit_code);

	nrem = report_remedies(r, &rem);
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
	return ferror(out) ? -1 : 0;
}
