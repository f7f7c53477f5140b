// SPDX-License-Identifier: MIT
/*
 * The machine report: the same results, deterministic order, versioned.
 * Encoded by jansson one piece at a time (report/json_out.h): each
 * top-level member, and each element of the large ones (subjects, results,
 * paths), is one json_t built, dumped into the buffered output and freed,
 * so a report with
 * thousands of GPU x NIC results is never held a second time as text or as
 * a whole tree. The bytes are those json_dumps(JSON_INDENT(2)) gives the
 * whole document.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/json_out.h"
#include "core/result.h"

#define SCHEMA_VERSION "2.6"	/* 2.1: the nccl path and object;
				 * 2.2: a GPU subject's uuid;
				 * 2.3: require_source, nccl.found;
				 * 2.4: inventory (versions, NIC kinds);
				 * 2.5: a rail's nccl_device, fused_ports,
				 *      proof "registered";
				 * 2.6: a result's subjects (equal pair
				 *      results folded), a GPU's and a
				 *      NIC's iommu_group; the peer object
				 *      and layer (two-node mode) */

/* Keys here are ASCII literals: jansson need not check them. */
static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new_nocheck(o, key, v) ? 1 : 0;
}

static int set_str(json_t *o, const char *key, const char *s)
{
	return set(o, key, jo_string(s));
}

static int set_str_or_null(json_t *o, const char *key, const char *s)
{
	return set(o, key, jo_string_or_null(s));
}

static int set_int(json_t *o, const char *key, long long v)
{
	return set(o, key, json_integer(v));
}

static int set_real(json_t *o, const char *key, double v)
{
	return set(o, key, jo_real(v));
}

static int set_bool(json_t *o, const char *key, bool v)
{
	return set(o, key, json_boolean(v));
}

