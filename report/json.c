// SPDX-License-Identifier: MIT
/*
 * The machine report: the same results, deterministic order, versioned.
 * Written member by member as it is walked (report/json_writer.c): a report
 * with thousands of GPU x NIC results is never held a second time as text
 * or as a tree, and nothing here allocates after the first byte.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/json_writer.h"
#include "core/result.h"

#define SCHEMA_VERSION "1.1"	/* 1.1: the nccl path and object */

static double round3(double v)
{
	return round(v * 1000.0) / 1000.0;
}

static const char *subject_id(const struct report *r, int i)
{
	return r->subj[i].id;
}

static void write_evidence(struct json_writer *w, const struct result *res)
{
	jw_open_object(w, "evidence");
	for (size_t e = 0; e < res->nev; e++) {
		const struct evidence *ev = &res->ev[e];

		switch (ev->type) {
		case EV_STR:
			jw_string(w, ev->key, ev->s);
			break;
		case EV_INT:
			jw_int(w, ev->key, ev->i);
			break;
		case EV_REAL:
			jw_real(w, ev->key, round3(ev->d));
			break;
		case EV_BOOL:
			jw_bool(w, ev->key, ev->b);
			break;
		}
	}
	jw_close_object(w);
}

static void write_result(struct json_writer *w, const struct report *r,
			 const struct result *res)
{
	jw_open_object(w, NULL);
	jw_string(w, "gate", res->gate->id);
	jw_string(w, "layer", layer_name(res->layer));
	jw_string(w, "subject", subject_id(r, res->subject));
	jw_string(w, "status", status_name(res->status));
	jw_string(w, "reason_code", res->code);
	jw_string(w, "reason", res->reason);
	jw_string_or_null(w, "remediation", res->remediation);
	write_evidence(w, res);
	jw_real(w, "duration_ms", round3(res->duration_ms));
	jw_close_object(w);
}

static void write_header(struct json_writer *w, const struct report *r)
{
	static const char *const cls[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };
	const struct report_policy *pol = &r->meta.policy;

	jw_string(w, "schema_version", SCHEMA_VERSION);
	jw_open_object(w, "tool");
	jw_string(w, "name", "gdrcheck");
	jw_string(w, "version", r->meta.tool_version);
	jw_close_object(w);
	jw_string(w, "generated_at", r->meta.generated_at);
	jw_open_object(w, "host");
	jw_string(w, "hostname", r->meta.hostname);
	jw_string(w, "kernel", r->meta.kernel);
	jw_string(w, "sysroot", r->meta.sysroot);
	jw_close_object(w);
	jw_string(w, "require", r->meta.require);
	jw_bool(w, "interrupted", r->meta.interrupted);
	jw_bool(w, "redacted", r->meta.redacted);
	jw_string_or_null(w, "capture",
			  r->meta.capture[0] ? r->meta.capture : NULL);

	jw_open_object(w, "policy");
	jw_bool(w, "every_gpu", pol->every_gpu);
	jw_string_or_null(w, "max_distance",
			  pol->max_distance >= 0 && pol->max_distance < 5 ?
			  cls[pol->max_distance] : NULL);
	jw_bool(w, "warn_fails", pol->warn_fails);
	jw_open_array(w, "violations");
	for (int i = 0; i < pol->nviolations; i++)
		jw_string(w, NULL, pol->violations[i]);
	jw_close_array(w);
	jw_close_object(w);

	jw_open_array(w, "workers");
	for (int i = 0; i < r->meta.nworkers; i++) {
		const struct worker_meta *wm = &r->meta.workers[i];

		jw_open_object(w, NULL);
		jw_string(w, "stage", wm->stage);
		jw_string(w, "state", wm->state);
		jw_int(w, "pid", wm->pid);
		jw_real(w, "duration_ms", round3(wm->seconds * 1e3));
		jw_string(w, "call", wm->call);
		jw_int(w, "signal", wm->signal);
		jw_close_object(w);
	}
	jw_close_array(w);
}

static void write_subjects(struct json_writer *w, const struct report *r)
{
	jw_open_array(w, "subjects");
	for (size_t i = 0; i < r->nsubj; i++) {
		const struct subject *s = &r->subj[i];

		jw_open_object(w, NULL);
		jw_string(w, "id", s->id);
		jw_string(w, "kind", subject_kind_name(s->kind));
		jw_string(w, "label", s->label);
		jw_string_or_null(w, "pci", s->pci[0] ? s->pci : NULL);
		jw_string_or_null(w, "parent", s->parent >= 0 ?
				  subject_id(r, s->parent) : NULL);
		jw_close_object(w);
	}
	jw_close_array(w);
}

