// SPDX-License-Identifier: MIT
/*
 * gdrcheck --list-codes: the gate catalog (gate/gates.def) as text or as
 * JSON. tests/check-catalog.sh compares the JSON with the man page's
 * REASON CODES section and the schema's reason_code enum; make
 * catalog-docs regenerates both from it.
 */
#include <stdio.h>

#include "access/vendor.h"
#include "gate/catalog.h"
#include "report/json_writer.h"
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
	snprintf(buf, len, "%s%s%s", paths & P_DMABUF ? "dmabuf" : "",
		 paths == P_BOTH ? "," : "",
		 paths & P_PEERMEM ? "peermem" : paths ? "" : "-");
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
					fprintf(out, " gate:%s", gate_descs[d].id);
			fputc('\n', out);
		}
		codes_text(out, i);
	}
}

static void codes_json(struct json_writer *w)
{
	jw_open_array(w, "codes");
	for (int c = 0; c < C_COUNT; c++) {
		int g = code_gate((enum reason_code)c);

		jw_open_object(w, NULL);
		jw_string(w, "code", code_descs[c].name);
		jw_string_or_null(w, "gate", g >= 0 ? gate_descs[g].id : NULL);
		jw_open_array(w, "statuses");
		for (int s = 0; s <= ST_ERROR; s++)
			if (code_descs[c].statuses & (1u << s))
				jw_string(w, NULL, status_name((enum gdr_status)s));
		jw_close_array(w);
		jw_string(w, "meaning", code_descs[c].meaning);
		jw_open_array(w, "remedies");
		for (int r = 0; r < R_COUNT; r++) {
			if ((int)remedy_code((enum remedy_id)r) != c)
				continue;
			jw_open_object(w, NULL);
			jw_string(w, "name", remedy_descs[r].name);
			jw_string(w, "text", remedy_descs[r].text);
			jw_bool(w, "format", remedy_descs[r].format);
			jw_close_object(w);
		}
		jw_close_array(w);
		jw_close_object(w);
	}
	jw_close_array(w);
}

static int catalog_json(FILE *out)
{
	struct json_writer w;

	jw_init(&w, out);
	jw_open_object(&w, NULL);
	jw_string(&w, "catalog_version", CATALOG_VERSION);
	jw_open_array(&w, "gates");
	for (int i = 0; i < G_COUNT; i++) {
		const struct gate_desc *g = &gate_descs[i];

		jw_open_object(&w, NULL);
		jw_string(&w, "id", g->id);
		jw_string(&w, "layer", layer_name(g->layer));
		jw_string(&w, "scope", subject_kind_name(g->scope));
		jw_open_array(&w, "paths");
		if (g->paths & P_DMABUF)
			jw_string(&w, NULL, "dmabuf");
		if (g->paths & P_PEERMEM)
			jw_string(&w, NULL, "peermem");
		jw_close_array(&w);
		jw_bool(&w, "proof", g->proof);
		jw_open_array(&w, "stages");
		for (int s = 0; s < WSTAGE_COUNT; s++)
			if (g->stages & (1u << s))
				jw_string(&w, NULL,
					  stage_name((enum worker_stage)s));
		jw_close_array(&w);
		jw_open_array(&w, "deps");
		for (int d = 0; d < G_COUNT; d++)
			if (g->deps & (1ull << d))
				jw_string(&w, NULL, gate_descs[d].id);
		jw_close_array(&w);
		jw_string(&w, "title", g->title);
		jw_close_object(&w);
	}
	jw_close_array(&w);
	codes_json(&w);
	jw_close_object(&w);
	return jw_finish(&w);
}

int catalog_print(FILE *out, bool json)
{
	if (json)
		return catalog_json(out);
	catalog_text(out);
	return fflush(out) ? -1 : 0;
}