/* o itself when every member went in, NULL (o freed) when one failed. */
static json_t *done(json_t *o, int bad)
{
	if (bad && o) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Appends v (stolen); 1 when it failed. */
static int append(json_t *a, json_t *v)
{
	return json_array_append_new(a, v) ? 1 : 0;
}

static double round3(double v)
{
	return round(v * 1000.0) / 1000.0;
}

static const char *subject_id(const struct report *r, int i)
{
	return r->subj[i].id;
}

static json_t *evidence(const struct result *res)
{
	json_t *o = json_object();
	int bad = !o;

	for (size_t e = 0; o && e < res->nev; e++) {
		const struct evidence *ev = &res->ev[e];
		json_t *v = NULL;

		switch (ev->type) {
		case EV_STR:
			v = jo_string(ev->s);
			break;
		case EV_INT:
			v = json_integer(ev->i);
			break;
		case EV_REAL:
			v = jo_real(round3(ev->d));
			break;
		case EV_BOOL:
			v = json_boolean(ev->b);
			break;
		}
		bad |= jo_set(o, ev->key, v) ? 1 : 0;
	}
	return done(o, bad);
}

static json_t *result_json(const struct report *r, const struct result *res)
{
	json_t *o = json_object();
	int bad = !o;

	if (!o)
		return NULL;
	bad |= set_str(o, "gate", res->gate->id);
	bad |= set_str(o, "layer", layer_name(res->layer));
	bad |= set_str(o, "subject", subject_id(r, res->subject));
	bad |= set_str(o, "status", status_name(res->status));
	bad |= set_str(o, "reason_code", res->code);
	bad |= set_str(o, "reason", res->reason);
	bad |= set_str_or_null(o, "remediation", res->remediation);
	bad |= set(o, "evidence", evidence(res));
	bad |= set_real(o, "duration_ms", round3(res->duration_ms));
	return done(o, bad);
}

/*
 * A folded group (core/fold.c): its first result, with every subject it
 * stands for in "subjects" (the first is "subject") and their time summed.
 */
static json_t *group_json(const struct report *r, size_t i)
{
	const struct result *res = &r->res[i];
	json_t *o = result_json(r, res), *list;
	double ms = 0;
	int bad = !o;

	if (!o || res->fold_n < 2)
		return o;
	list = json_array();
	bad |= !list;
	for (int k = (int)i; list && k >= 0; k = r->res[k].fold_next) {
		bad |= append(list, jo_string(subject_id(r, r->res[k].subject)));
		ms += r->res[k].duration_ms;
	}
	bad |= set(o, "subjects", list);
	bad |= set_real(o, "duration_ms", round3(ms));
	return done(o, bad);
}


static json_t *tool_json(const struct report *r)
{
	json_t *o = json_object();
	int bad = !o;

	if (!o)
		return NULL;
	bad |= set_str(o, "name", "gdrcheck");
	bad |= set_str(o, "version", r->meta.tool_version);
	return done(o, bad);
}

static json_t *host_json(const struct report *r)
{
	json_t *o = json_object();
	int bad = !o;

	if (!o)
		return NULL;
	bad |= set_str(o, "hostname", r->meta.hostname);
	bad |= set_str(o, "kernel", r->meta.kernel);
	bad |= set_str(o, "sysroot", r->meta.sysroot);
	return done(o, bad);
}

/* "" is what the run could not read: null. */
static const char *known(const char *s)
{
	return s[0] ? s : NULL;
}

static json_t *nic_kind_json(const struct report *r, const struct nic_kind *k)
{
	json_t *o = json_object(), *a = json_array();
	int bad = !o || !a;

	for (int i = 0; !bad && i < k->count; i++)
		bad |= json_array_append_new(a, jo_string(r->subj[k->nics[i]].id));
	if (bad) {
		json_decref(a);
		json_decref(o);
		return NULL;
	}
	bad |= set_str_or_null(o, "model", known(k->model));
	bad |= set_str_or_null(o, "firmware", known(k->fw));
	bad |= set_str_or_null(o, "board_id", known(k->board));
	bad |= set_str_or_null(o, "rate", known(k->rate));
	bad |= set(o, "nics", a);
	return done(o, bad);
}

/* What vendor support asks for first: versions, NIC kinds and firmware. */
static json_t *inventory_json(const struct report *r)
{
	const struct report_versions *v = &r->meta.versions;
	json_t *o = json_object(), *a = json_array();
	int bad = !o || !a;

	for (int i = 0; !bad && i < v->nnic_kinds; i++) {
		json_t *k = nic_kind_json(r, &v->nic[i]);

		bad |= !k || json_array_append_new(a, k);
	}
	if (bad) {
		json_decref(a);
		json_decref(o);
		return NULL;
	}
	bad |= set_str_or_null(o, "nvidia_driver", known(v->nvidia));
	bad |= set_str_or_null(o, "nvidia_flavour", known(v->nvidia_flavour));
	bad |= set_str_or_null(o, "cuda_driver_api", known(v->cuda));
	bad |= set_str_or_null(o, "nvml_driver", known(v->nvml));
	bad |= set_str_or_null(o, "libibverbs", known(v->libibverbs));
	bad |= set_str_or_null(o, "rdma_core", known(v->rdma_core));
	bad |= set_str_or_null(o, "mlnx_ofed", known(v->ofed));
	bad |= set_str_or_null(o, "nccl", known(r->nccl.version));
	bad |= set_bool(o, "nccl_found", r->nccl.found);
	bad |= set(o, "nic_kinds", a);
	bad |= set_int(o, "nic_kinds_not_listed", v->nic_kinds_more);
	return done(o, bad);
}

static json_t *policy_json(const struct report *r)
{
	static const char *const cls[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };
	const struct report_policy *pol = &r->meta.policy;
	json_t *o = json_object(), *a = json_array();
	int bad = !o || !a;

	if (bad) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	bad |= set_bool(o, "every_gpu", pol->every_gpu);
	bad |= set_str_or_null(o, "max_distance",
			       pol->max_distance >= 0 && pol->max_distance < 5 ?
			       cls[pol->max_distance] : NULL);
	bad |= set_bool(o, "warn_fails", pol->warn_fails);
	for (int i = 0; i < pol->nviolations; i++)
		bad |= append(a, jo_string(pol->violations[i]));
	bad |= set(o, "violations", a);
	return done(o, bad);
}

static json_t *workers_json(const struct report *r)
{
	json_t *a = json_array();
	int bad = !a;

	for (int i = 0; a && i < r->meta.nworkers; i++) {
		const struct worker_meta *wm = &r->meta.workers[i];
		json_t *o = json_object();
		int obad = !o;

		if (o) {
			obad |= set_str(o, "stage", wm->stage);
			obad |= set_str(o, "state", wm->state);
			obad |= set_int(o, "pid", wm->pid);
			obad |= set_real(o, "duration_ms",
					 round3(wm->seconds * 1e3));
			obad |= set_str(o, "call", wm->call);
			obad |= set_int(o, "signal", wm->signal);
		}
		bad |= append(a, done(o, obad));
	}
	return done(a, bad);
}

static json_t *subject_json(const struct report *r, size_t i)
{
	const struct subject *s = &r->subj[i];
	json_t *o = json_object();
	int bad = !o;

	if (!o)
		return NULL;
	bad |= set_str(o, "id", s->id);
	bad |= set_str(o, "kind", subject_kind_name(s->kind));
	bad |= set_str(o, "label", s->label);
	bad |= set_str_or_null(o, "pci", s->pci[0] ? s->pci : NULL);
	if (s->kind == SUBJ_GPU)
		bad |= set_str_or_null(o, "uuid", s->uuid[0] ? s->uuid : NULL);
	if (s->iommu_group[0])
		bad |= set_str(o, "iommu_group", s->iommu_group);
	bad |= set_str_or_null(o, "parent", s->parent >= 0 ?
			       subject_id(r, s->parent) : NULL);
	return done(o, bad);
}

static json_t *path_json(const struct report *r, const struct path_verdict *pv)
{
	const struct result *d = pv->decisive >= 0 ? &r->res[pv->decisive] : NULL;
	json_t *o = json_object(), *bl = json_array(), *ready = json_array();
	int bad = !o || !bl || !ready;

	if (bad) {
		json_decref(o);
		json_decref(bl);
		json_decref(ready);
		return NULL;
	}
	bad |= set_str(o, "verdict", verdict_name(pv->verdict));
	bad |= set_str_or_null(o, "gate", d ? d->gate->id : NULL);
	bad |= set_str_or_null(o, "subject", d ? subject_id(r, d->subject) : NULL);
	bad |= set_str_or_null(o, "reason_code", d ? d->code : NULL);
	bad |= set_str(o, "summary", pv->summary);
	for (size_t i = 0; i < pv->nblockers; i++) {
		const struct result *b = &r->res[pv->blockers[i]];
		json_t *e = json_object();
		int ebad = !e;

		if (e) {
			ebad |= set_str(e, "gate", b->gate->id);
			ebad |= set_str(e, "subject", subject_id(r, b->subject));
			ebad |= set_str(e, "reason_code", b->code);
		}
		bad |= append(bl, done(e, ebad));
	}
	bad |= set(o, "blockers", bl);
	for (size_t i = 0; i < pv->nready; i++) {
		json_t *e = json_object();
		int ebad = !e;

		if (e) {
			ebad |= set_str(e, "gpu", subject_id(r, pv->ready[i][0]));
			ebad |= set_str(e, "port", subject_id(r, pv->ready[i][1]));
		}
		bad |= append(ready, done(e, ebad));
	}
	bad |= set(o, "ready", ready);
	return done(o, bad);
}

static json_t *verdict_json(const struct report *r)
{
	json_t *o = json_object();
	int bad = !o;

	if (!o)
		return NULL;
	bad |= set_str(o, "status", verdict_name(r->overall));
	bad |= set_int(o, "exit_code", r->exit_code);
	return done(o, bad);
}

static json_t *remedies_json(const struct report *r, const struct remedy *rem,
			     size_t nrem)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; a && i < nrem; i++) {
		json_t *o = json_object(), *s = json_array();
		int obad = !o || !s;

		if (o && s) {
			obad |= set_str(o, "gate", rem[i].gate);
			obad |= set_str(o, "status", status_name(rem[i].status));
			for (size_t j = 0; j < rem[i].nsubjects; j++)
				obad |= append(s, jo_string(
					subject_id(r, rem[i].subjects[j])));
			obad |= set(o, "subjects", s);
			s = NULL;
			obad |= set_str(o, "text", rem[i].text);
		}
		json_decref(s);
		bad |= append(a, done(o, obad));
	}
	return done(a, bad);
}

