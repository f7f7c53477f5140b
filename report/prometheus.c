// SPDX-License-Identifier: MIT
/*
 * Prometheus text exposition for node_exporter's textfile collector:
 * per-path readiness, the overall verdict and one gauge per gate result,
 * with stable labels (gate, layer, subject, path).
 */
#include <stdio.h>

#include "report/result.h"

/* Label values escape backslash, double quote and newline. */
static void label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

int render_prometheus(const struct report *r, FILE *out)
{
	static const char *const statuses[] = {
		"PASS", "WARN", "BLOCKED", "SKIP", "ERROR",
	};

	fputs("# HELP gdrcheck_path_ready 1 when GPUDirect RDMA works through "
	      "this registration path.\n"
	      "# TYPE gdrcheck_path_ready gauge\n", out);
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_path_ready{path=\"%s\"} %d\n",
			path_name((enum gdr_path)p),
			r->path[p].verdict == V_READY);
	fputs("# HELP gdrcheck_path_verdict The path's verdict, one series "
	      "per possible value (1 for the current one).\n"
	      "# TYPE gdrcheck_path_verdict gauge\n", out);
	for (int p = 0; p < PATH_COUNT; p++)
		for (int v = V_READY; v <= V_UNKNOWN; v++)
			fprintf(out, "gdrcheck_path_verdict{path=\"%s\",verdict=\"%s\"} %d\n",
				path_name((enum gdr_path)p),
				verdict_name((enum verdict)v),
				r->path[p].verdict == (enum verdict)v);
	fputs("# HELP gdrcheck_ready_pairs GPU and RDMA port combinations that "
	      "work through the path.\n"
	      "# TYPE gdrcheck_ready_pairs gauge\n", out);
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_ready_pairs{path=\"%s\"} %zu\n",
			path_name((enum gdr_path)p), r->path[p].nready);
	fputs("# HELP gdrcheck_exit_code Exit status: 0 READY, 1 BLOCKED, "
	      "3 undecided.\n# TYPE gdrcheck_exit_code gauge\n", out);
	fprintf(out, "gdrcheck_exit_code{require=\"%s\"} %d\n",
		r->meta.require, r->exit_code);
	fputs("# HELP gdrcheck_gate_status Gate result, one series per status "
	      "(1 for the current one).\n"
	      "# TYPE gdrcheck_gate_status gauge\n", out);
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		for (int s = ST_PASS; s <= ST_ERROR; s++) {
			fprintf(out, "gdrcheck_gate_status{gate=\"%s\",layer=\"%s\","
				"subject=\"", res->gate, layer_name(res->layer));
			label(out, r->subj[res->subject].id);
			fprintf(out, "\",status=\"%s\"} %d\n", statuses[s],
				res->status == (enum gdr_status)s);
		}
	}
	fputs("# HELP gdrcheck_duration_seconds Wall time of the whole check.\n"
	      "# TYPE gdrcheck_duration_seconds gauge\n", out);
	fprintf(out, "gdrcheck_duration_seconds %.3f\n", r->meta.total_ms / 1e3);
	fputs("# HELP gdrcheck_interrupted 1 when a signal cut the run short.\n"
	      "# TYPE gdrcheck_interrupted gauge\n", out);
	fprintf(out, "gdrcheck_interrupted %d\n", r->meta.interrupted);
	return ferror(out) ? -1 : 0;
}
