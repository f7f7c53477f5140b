// SPDX-License-Identifier: MIT
/*
 * Prometheus text exposition for node_exporter's textfile collector
 * (format 3). A state is the sample's value, so a series stays the same
 * series when the state changes (an alert's `for:` keeps counting): one
 * series per gate and subject (host, GPU, NIC, port) valued by its status,
 * one per path valued by its verdict, per pair gate the worst status and
 * the number of pairs with a problem. Reason codes and the gate that
 * blocked a path are labels only of series that exist while there is a
 * problem. Bounded by the node's devices, never by GPU x NIC pairs: an
 * 8 GPU x 12 NIC node has about 260 series (tests/validate-formats.py keeps
 * it under 300); `promtool check metrics` accepts the output.
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

/* The status as a sample value: higher is worse. */
static int status_value(enum gdr_status st)
{
	switch (st) {
	case ST_PASS: return 0;
	case ST_SKIP: return 1;
	case ST_WARN: return 2;
	case ST_BLOCKED: return 3;
	default: return 4;	/* ST_ERROR */
	}
}

/* A result operators act on: its reason code is worth a series. */
static bool is_problem(const struct result *res)
{
	return res->status == ST_WARN || res->status == ST_BLOCKED ||
	       res->status == ST_ERROR;
}

/* Pair results per gate, in the order the gates first came. */
struct pair_count {
	const struct gate_desc *gate;
	enum gdr_layer layer;
	int worst;		/* status_value() of the worst pair */
	size_t problems;	/* pairs WARN, BLOCKED or ERROR */
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
		if (status_value(res->status) > pc[g].worst)
			pc[g].worst = status_value(res->status);
		pc[g].problems += is_problem(res);
	}
	return ng;
}

/* The verdict as a sample value: 0 READY, 1 READY-UNPROVEN, 2 UNKNOWN,
 * 3 BLOCKED. */
static int verdict_value(enum verdict v)
{
	return v == V_READY ? 0 : v == V_READY_UNPROVEN ? 1 :
	       v == V_UNKNOWN ? 2 : 3;
}

/* Lost or trained-down rails (topo.rails): a count, then one per rail. */
static void render_rails(const struct report *r, FILE *out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nres; i++)
		n += report_rail_failure(r, i);
	family(out, "gdrcheck_rails_lost", "NCCL rails lost (a port not "
	       "ACTIVE, a device that does not open) or trained down (the "
	       "NIC's PCIe link) against the node as built, exemptions left "
	       "out.");
	fprintf(out, "gdrcheck_rails_lost %zu\n", n);
	if (!n)
		return;
	family(out, "gdrcheck_rail_lost", "A lost or trained-down rail: the "
	       "GPU, the RDMA device (or PCI function) and port, the cause "
	       "(port_down, device_failed, link_degraded, rdma_device_missing).");
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

/* dcgm-exporter's gpu label: the index ("0" of subject "GPU0"). */
static void gpu_index(FILE *out, const char *id)
{
	label(out, !strncmp(id, "GPU", 3) && id[3] ? id + 3 : id);
}

static void render_paths(const struct report *r, FILE *out)
{
	family(out, "gdrcheck_path_status", "A registration path's verdict "
	       "as the value: 0 READY, 1 READY-UNPROVEN, 2 UNKNOWN, 3 BLOCKED.");
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_path_status{path=\"%s\"} %d\n",
			path_name((enum gdr_path)p),
			verdict_value(r->path[p].verdict));
	family(out, "gdrcheck_path_ready", "1 when GPUDirect RDMA works "
	       "through this registration path.");
	for (int p = 0; p < PATH_COUNT; p++)
		fprintf(out, "gdrcheck_path_ready{path=\"%s\"} %d\n",
			path_name((enum gdr_path)p),
			r->path[p].verdict == V_READY);
	family(out, "gdrcheck_path_blocked_by", "While a path is BLOCKED: the "
	       "gate, subject and reason code that closed it, value 1.");
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const struct result *d = pv->decisive >= 0 &&
			(size_t)pv->decisive < r->nres ?
			&r->res[pv->decisive] : NULL;

		if (pv->verdict != V_BLOCKED)
			continue;
		fprintf(out, "gdrcheck_path_blocked_by{path=\"%s\",gate=\"",
			path_name((enum gdr_path)p));
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
}

