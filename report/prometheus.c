// SPDX-License-Identifier: MIT
/*
 * Prometheus text exposition for node_exporter's textfile collector. The
 * series set is bounded by the node's devices, never by its GPU x NIC
 * pairs: run info, the overall verdict, each path's verdict with the gate
 * and subject that decided it, one series per result of the host, a GPU,
 * a NIC or a port (status and reason_code as labels, value 1), and the
 * results of pairs counted per gate and status. An 8 GPU x 12 NIC node
 * has about 200 series; `promtool check metrics` accepts the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
#include "core/xalloc.h"

/*
 * Label values: UTF-8 with backslash, double quote and newline escaped.
 * Bytes the model's rule would not let through come out as \xNN (the
 * backslash escaped), as the model writes them.
 */
static void label(FILE *out, const char *s)
{
	int n;

	while ((n = report_safe_seq(s))) {
		if (n < 0)
			fprintf(out, "\\\\x%02X", *(const unsigned char *)s);
		else if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else
			fwrite(s, 1, (size_t)n, out);
		s += n < 0 ? 1 : n;
	}
}

static void family(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* Pair results per gate and status, in the order the gates first came. */
struct pair_count {
	const struct gate_desc *gate;
	enum gdr_layer layer;
	size_t n[ST_ERROR + 1];
};

static size_t count_pairs(const struct report *r, struct pair_count *pc)
{
	size_t ng = 0;

	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		size_t g;

		if (r->subj[res->subject].kind != SUBJ_PAIR)
			continue;
		for (g = 0; g < ng && pc[g].gate != res->gate; g++)
			;
		if (g == ng) {
			memset(&pc[ng], 0, sizeof(pc[ng]));
			pc[ng].gate = res->gate;
			pc[ng++].layer = res->layer;
		}
		if ((unsigned int)res->status <= ST_ERROR)
			pc[g].n[res->status]++;
	}
	return ng;
}

/* Lost or trained-down rails (topo.rails): a count, then one per rail. */
static void render_rails(const struct report *r, FILE *out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nres; i++)
		n += report_rail_failure(r, i);
	family(out, "gdrcheck_rails_lost", "NCCL rails lost (a port not "
	       "ACTIVE) or trained down (the NIC's PCIe link) against the "
	       "node as built, exemptions left out.");
	fprintf(out, "gdrcheck_rails_lost %zu\n", n);
	if (!n)
		return;
	family(out, "gdrcheck_rail_lost", "A lost or trained-down rail: the "
	       "GPU, the RDMA device (or PCI function) and port, the cause "
	       "(port_down, link_degraded, rdma_device_missing).");
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		const char *nic = ev_find_str(res, "nic");
		const char *cause = ev_find_str(res, "cause");
		long long port = ev_find_int(res, "port", 0);

		if (!report_rail_failure(r, i))
			continue;
		fputs("gdrcheck_rail_lost{gpu=\"", out);
		label(out, r->subj[res->subject].id);
		fputs("\",nic=\"", out);
		label(out, nic ? nic : "");
		fprintf(out, "\",port=\"%lld\",cause=\"", port);
		label(out, cause ? cause : "");
		fputs("\"} 1\n", out);
	}
}

