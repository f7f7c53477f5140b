// SPDX-License-Identifier: MIT
#include "report/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/xalloc.h"

static char *__attribute__((format(printf, 1, 0)))
xvasprintf(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0) {
		fputs("gdrcheck: out of memory\n", stderr);
		exit(3);
	}
	return s;
}

void report_init(struct report *r)
{
	memset(r, 0, sizeof(*r));
	for (int p = 0; p < PATH_COUNT; p++)
		r->path[p].decisive = -1;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];

		free(res->reason);
		free(res->remediation);
		for (size_t e = 0; e < res->nev; e++) {
			free(res->ev[e].key);
			free(res->ev[e].s);
		}
		free(res->ev);
	}
	free(r->res);
	free(r->subj);
	for (int p = 0; p < PATH_COUNT; p++) {
		free(r->path[p].blockers);
		free(r->path[p].ready);
	}
	memset(r, 0, sizeof(*r));
}

int report_subject(struct report *r, enum subject_kind kind, const char *id,
		   const char *label, const char *pci, int parent)
{
	struct subject *s;

	r->subj = xrealloc(r->subj, (r->nsubj + 1) * sizeof(*r->subj));
	s = &r->subj[r->nsubj];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->label, sizeof(s->label), "%s", label ? label : "");
	snprintf(s->pci, sizeof(s->pci), "%s", pci ? pci : "");
	s->parent = parent;
	s->pair_gpu = -1;
	s->pair_nic = -1;
	return (int)r->nsubj++;
}

struct result *report_add(struct report *r, const char *gate,
			  enum gdr_layer layer, unsigned int paths,
			  int subject, enum gdr_status st, const char *code,
			  const char *fmt, ...)
{
	struct result *res;
	va_list ap;

	r->res = xrealloc(r->res, (r->nres + 1) * sizeof(*r->res));
	res = &r->res[r->nres++];
	memset(res, 0, sizeof(*res));
	res->gate = gate;
	res->layer = layer;
	res->paths = paths;
	res->subject = subject;
	res->status = st;
	res->code = code;
	va_start(ap, fmt);
	res->reason = xvasprintf(fmt, ap);
	va_end(ap);
	return res;
}

void result_remedy(struct result *res, const char *fmt, ...)
{
	va_list ap;

	free(res->remediation);
	va_start(ap, fmt);
	res->remediation = xvasprintf(fmt, ap);
	va_end(ap);
}

static struct evidence *ev_new(struct result *res, const char *key,
			       enum ev_type type)
{
	struct evidence *e;

	res->ev = xrealloc(res->ev, (res->nev + 1) * sizeof(*res->ev));
	e = &res->ev[res->nev++];
	memset(e, 0, sizeof(*e));
	e->key = xstrdup(key);
	e->type = type;
	return e;
}

void ev_str(struct result *res, const char *key, const char *fmt, ...)
{
	struct evidence *e = ev_new(res, key, EV_STR);
	va_list ap;

	va_start(ap, fmt);
	e->s = xvasprintf(fmt, ap);
	va_end(ap);
}

void ev_int(struct result *res, const char *key, long long val)
{
	ev_new(res, key, EV_INT)->i = val;
}

void ev_bool(struct result *res, const char *key, bool val)
{
	ev_new(res, key, EV_BOOL)->b = val;
}

void ev_real(struct result *res, const char *key, double val)
{
	ev_new(res, key, EV_REAL)->d = val;
}

const char *status_name(enum gdr_status st)
{
	static const char *const names[] = {
		[ST_PASS] = "PASS", [ST_WARN] = "WARN",
		[ST_BLOCKED] = "BLOCKED", [ST_SKIP] = "SKIP",
		[ST_ERROR] = "ERROR",
	};

	return (unsigned int)st < sizeof(names) / sizeof(names[0]) ?
	       names[st] : "?";
}

const char *layer_name(enum gdr_layer l)
{
	static const char *const names[] = {
		[L_HOST] = "host", [L_GPU] = "gpu", [L_NIC] = "nic",
		[L_MECHANISM] = "mechanism", [L_TOPOLOGY] = "topology",
		[L_PLATFORM] = "platform", [L_REGISTRATION] = "registration",
		[L_DATAPATH] = "datapath",
	};

	return (unsigned int)l < L_COUNT ? names[l] : "?";
}

const char *path_name(enum gdr_path p)
{
	return p == PATH_DMABUF ? "dmabuf" : p == PATH_PEERMEM ? "peermem" : "?";
}

const char *verdict_name(enum verdict v)
{
	return v == V_READY ? "READY" : v == V_BLOCKED ? "BLOCKED" : "UNKNOWN";
}

const char *subject_kind_name(enum subject_kind k)
{
	static const char *const names[] = {
		[SUBJ_HOST] = "host", [SUBJ_GPU] = "gpu", [SUBJ_NIC] = "nic",
		[SUBJ_PORT] = "port", [SUBJ_PAIR] = "pair",
	};

	return (unsigned int)k <= SUBJ_PAIR ? names[k] : "?";
}