/* Per GPU: does any path have a working GPU x NIC pair for it? */
static void render_gpus(const struct report *r, FILE *out)
{
	family(out, "gdrcheck_gpu_ready", "1 when the GPU works with some RDMA "
	       "port through a READY path (its GDR rail), else 0; gpu, UUID, "
	       "pci_bus_id and Hostname as dcgm-exporter writes them, to join "
	       "its series; subject as gdrcheck_gate_status names the GPU.");
	for (size_t g = 0; g < r->nsubj; g++) {
		bool ready = false;

		if (r->subj[g].kind != SUBJ_GPU)
			continue;
		for (int p = 0; p < PATH_COUNT && !ready; p++)
			for (size_t i = 0; i < r->path[p].nready && !ready; i++)
				ready = r->path[p].ready[i][0] == (int)g;
		fputs("gdrcheck_gpu_ready{gpu=\"", out);
		gpu_index(out, r->subj[g].id);
		fputs("\",subject=\"", out);
		label(out, r->subj[g].id);
		fputs("\",UUID=\"", out);
		label(out, r->subj[g].uuid);
		/* dcgm-exporter's 8-digit domain. */
		fputs("\",pci_bus_id=\"", out);
		if (strlen(r->subj[g].pci) == 12 && r->subj[g].pci[4] == ':')
			fputs("0000", out);
		label(out, r->subj[g].pci);
		fputs("\",Hostname=\"", out);
		label(out, r->meta.hostname);
		fprintf(out, "\"} %d\n", ready);
	}
}

/*
 * Results of one gate for one subject share a series: a gate may give a
 * subject several (topo.rails: one per lost rail), and a scrape with a
 * duplicate series is rejected whole. order[] holds the non-pair results
 * sorted by gate, subject (and, for reasons, code), then report order.
 */
struct series_key {
	const struct report *r;
	bool by_code;
};

static const char *code_of(const struct result *res)
{
	return res->code ? res->code : "";
}

static int series_cmp(const void *a, const void *b, void *arg)
{
	const struct series_key *key = arg;
	const struct result *x = &key->r->res[*(const size_t *)a];
	const struct result *y = &key->r->res[*(const size_t *)b];
	int c;

	if (x->gate->index != y->gate->index)
		return x->gate->index < y->gate->index ? -1 : 1;
	if (x->subject != y->subject)
		return x->subject < y->subject ? -1 : 1;
	if (key->by_code && (c = strcmp(code_of(x), code_of(y))))
		return c;
	return *(const size_t *)a < *(const size_t *)b ? -1 :
	       *(const size_t *)a > *(const size_t *)b;
}

static bool same_series(const struct result *x, const struct result *y,
			bool by_code)
{
	return x->gate->index == y->gate->index && x->subject == y->subject &&
	       (!by_code || !strcmp(code_of(x), code_of(y)));
}

/*
 * at[i]: for the first result of each series in report order, the worst
 * status_value() of its results; -1 for every other result.
 */
static void series_firsts(const struct report *r, size_t *order, size_t n,
			  bool by_code, int *at)
{
	struct series_key key = { r, by_code };

	qsort_r(order, n, sizeof(*order), series_cmp, &key);
	for (size_t i = 0; i < r->nres; i++)
		at[i] = -1;
	for (size_t k = 0; k < n;) {
		size_t first = order[k], end = k;
		int worst = 0;

		while (end < n && same_series(&r->res[order[k]],
					      &r->res[order[end]], by_code)) {
			int v = status_value(r->res[order[end]].status);

			worst = v > worst ? v : worst;
			end++;
		}
		at[first] = worst;
		k = end;
	}
}

/* One series per gate and subject, the worst status its value; problems'
 * codes. */