int render_prometheus(const struct report *r, FILE *out)
{
	struct pair_count *pc = xcalloc(r->nres ? r->nres : 1, sizeof(*pc));
	size_t npc = count_pairs(r, pc);

	family(out, "gdrcheck_info", "The gdrcheck version and the policy "
	       "of the run (--require).");
	fputs("gdrcheck_info{version=\"", out);
	label(out, r->meta.tool_version);
	fputs("\",require=\"", out);
	label(out, r->meta.require ? r->meta.require : "any");
	fputs("\"} 1\n", out);
	family(out, "gdrcheck_ready", "1 when the node is READY under the "
	       "policy (exit status 0).");
	fprintf(out, "gdrcheck_ready %d\n", !r->exit_code &&
		(r->overall == V_READY || r->overall == V_READY_UNPROVEN));
	family(out, "gdrcheck_verdict", "The node's verdict under the "
	       "policy, one series per possible value (1 for the current).");
	for (int v = V_READY; v <= V_READY_UNPROVEN; v++)
		fprintf(out, "gdrcheck_verdict{verdict=\"%s\"} %d\n",
			verdict_name((enum verdict)v),
			r->overall == (enum verdict)v);
	family(out, "gdrcheck_exit_code", "Exit status: 0 READY, 1 BLOCKED, "
	       "3 undecided.");
	fputs("gdrcheck_exit_code{require=\"", out);
	label(out, r->meta.require ? r->meta.require : "any");
	fprintf(out, "\"} %d\n", r->exit_code);
	family(out, "gdrcheck_path_ready", "1 when GPUDirect RDMA works "
	       "through this registration path.");
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_path_ready{path=\"%s\"} %d\n",
			path_name((enum gdr_path)p),
			r->path[p].verdict == V_READY);
	family(out, "gdrcheck_path_verdict", "The path's verdict and the "
	       "gate and subject that decided it (empty when none), value 1.");
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const struct result *d = pv->decisive >= 0 &&
			(size_t)pv->decisive < r->nres ?
			&r->res[pv->decisive] : NULL;

		fprintf(out, "gdrcheck_path_verdict{path=\"%s\",verdict=\"%s\","
			"gate=\"", path_name((enum gdr_path)p),
			verdict_name(pv->verdict));
		label(out, d ? d->gate->id : "");
		fputs("\",subject=\"", out);
		label(out, d ? r->subj[d->subject].id : "");
		fputs("\",reason_code=\"", out);
		label(out, d && d->code ? d->code : "");
		fputs("\"} 1\n", out);
	}
	family(out, "gdrcheck_ready_pairs", "GPU and RDMA port combinations "
	       "that work through the path.");
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_ready_pairs{path=\"%s\"} %zu\n",
			path_name((enum gdr_path)p), r->path[p].nready);
	/* Per GPU: does any path have a working GPU x NIC pair for it? */
	family(out, "gdrcheck_gpu_ready", "1 when the GPU works with some RDMA "
	       "port through a READY path (its GDR rail), else 0; UUID and "
	       "pci_bus_id as dcgm-exporter writes them, to join its series.");
	for (size_t g = 0; g < r->nsubj; g++) {
		bool ready = false;

		if (r->subj[g].kind != SUBJ_GPU)
			continue;
		for (int p = 0; p < PATH_COUNT && !ready; p++)
			for (size_t i = 0; i < r->path[p].nready && !ready; i++)
				ready = r->path[p].ready[i][0] == (int)g;
		fputs("gdrcheck_gpu_ready{gpu=\"", out);
		label(out, r->subj[g].id);
		/* dcgm-exporter's join labels: UUID and the 8-digit domain. */
		fputs("\",UUID=\"", out);
		label(out, r->subj[g].uuid);
		fputs("\",pci_bus_id=\"", out);
		if (strlen(r->subj[g].pci) == 12 && r->subj[g].pci[4] == ':')
			fputs("0000", out);
		label(out, r->subj[g].pci);
		fprintf(out, "\"} %d\n", ready);
	}
	family(out, "gdrcheck_policy_violations", "Policy rules the node "
	       "breaks (--every-gpu, --max-distance, --warn-fails, lost rails).");
	fprintf(out, "gdrcheck_policy_violations %d\n",
		r->meta.policy.nviolations);
	family(out, "gdrcheck_gate_status", "A gate's result for the host, a "
	       "GPU, a NIC or a port: status and reason_code as labels, value 1.");
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (r->subj[res->subject].kind == SUBJ_PAIR)
			continue;
		fputs("gdrcheck_gate_status{gate=\"", out);
		label(out, res->gate->id);
		fprintf(out, "\",layer=\"%s\",subject=\"",
			layer_name(res->layer));
		label(out, r->subj[res->subject].id);
		fprintf(out, "\",status=\"%s\",reason_code=\"",
			status_name(res->status));
		label(out, res->code ? res->code : "");
		fputs("\"} 1\n", out);
	}
	family(out, "gdrcheck_pair_results", "Results of a gate over the GPU x "
	       "RDMA device pairs, counted per status.");
	for (size_t g = 0; g < npc; g++)
		for (int s = ST_PASS; s <= ST_ERROR; s++) {
			fputs("gdrcheck_pair_results{gate=\"", out);
			label(out, pc[g].gate->id);
			fprintf(out, "\",layer=\"%s\",status=\"%s\"} %zu\n",
				layer_name(pc[g].layer),
				status_name((enum gdr_status)s), pc[g].n[s]);
		}
	render_rails(r, out);
	family(out, "gdrcheck_run_timestamp_seconds", "When the check ran "
	       "(Unix time): a textfile older than the check interval is "
	       "stale.");
	fprintf(out, "gdrcheck_run_timestamp_seconds %lld\n",
		r->meta.generated_epoch);
	family(out, "gdrcheck_duration_seconds", "Wall time of the whole check.");
	fprintf(out, "gdrcheck_duration_seconds %.3f\n", r->meta.total_ms / 1e3);
	family(out, "gdrcheck_interrupted", "1 when a signal cut the run short.");
	fprintf(out, "gdrcheck_interrupted %d\n", r->meta.interrupted);
	free(pc);
	return ferror(out) ? -1 : 0;
}