/* A member of the top-level object: its key by hand (an ASCII literal). */
static void key(struct json_out *o, bool *first, const char *name)
{
	jo_raw(o, *first ? "\n  \"" : ",\n  \"");
	*first = false;
	jo_raw(o, name);
	jo_raw(o, "\": ");
}

/* ... and its value by jansson. */
static void member(struct json_out *o, bool *first, const char *name, json_t *v)
{
	key(o, first, name);
	jo_value(o, v, 1);
}

/*
 * An array member with thousands of elements (subjects, results): one
 * jansson dump per element, so no tree holds them all.
 */
static void array(struct json_out *o, bool *first, const char *name,
		  const struct report *r, size_t n,
		  json_t *(*element)(const struct report *r, size_t i))
{
	key(o, first, name);
	if (!n) {
		jo_raw(o, "[]");
		return;
	}
	jo_raw(o, "[");
	for (size_t i = 0; i < n; i++) {
		jo_raw(o, i ? ",\n    " : "\n    ");
		jo_value(o, element(r, i), 2);
	}
	jo_raw(o, "\n  ]");
}

/* The paths object: one dump per path (each may list every ready pair). */
static void paths(struct json_out *o, bool *first, const struct report *r)
{
	key(o, first, "paths");
	jo_raw(o, "{");
	for (int p = 0; p < PATH_COUNT; p++) {
		jo_raw(o, p ? ",\n    \"" : "\n    \"");
		jo_raw(o, path_name((enum gdr_path)p));
		jo_raw(o, "\": ");
		jo_value(o, path_json(r, &r->path[p]), 2);
	}
	jo_raw(o, PATH_COUNT ? "\n  }" : "}");
}

