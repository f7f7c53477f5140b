// SPDX-License-Identifier: MIT
/* The machine report: the same results, deterministic order, versioned. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/result.h"

#define SCHEMA_VERSION "1.0"

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static double round3(double v)
{
	return round(v * 1000.0) / 1000.0;
}

static json_t *evidence_object(const struct result *res)
{
	json_t *o = json_object();

	for (size_t e = 0; e < res->nev; e++) {
		const struct evidence *ev = &res->ev[e];
		json_t *v = ev->type == EV_STR ? json_string(ev->s) :
			    ev->type == EV_INT ? json_integer(ev->i) :
			    ev->type == EV_REAL ? json_real(round3(ev->d)) :
			    json_boolean(ev->b);

		/* Invalid UTF-8 from a file must not drop the whole report. */
		if (!v)
			v = json_string("<not valid UTF-8>");
		json_object_set_new(o, ev->key, v);
	}
	return o;
}

static json_t *string_checked(const char *s)
{
	json_t *v = json_string(s);

	return v ? v : json_string("<not valid UTF-8>");
}

static json_t *result_object(const struct report *r, const struct result *res)
{
	json_t *o = json_object();

	json_object_set_new(o, "gate", json_string(res->gate));
	json_object_set_new(o, "layer", json_string(layer_name(res->layer)));
	json_object_set_new(o, "subject", string_checked(r->subj[res->subject].id));
	json_object_set_new(o, "status", json_string(status_name(res->status)));
	json_object_set_new(o, "reason_code", json_string(res->code));
	json_object_set_new(o, "reason", string_checked(res->reason));
	json_object_set_new(o, "remediation", res->remediation ?
			    string_checked(res->remediation) : json_null());
	json_object_set_new(o, "evidence", evidence_object(res));
	json_object_set_new(o, "duration_ms", json_real(round3(res->duration_ms)));
	return o;
}

static json_t *build(const struct report *r)
{
	json_t *root = json_object(), *a, *paths, *o;
	struct remedy *rem;
	size_t nrem;

	json_object_set_new(root, "schema_version", json_string(SCHEMA_VERSION));
	o = json_object();
	json_object_set_new(o, "name", json_string("gdrcheck"));
	json_object_set_new(o, "version", json_string(r->meta.tool_version));
	json_object_set_new(root, "tool", o);
	json_object_set_new(root, "generated_at",
			    json_string(r->meta.generated_at));
	o = json_object();
	json_object_set_new(o, "hostname", string_checked(r->meta.hostname));
	json_object_set_new(o, "kernel", string_checked(r->meta.kernel));
	json_object_set_new(o, "sysroot", string_checked(r->meta.sysroot));
	json_object_set_new(root, "host", o);
	json_object_set_new(root, "require", json_string(r->meta.require));
	json_object_set_new(root, "interrupted", json_boolean(r->meta.interrupted));
	json_object_set_new(root, "redacted", json_boolean(r->meta.redacted));
	json_object_set_new(root, "capture", r->meta.capture[0] ?
			    string_checked(r->meta.capture) : json_null());
	{
		static const char *const cls[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };
		const struct report_policy *pol = &r->meta.policy;
		json_t *v = json_array();

		o = json_object();
		json_object_set_new(o, "every_gpu", json_boolean(pol->every_gpu));
		json_object_set_new(o, "max_distance",
				    pol->max_distance >= 0 && pol->max_distance < 5 ?
				    json_string(cls[pol->max_distance]) : json_null());
		json_object_set_new(o, "warn_fails", json_boolean(pol->warn_fails));
		for (int i = 0; i < pol->nviolations; i++)
			json_array_append_new(v, string_checked(pol->violations[i]));
		json_object_set_new(o, "violations", v);
		json_object_set_new(root, "policy", o);
	}
	a = json_array();
	for (int i = 0; i < r->meta.nworkers; i++) {
		const struct worker_meta *w = &r->meta.workers[i];

		o = json_object();
		json_object_set_new(o, "stage", json_string(w->stage));
		json_object_set_new(o, "state", json_string(w->state));
		json_object_set_new(o, "pid", json_integer(w->pid));
		json_object_set_new(o, "duration_ms", json_real(round3(w->seconds * 1e3)));
		json_object_set_new(o, "call", string_checked(w->call));
		json_object_set_new(o, "signal", json_integer(w->signal));
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "workers", a);

	a = json_array();
	for (size_t i = 0; i < r->nsubj; i++) {
		const struct subject *s = &r->subj[i];

		o = json_object();
		json_object_set_new(o, "id", string_checked(s->id));
		json_object_set_new(o, "kind",
				    json_string(subject_kind_name(s->kind)));
		json_object_set_new(o, "label", string_checked(s->label));
		json_object_set_new(o, "pci", s->pci[0] ?
				    string_checked(s->pci) : json_null());
		json_object_set_new(o, "parent", s->parent >= 0 ?
				    json_string(r->subj[s->parent].id) :
				    json_null());
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "subjects", a);

	/* Streamed one by one by render_json: they are most of the report. */
	json_object_set_new(root, "results", json_null());

	paths = json_object();
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const struct result *d = pv->decisive >= 0 ?
					 &r->res[pv->decisive] : NULL;
		json_t *b = json_array();

		o = json_object();
		json_object_set_new(o, "verdict",
				    json_string(verdict_name(pv->verdict)));
		json_object_set_new(o, "gate", jstr_or_null(d ? d->gate : NULL));
		json_object_set_new(o, "subject", d ?
				    string_checked(r->subj[d->subject].id) :
				    json_null());
		json_object_set_new(o, "reason_code",
				    jstr_or_null(d ? d->code : NULL));
		json_object_set_new(o, "summary", string_checked(pv->summary));
		for (size_t i = 0; i < pv->nblockers; i++) {
			const struct result *bl = &r->res[pv->blockers[i]];
			json_t *e = json_object();

			json_object_set_new(e, "gate", json_string(bl->gate));
			json_object_set_new(e, "subject",
					    string_checked(r->subj[bl->subject].id));
			json_object_set_new(e, "reason_code",
					    json_string(bl->code));
			json_array_append_new(b, e);
		}
		json_object_set_new(o, "blockers", b);
		b = json_array();
		for (size_t i = 0; i < pv->nready; i++) {
			json_t *e = json_object();

			json_object_set_new(e, "gpu",
				string_checked(r->subj[pv->ready[i][0]].id));
			json_object_set_new(e, "port",
				string_checked(r->subj[pv->ready[i][1]].id));
			json_array_append_new(b, e);
		}
		json_object_set_new(o, "ready", b);
		json_object_set_new(paths, path_name((enum gdr_path)p), o);
	}
	json_object_set_new(root, "paths", paths);

	o = json_object();
	json_object_set_new(o, "status", json_string(verdict_name(r->overall)));
	json_object_set_new(o, "exit_code", json_integer(r->exit_code));
	json_object_set_new(root, "verdict", o);

	a = json_array();
	nrem = report_remedies(r, &rem);
	for (size_t i = 0; i < nrem; i++) {
		json_t *s = json_array();

		o = json_object();
		json_object_set_new(o, "gate", json_string(rem[i].gate));
		json_object_set_new(o, "status",
				    json_string(status_name(rem[i].status)));
		for (size_t j = 0; j < rem[i].nsubjects; j++)
			json_array_append_new(s,
				string_checked(r->subj[rem[i].subjects[j]].id));
		json_object_set_new(o, "subjects", s);
		json_object_set_new(o, "text", string_checked(rem[i].text));
		json_array_append_new(a, o);
	}
	report_remedies_free(rem, nrem);
	json_object_set_new(root, "remediations", a);
	json_object_set_new(root, "duration_ms",
			    json_real(round3(r->meta.total_ms)));
	return root;
}

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
		    JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

