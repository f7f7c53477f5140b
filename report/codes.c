// SPDX-License-Identifier: MIT
/*
 * gdrcheck --list-codes: the gate catalog (gate/gates.def) as text or as
 * JSON. tests/check-catalog.sh compares the JSON with the man page's
 * REASON CODES section and the schema's reason_code enum; make
 * catalog-docs regenerates both from it.
 */
#include <jansson.h>
#include <stdio.h>

#include "access/vendor.h"
#include "gate/catalog.h"
#include "report/codes.h"

#define CATALOG_VERSION "1.0"

static void statuses_text(unsigned int st, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int s = 0; s <= ST_ERROR; s++)
		if (st & (1u << s))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
					      "%s%s", n ? "|" : "",
					      status_name((enum gdr_status)s));
}

static void paths_text(unsigned int paths, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", paths & P_DMABUF ? "dmabuf" : "",
		 (paths & P_DMABUF) && (paths & ~P_DMABUF) ? "," : "",
		 paths & P_PEERMEM ? "peermem" : "",
		 (paths & P_PEERMEM) && (paths & P_NCCL) ? "," : "",
		 paths & P_NCCL ? "nccl" : paths ? "" : "-");
}

/* The codes of gate g (-1: the shared codes), text. */
static void codes_text(FILE *out, int g)
{
	for (int c = 0; c < C_COUNT; c++) {
		char st[64];

		if (code_gate((enum reason_code)c) != g)
			continue;
		statuses_text(code_descs[c].statuses, st, sizeof(st));
		fprintf(out, "  %s (%s)\n      %s\n", code_descs[c].name, st,
			code_descs[c].meaning);
		for (int r = 0; r < R_COUNT; r++)
			if ((int)remedy_code((enum remedy_id)r) == c)
				fprintf(out, "      remedy %s: %s\n",
					remedy_descs[r].name,
					remedy_descs[r].text);
	}
}

/* "(else SKIP CODE)" for a DEP row of gate g on gate d, or "". */
static const char *dep_note(int g, int d)
{
	static char note[96];
	size_t n;
	const struct gate_dep *dp = gate_deps(g, &n);

	for (size_t k = 0; k < n; k++)
		if (dp[k].gate == d) {
			snprintf(note, sizeof(note), "(else SKIP %s)",
				 code_descs[dp[k].code].name);
			return note;
		}
	return "";
}

static void catalog_text(FILE *out)
{
	fputs("shared codes (any gate may emit them)\n", out);
	codes_text(out, -1);
	for (int i = 0; i < G_COUNT; i++) {
		const struct gate_desc *g = &gate_descs[i];
		char paths[32];

		paths_text(g->paths, paths, sizeof(paths));
		fprintf(out, "\n%s  layer %s, scope %s, paths %s%s\n", g->id,
			layer_name(g->layer), subject_kind_name(g->scope),
			paths, g->proof ? ", proof" : "");
		fprintf(out, "  %s\n", g->title);
		if (g->stages || g->deps) {
			fputs("  needs", out);
			for (int s = 0; s < WSTAGE_COUNT; s++)
				if (g->stages & (1u << s))
					fprintf(out, " stage:%s",
						stage_name((enum worker_stage)s));
			for (int d = 0; d < G_COUNT; d++)
				if (g->deps & (1ull << d))
					fprintf(out, " gate:%s%s", gate_descs[d].id,
						dep_note(i, d));
			fputc('\n', out);
		}
		codes_text(out, i);
	}
}

/* A JSON string array of the names whose bit is set in mask. */
static json_t *name_array(unsigned long long mask, int n,
			  const char *(*name)(int))
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++)
		if (mask & (1ull << i))
			json_array_append_new(a, json_string(name(i)));
	return a;
}

static const char *status_at(int s)
{
	return status_name((enum gdr_status)s);
}

static const char *stage_at(int s)
{
	return stage_name((enum worker_stage)s);
}

static const char *gate_at(int g)
{
	return gate_descs[g].id;
}

static const char *path_at(int p)
{
	return p == 0 ? "dmabuf" : p == 1 ? "peermem" : "nccl";
}

static json_t *code_json(int c)
{
	int g = code_gate((enum reason_code)c);
	json_t *rems = json_array();

	for (int r = 0; rems && r < R_COUNT; r++) {
		if ((int)remedy_code((enum remedy_id)r) != c)
			continue;
		json_array_append_new(rems, json_pack("{s:s, s:s, s:b}",
			"name", remedy_descs[r].name,
			"text", remedy_descs[r].text,
			"format", remedy_descs[r].format));
	}
	return json_pack("{s:s, s:s?, s:o, s:s, s:o}",
			 "code", code_descs[c].name,
			 "gate", g >= 0 ? gate_descs[g].id : NULL,
			 "statuses", name_array(code_descs[c].statuses,
						ST_ERROR + 1, status_at),
			 "meaning", code_descs[c].meaning,
			 "remedies", rems);
}

static json_t *gate_json(const struct gate_desc *g)
{
	unsigned int paths = (g->paths & P_DMABUF ? 1u : 0) |
			     (g->paths & P_PEERMEM ? 2u : 0) |
			     (g->paths & P_NCCL ? 4u : 0);

	return json_pack("{s:s, s:s, s:s, s:o, s:b, s:o, s:o, s:s}",
			 "id", g->id, "layer", layer_name(g->layer),
			 "scope", subject_kind_name(g->scope),
			 "paths", name_array(paths, 3, path_at),
			 "proof", g->proof,
			 "stages", name_array(g->stages, WSTAGE_COUNT, stage_at),
			 "deps", name_array(g->deps, G_COUNT, gate_at),
			 "title", g->title);
}

/* A small document: built whole, dumped once (keys in insertion order). */
static int catalog_json(FILE *out)
{
	json_t *doc = json_object(), *gates = json_array(), *codes = json_array();
	int ret = -1;

	if (!doc || !gates || !codes)
		goto out;
	for (int i = 0; i < G_COUNT; i++)
		if (json_array_append_new(gates, gate_json(&gate_descs[i])))
			goto out;
	for (int c = 0; c < C_COUNT; c++)
		if (json_array_append_new(codes, code_json(c)))
			goto out;
	json_object_set_new(doc, "catalog_version", json_string(CATALOG_VERSION));
	json_object_set(doc, "gates", gates);
	json_object_set(doc, "codes", codes);
	if (json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
	    fputc('\n', out) != EOF && fflush(out) == 0)
		ret = 0;
out:
	json_decref(gates);
	json_decref(codes);
	json_decref(doc);
	return ret;
}

int catalog_print(FILE *out, bool json)
{
	if (json)
		return catalog_json(out);
	catalog_text(out);
	return fflush(out) ? -1 : 0;
}