/* One rail of a GPU as the NCCL model predicts it. */
static json_t *rail_json(const struct report *r, const struct nccl_rail *rl)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	bad |= set_str(o, "nic", subject_id(r, rl->nic));
	bad |= set_str(o, "nccl_device", rl->nccl_device ? rl->nccl_device :
		       subject_id(r, rl->nic));
	bad |= set_int(o, "fused_ports", rl->fused_ports > 1 ?
		       rl->fused_ports : 1);
	bad |= set_int(o, "port", rl->port);
	bad |= set(o, "gid_index", rl->gid_index >= 0 ?
		   json_integer(rl->gid_index) : json_null());
	bad |= set_str(o, "path", rl->path);
	bad |= set_str_or_null(o, "relay_gpu", rl->relay_gpu >= 0 ?
			       subject_id(r, rl->relay_gpu) : NULL);
	bad |= set_bool(o, "gdr_send", rl->gdr_send);
	bad |= set_bool(o, "gdr_recv", rl->gdr_recv);
	bad |= set_str(o, "mechanism_send", rl->mech_send);
	bad |= set_str(o, "mechanism_recv", rl->mech_recv);
	bad |= set_bool(o, "no_fallback", rl->no_fallback);
	bad |= set_str(o, "proof", rl->proof);
	return done(o, bad);
}