static void write_paths(struct json_writer *w, const struct report *r)
{
	jw_open_object(w, "paths");
	for (int p = 0; p < PATH_COUNT; p++) {
		const struct path_verdict *pv = &r->path[p];
		const struct result *d = pv->decisive >= 0 ?
					 &r->res[pv->decisive] : NULL;

		jw_open_object(w, path_name((enum gdr_path)p));
		jw_string(w, "verdict", verdict_name(pv->verdict));
		jw_string_or_null(w, "gate", d ? d->gate->id : NULL);
		jw_string_or_null(w, "subject",
				  d ? subject_id(r, d->subject) : NULL);
		jw_string_or_null(w, "reason_code", d ? d->code : NULL);
		jw_string(w, "summary", pv->summary);
		jw_open_array(w, "blockers");
		for (size_t i = 0; i < pv->nblockers; i++) {
			const struct result *bl = &r->res[pv->blockers[i]];

			jw_open_object(w, NULL);
			jw_string(w, "gate", bl->gate->id);
			jw_string(w, "subject", subject_id(r, bl->subject));
			jw_string(w, "reason_code", bl->code);
			jw_close_object(w);
		}
		jw_close_array(w);
		jw_open_array(w, "ready");
		for (size_t i = 0; i < pv->nready; i++) {
			jw_open_object(w, NULL);
			jw_string(w, "gpu", subject_id(r, pv->ready[i][0]));
			jw_string(w, "port", subject_id(r, pv->ready[i][1]));
			jw_close_object(w);
		}
		jw_close_array(w);
		jw_close_object(w);
	}
	jw_close_object(w);
}

/* What the NCCL model predicts (issue 14): the release and every rail. */
static void write_nccl(struct json_writer *w, const struct report *r)
{
	const struct nccl_facts *f = &r->nccl;

	jw_open_object(w, "nccl");
	jw_bool(w, "modelled", f->modelled);
	jw_string_or_null(w, "version", f->modelled ? f->version : NULL);
	jw_string_or_null(w, "version_source",
			  f->modelled ? f->version_source : NULL);
	jw_bool(w, "version_assumed", f->version_assumed);
	jw_open_array(w, "gpus");
	for (size_t g = 0; g < f->ngpus; g++) {
		const struct nccl_gpu_rails *gr = &f->gpus[g];

		jw_open_object(w, NULL);
		jw_string(w, "gpu", subject_id(r, gr->gpu));
		jw_open_array(w, "rails");
		for (int k = 0; k < gr->nrails; k++) {
			const struct nccl_rail *rl = &gr->rail[k];

			jw_open_object(w, NULL);
			jw_string(w, "nic", subject_id(r, rl->nic));
			jw_int(w, "port", rl->port);
			if (rl->gid_index >= 0)
				jw_int(w, "gid_index", rl->gid_index);
			else
				jw_null(w, "gid_index");
			jw_string(w, "path", rl->path);
			jw_string_or_null(w, "relay_gpu", rl->relay_gpu >= 0 ?
					  subject_id(r, rl->relay_gpu) : NULL);
			jw_bool(w, "gdr_send", rl->gdr_send);
			jw_bool(w, "gdr_recv", rl->gdr_recv);
			jw_string(w, "mechanism_send", rl->mech_send);
			jw_string(w, "mechanism_recv", rl->mech_recv);
			jw_bool(w, "no_fallback", rl->no_fallback);
			jw_string(w, "proof", rl->proof);
			jw_close_object(w);
		}
		jw_close_array(w);
		jw_close_object(w);
	}
	jw_close_array(w);
	jw_close_object(w);
}

static void write_remedies(struct json_writer *w, const struct report *r,
			   const struct remedy *rem, size_t nrem)
{
	jw_open_array(w, "remediations");
	for (size_t i = 0; i < nrem; i++) {
		jw_open_object(w, NULL);
		jw_string(w, "gate", rem[i].gate);
		jw_string(w, "status", status_name(rem[i].status));
		jw_open_array(w, "subjects");
		for (size_t j = 0; j < rem[i].nsubjects; j++)
			jw_string(w, NULL, subject_id(r, rem[i].subjects[j]));
		jw_close_array(w);
		jw_string(w, "text", rem[i].text);
		jw_close_object(w);
	}
	jw_close_array(w);
}

int render_json(const struct report *r, FILE *out)
{
	struct json_writer w;
	struct remedy *rem;
	/* The one allocation, made before the first byte is written. */
	size_t nrem = report_remedies(r, &rem);
	int ret;

	jw_init(&w, out);
	jw_open_object(&w, NULL);
	write_header(&w, r);
	write_subjects(&w, r);
	jw_open_array(&w, "results");
	for (size_t i = 0; i < r->nres; i++)
		write_result(&w, r, &r->res[i]);
	jw_close_array(&w);
	write_paths(&w, r);
	write_nccl(&w, r);
	jw_open_object(&w, "verdict");
	jw_string(&w, "status", verdict_name(r->overall));
	jw_int(&w, "exit_code", r->exit_code);
	jw_close_object(&w);
	write_remedies(&w, r, rem, nrem);
	jw_real(&w, "duration_ms", round3(r->meta.total_ms));
	jw_close_object(&w);
	ret = jw_finish(&w);
	report_remedies_free(rem, nrem);
	return ret;
}