static void render_gates(const struct report *r, FILE *out)
{
	size_t *order = xcalloc(r->nres + 1, sizeof(*order)), n = 0, np = 0;
	int *at = xcalloc(r->nres + 1, sizeof(*at));

	for (size_t i = 0; i < r->nres; i++)
		if (r->subj[r->res[i].subject].kind != SUBJ_PAIR)
			order[n++] = i;
	series_firsts(r, order, n, false, at);
	family(out, "gdrcheck_gate_status", "A gate's result for the host, a "
	       "GPU, a NIC or a port as the value (the worst of several): "
	       "0 PASS, 1 SKIP, 2 WARN, 3 BLOCKED, 4 ERROR.");
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (at[i] < 0)
			continue;
		fputs("gdrcheck_gate_status{gate=\"", out);
		label(out, res->gate->id);
		fprintf(out, "\",layer=\"%s\",subject=\"",
			layer_name(res->layer));
		label(out, r->subj[res->subject].id);
		fprintf(out, "\"} %d\n", at[i]);
	}
	for (size_t k = 0; k < n; k++)
		if (is_problem(&r->res[order[k]]))
			order[np++] = order[k];
	series_firsts(r, order, np, true, at);
	family(out, "gdrcheck_gate_reason", "While a gate WARNs, BLOCKs or "
	       "ERRORs for the host, a GPU, a NIC or a port: its reason "
	       "code(s), value 1.");
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (at[i] < 0)
			continue;
		fputs("gdrcheck_gate_reason{gate=\"", out);
		label(out, res->gate->id);
		fputs("\",subject=\"", out);
		label(out, r->subj[res->subject].id);
		fputs("\",reason_code=\"", out);
		label(out, code_of(res));
		fputs("\"} 1\n", out);
	}
	free(at);
	free(order);
}

static void render_pairs(const struct pair_count *pc, size_t npc, FILE *out)
{
	family(out, "gdrcheck_pair_status", "The worst result of a gate over "
	       "the GPU x RDMA device pairs: 0 PASS, 1 SKIP, 2 WARN, 3 BLOCKED, "
	       "4 ERROR.");
	for (size_t g = 0; g < npc; g++) {
		fputs("gdrcheck_pair_status{gate=\"", out);
		label(out, pc[g].gate->id);
		fprintf(out, "\",layer=\"%s\"} %d\n", layer_name(pc[g].layer),
			pc[g].worst);
	}
	family(out, "gdrcheck_pair_problems", "Pairs for which a gate WARNs, "
	       "BLOCKs or ERRORs.");
	for (size_t g = 0; g < npc; g++) {
		fputs("gdrcheck_pair_problems{gate=\"", out);
		label(out, pc[g].gate->id);
		fprintf(out, "\",layer=\"%s\"} %zu\n", layer_name(pc[g].layer),
			pc[g].problems);
	}
}

int render_prometheus(const struct report *r, FILE *out)
{
	struct pair_count *pc = xcalloc(r->nres ? r->nres : 1, sizeof(*pc));
	size_t npc = count_pairs(r, pc);

	family(out, "gdrcheck_info", "The gdrcheck version, the policy of the "
	       "run (--require) and the node's hostname.");
	fputs("gdrcheck_info{version=\"", out);
	label(out, r->meta.tool_version);
	fputs("\",require=\"", out);
	label(out, r->meta.require ? r->meta.require : "any");
	fputs("\",Hostname=\"", out);
	label(out, r->meta.hostname);
	fputs("\"} 1\n", out);
	family(out, "gdrcheck_ready", "1 when the node is READY under the "
	       "policy (exit status 0).");
	fprintf(out, "gdrcheck_ready %d\n", !r->exit_code &&
		(r->overall == V_READY || r->overall == V_READY_UNPROVEN));
	family(out, "gdrcheck_verdict", "The node's verdict under the "
	       "policy as the value: 0 READY, 1 READY-UNPROVEN, 2 UNKNOWN, "
	       "3 BLOCKED.");
	fprintf(out, "gdrcheck_verdict %d\n", verdict_value(r->overall));
	family(out, "gdrcheck_exit_code", "Exit status: 0 READY, 1 BLOCKED, "
	       "3 undecided.");
	fputs("gdrcheck_exit_code{require=\"", out);
	label(out, r->meta.require ? r->meta.require : "any");
	fprintf(out, "\"} %d\n", r->exit_code);
	render_paths(r, out);
	render_gpus(r, out);
	family(out, "gdrcheck_policy_violations", "Policy rules the node "
	       "breaks (--every-gpu, --max-distance, --warn-fails, lost rails).");
	fprintf(out, "gdrcheck_policy_violations %d\n",
		r->meta.policy.nviolations);
	render_gates(r, out);
	render_pairs(pc, npc, out);
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