/* What the NCCL model predicts (issue 14): the release and every rail. */
static json_t *nccl_json(const struct report *r)
{
	const struct nccl_facts *f = &r->nccl;
	json_t *o = json_object(), *gpus = json_array();
	int bad = !o || !gpus;

	for (size_t g = 0; !bad && g < f->ngpus; g++) {
		const struct nccl_gpu_rails *gr = &f->gpus[g];
		json_t *go = json_object(), *rails = json_array();

		bad |= !go || !rails;
		for (int k = 0; !bad && k < gr->nrails; k++)
			bad |= append(rails, rail_json(r, &gr->rail[k]));
		if (go) {
			bad |= set_str(go, "gpu", subject_id(r, gr->gpu));
			bad |= set(go, "rails", rails);
			rails = NULL;
		}
		json_decref(rails);
		bad |= append(gpus, go);
	}
	if (!o) {
		json_decref(gpus);
		return NULL;
	}
	bad |= set_bool(o, "modelled", f->modelled);
	bad |= set_str_or_null(o, "version", f->modelled ? f->version : NULL);
	bad |= set_str_or_null(o, "version_source",
			       f->modelled ? f->version_source : NULL);
	bad |= set_bool(o, "version_assumed", f->version_assumed);
	bad |= set_bool(o, "found", f->found);
	bad |= set_str_or_null(o, "found_how", f->found ? f->found_how : NULL);
	bad |= set(o, "gpus", gpus);
	return done(o, bad);
}

static json_t *peer_mech_json(const struct peer_mech_report *m)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	bad |= set_str(o, "mechanism", m->mechanism);
	bad |= set_bool(o, "verified", m->ok);
	bad |= set_bool(o, "write_ok", m->write_ok);
	bad |= set_bool(o, "read_ok", m->read_ok);
	bad |= set_bool(o, "write_verified", m->write_verified);
	bad |= set_bool(o, "read_verified", m->read_verified);
	bad |= set_bool(o, "reverse_write_verified", m->peer_write_verified);
	bad |= set_bool(o, "reverse_read_verified", m->peer_read_verified);
	bad |= set_real(o, "gbps", round3(m->gbps));
	bad |= set_real(o, "peer_gbps", round3(m->peer_gbps));
	bad |= set_real(o, "latency_us", round3(m->lat_us));
	return done(o, bad);
}

static json_t *count_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *peer_rail_json(const struct report *r,
			      const struct peer_rail_report *rr)
{
	json_t *o = json_object(), *mechs = json_array(), *c = json_object();
	int bad = !o || !mechs || !c;

	for (int i = 0; !bad && i < rr->nmech; i++)
		bad |= append(mechs, peer_mech_json(&rr->mech[i]));
	if (!o || !c) {
		json_decref(o);
		json_decref(c);
		json_decref(mechs);
		return NULL;
	}
	bad |= set_int(o, "rail", rr->rail);
	bad |= set_str_or_null(o, "gpu", rr->gpu >= 0 ?
			       subject_id(r, rr->gpu) : NULL);
	bad |= set_str_or_null(o, "nic", rr->nic[0] ? rr->nic : NULL);
	bad |= set_int(o, "port", rr->port);
	bad |= set_str_or_null(o, "peer_nic", rr->peer_nic[0] ? rr->peer_nic :
			       NULL);
	bad |= set_int(o, "peer_port", rr->peer_port);
	bad |= set(o, "gid_index", rr->gid_index >= 0 ?
		   json_integer(rr->gid_index) : json_null());
	bad |= set(o, "peer_gid_index", rr->peer_gid_index >= 0 ?
		   json_integer(rr->peer_gid_index) : json_null());
	bad |= set_int(o, "mtu", rr->mtu);
	bad |= set_int(o, "peer_mtu", rr->peer_mtu);
	bad |= set_int(o, "path_mtu", rr->path_mtu);
	bad |= set(o, "limit_gbps", rr->limit_gbps > 0 ?
		   json_real(round3(rr->limit_gbps)) : json_null());
	bad |= set(o, "ratio", rr->ratio >= 0 ? json_real(round3(rr->ratio)) :
		   json_null());
	bad |= set(c, "xmit", count_or_null(rr->xmit_bytes));
	bad |= set(c, "rcv", count_or_null(rr->rcv_bytes));
	bad |= set(c, "peer_xmit", count_or_null(rr->peer_xmit_bytes));
	bad |= set(c, "peer_rcv", count_or_null(rr->peer_rcv_bytes));
	bad |= set(o, "counters", c);
	bad |= set(o, "mechanisms", mechs);
	return done(o, bad);
}

