// SPDX-License-Identifier: MIT
#include "report/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/xalloc.h"

/*
 * The report's strings (reasons, remediations, evidence keys and values)
 * and evidence arrays live in large blocks freed together: a 64 GPU x 64
 * NIC node has tens of thousands of short strings, and one malloc each was
 * a third of the time spent building the model.
 */
struct strblock {
	struct strblock *next;
	size_t used, size;
	char data[];
};

#define STRBLOCK_SIZE (64 * 1024 - sizeof(struct strblock))
#define STR_ALIGN sizeof(void *)

static void __attribute__((noreturn)) out_of_memory(void)
{
	fputs("gdrcheck: out of memory\n", stderr);
	exit(3);
}

/* The current block, with room for n more bytes. */
static struct strblock *block_with_room(struct report *r, size_t n)
{
	struct strblock *b = r->strings;

	if (b && b->size - b->used >= n)
		return b;
	b = xrealloc(NULL, sizeof(*b) + (n > STRBLOCK_SIZE ? n : STRBLOCK_SIZE));
	b->size = n > STRBLOCK_SIZE ? n : STRBLOCK_SIZE;
	b->used = 0;
	b->next = r->strings;
	r->strings = b;
	return b;
}

void *report_alloc(struct report *r, size_t n)
{
	struct strblock *b;
	void *p;

	n = (n + STR_ALIGN - 1) & ~(STR_ALIGN - 1);
	b = block_with_room(r, n);
	p = b->data + b->used;
	b->used += n;
	return p;
}

char *report_vprintf(struct report *r, const char *fmt, va_list ap)
{
	struct strblock *b = r->strings;
	size_t room = b ? b->size - b->used : 0;
	va_list again;
	char *p;
	int n;

	/* "%s", the commonest format: a copy, no printf. */
	if (fmt[0] == '%' && fmt[1] == 's' && !fmt[2]) {
		const char *s;
		size_t len;

		va_copy(again, ap);
		s = va_arg(again, const char *);
		va_end(again);
		if (!s)
			s = "(null)";	/* what glibc's printf would say */
		len = strlen(s) + 1;
		return memcpy(report_alloc(r, len), s, len);
	}
	/* Straight into the current block when it fits, else measured. */
	va_copy(again, ap);
	n = vsnprintf(room ? b->data + b->used : NULL, room, fmt, again);
	va_end(again);
	if (n < 0)
		out_of_memory();
	if ((size_t)n < room) {
		p = b->data + b->used;
		b->used += ((size_t)n + STR_ALIGN) & ~(STR_ALIGN - 1);
		return p;
	}
	p = report_alloc(r, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *report_printf(struct report *r, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = report_vprintf(r, fmt, ap);
	va_end(ap);
	return p;
}

/*
 * The array holding n elements, with room for one more. Arrays double from
 * 4, so they are full exactly when n is 0 or a power of two from 4 on: no
 * capacity to keep. Results number in the tens of thousands on a 64 GPU x
 * 64 NIC node.
 */
static bool is_full(size_t n)
{
	return n == 0 || (n >= 4 && !(n & (n - 1)));
}

static void *grow(void *v, size_t n, size_t size)
{
	return is_full(n) ? xrealloc(v, (n ? 2 * n : 4) * size) : v;
}

void report_init(struct report *r)
{
	memset(r, 0, sizeof(*r));
	for (int p = 0; p < PATH_COUNT; p++)
		r->path[p].decisive = -1;
}

void report_free(struct report *r)
{
	while (r->strings) {
		struct strblock *next = r->strings->next;

		free(r->strings);
		r->strings = next;
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

	r->subj = grow(r->subj, r->nsubj, sizeof(*r->subj));
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

struct result *report_vadd(struct report *r, const char *gate,
			   enum gdr_layer layer, unsigned int paths,
			   int subject, enum gdr_status st, const char *code,
			   const char *fmt, va_list ap)
{
	struct result *res;

	r->res = grow(r->res, r->nres, sizeof(*r->res));
	res = &r->res[r->nres++];
	memset(res, 0, sizeof(*res));
	res->rep = r;
	res->gate = gate;
	res->layer = layer;
	res->paths = paths;
	res->subject = subject;
	res->status = st;
	res->code = code;
	res->reason = report_vprintf(r, fmt, ap);
	return res;
}

struct result *report_add(struct report *r, const char *gate,
			  enum gdr_layer layer, unsigned int paths,
			  int subject, enum gdr_status st, const char *code,
			  const char *fmt, ...)
{
	struct result *res;
	va_list ap;

	va_start(ap, fmt);
	res = report_vadd(r, gate, layer, paths, subject, st, code, fmt, ap);
	va_end(ap);
	return res;
}

void result_remedy(struct result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	res->remediation = report_vprintf(res->rep, fmt, ap);
	va_end(ap);
}

static struct evidence *ev_new(struct result *res, const char *key,
			       enum ev_type type)
{
	struct evidence *e;
	size_t len;

	for (size_t i = 0; i < res->nev; i++) {
		e = &res->ev[i];
		if (e->key[0] == key[0] && !strcmp(e->key, key)) {
			e->type = type;
			return e;
		}
	}
	/* The same doubling as grow(), the old array left in the block. */
	if (is_full(res->nev)) {
		struct evidence *v = report_alloc(res->rep, (res->nev ?
					2 * res->nev : 4) * sizeof(*v));

		if (res->nev)
			memcpy(v, res->ev, res->nev * sizeof(*v));
		res->ev = v;
	}
	e = &res->ev[res->nev++];
	memset(e, 0, sizeof(*e));
	len = strlen(key) + 1;
	e->key = memcpy(report_alloc(res->rep, len), key, len);
	e->type = type;
	return e;
}

void ev_str(struct result *res, const char *key, const char *fmt, ...)
{
	struct evidence *e = ev_new(res, key, EV_STR);
	va_list ap;

	va_start(ap, fmt);
	e->s = report_vprintf(res->rep, fmt, ap);
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