/* Dump v as jansson would at this depth: nested lines shifted by indent. */
static int dump_at(FILE *out, json_t *v, int indent)
{
	char *text = json_dumps(v, DUMP_FLAGS);
	const char *p, *nl;
	int ret = 0;

	if (!text)
		return -1;
	for (p = text; !ret && (nl = strchr(p, '\n')); p = nl + 1)
		if (fwrite(p, 1, (size_t)(nl - p) + 1, out) != (size_t)(nl - p) + 1 ||
		    fprintf(out, "%*s", indent, "") < 0)
			ret = -1;
	if (!ret && fputs(p, out) == EOF)
		ret = -1;
	free(text);
	return ret;
}

/*
 * The document is written member by member and the results one by one, so
 * a report with thousands of GPU x NIC results never exists twice in
 * memory. The bytes are the same as dumping one tree with JSON_INDENT(2).
 */
int render_json(const struct report *r, FILE *out)
{
	json_t *root = build(r), *v;
	const char *key;
	size_t n = 0, total = json_object_size(root);
	int ret = fputs("{\n", out) == EOF ? -1 : 0;

	json_object_foreach(root, key, v) {
		json_t *ks = json_string(key);
		char *k = ks ? json_dumps(ks, JSON_ENCODE_ANY) : NULL;

		json_decref(ks);
		if (ret || !k) {
			free(k);
			ret = -1;
			break;
		}
		fprintf(out, "  %s: ", k);
		free(k);
		if (!strcmp(key, "results")) {
			fputs(r->nres ? "[\n" : "[]", out);
			for (size_t i = 0; i < r->nres && !ret; i++) {
				json_t *o = result_object(r, &r->res[i]);

				fputs("    ", out);
				ret = dump_at(out, o, 4);
				json_decref(o);
				fputs(i + 1 < r->nres ? ",\n" : "\n  ]", out);
			}
		} else {
			ret = dump_at(out, v, 2);
		}
		fputs(++n < total ? ",\n" : "\n", out);
	}
	json_decref(root);
	if (fputs("}\n", out) == EOF || ferror(out))
		ret = -1;
	return ret;
}