/* Two-node mode (--listen / --peer): the other node and each rail. */
static json_t *peer_json(const struct report *r)
{
	const struct peer_report *p = &r->peer;
	json_t *o = json_object(), *rails = json_array();
	int bad = !o || !rails;

	for (int i = 0; !bad && i < p->nrails; i++)
		bad |= append(rails, peer_rail_json(r, &p->rails[i]));
	if (!o) {
		json_decref(rails);
		return NULL;
	}
	bad |= set_str(o, "role", p->role);
	bad |= set_str(o, "endpoint", p->endpoint);
	bad |= set_str(o, "status", p->status);
	bad |= set_str_or_null(o, "peer_host", p->peer_host[0] ? p->peer_host :
			       NULL);
	bad |= set_str_or_null(o, "peer_addr", p->peer_addr[0] ? p->peer_addr :
			       NULL);
	bad |= set_str_or_null(o, "peer_verdict", p->peer_verdict[0] ?
			       p->peer_verdict : NULL);
	bad |= set_str_or_null(o, "peer_summary", p->peer_summary[0] ?
			       p->peer_summary : NULL);
	bad |= set_str(o, "verdict", verdict_name(p->verdict));
	bad |= set_real(o, "min_bandwidth", p->min_bandwidth);
	bad |= set(o, "rails", rails);
	return done(o, bad);
}

/* The results array: a folded group where its first result stands. */
static void results(struct json_out *o, bool *first, const struct report *r)
{
	bool any = false;

	key(o, first, "results");
	for (size_t i = 0; i < r->nres; i++) {
		if (r->res[i].fold_rep >= 0)
			continue;
		jo_raw(o, any ? ",\n    " : "[\n    ");
		any = true;
		jo_value(o, group_json(r, i), 2);
	}
	jo_raw(o, any ? "\n  ]" : "[]");
}

int render_json(const struct report *r, FILE *out)
{
	struct json_out *o = malloc(sizeof(*o));
	struct remedy *rem;
	/* The remedies are grouped before the first byte is written. */
	size_t nrem = report_remedies(r, &rem);
	bool first = true;
	int ret;

	if (!o) {
		report_remedies_free(rem, nrem);
		return -1;
	}
	jo_init(o, out);
	jo_raw(o, "{");
	member(o, &first, "schema_version", json_string(SCHEMA_VERSION));
	member(o, &first, "tool", tool_json(r));
	member(o, &first, "generated_at", jo_string(r->meta.generated_at));
	member(o, &first, "host", host_json(r));
	member(o, &first, "inventory", inventory_json(r));
	member(o, &first, "require", jo_string(r->meta.require));
	member(o, &first, "require_source",
	       jo_string(r->meta.require_auto ? "auto" : "option"));
	member(o, &first, "interrupted", json_boolean(r->meta.interrupted));
	member(o, &first, "redacted", json_boolean(r->meta.redacted));
	member(o, &first, "capture",
	       jo_string_or_null(r->meta.capture[0] ? r->meta.capture : NULL));
	member(o, &first, "policy", policy_json(r));
	member(o, &first, "workers", workers_json(r));
	array(o, &first, "subjects", r, r->nsubj, subject_json);
	results(o, &first, r);
	paths(o, &first, r);
	member(o, &first, "nccl", nccl_json(r));
	if (r->peer.active)
		member(o, &first, "peer", peer_json(r));
	member(o, &first, "verdict", verdict_json(r));
	member(o, &first, "remediations", remedies_json(r, rem, nrem));
	member(o, &first, "duration_ms", jo_real(round3(r->meta.total_ms)));
	jo_raw(o, "\n}\n");
	ret = jo_finish(o);
	free(o);
	report_remedies_free(rem, nrem);
	return ret;
}
