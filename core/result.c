// SPDX-License-Identifier: MIT
#include "core/result.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/xalloc.h"

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

/*
 * Under AddressSanitizer the free part of a block is poisoned and every
 * allocation is followed by a poisoned red zone, so an overrun from one
 * string into the next is reported as it would be between mallocs.
 */
#if defined(__SANITIZE_ADDRESS__)
#define BLOCKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BLOCKS_ASAN 1
#endif
#endif
#ifdef BLOCKS_ASAN
#include <sanitizer/asan_interface.h>
#define REDZONE 16
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define REDZONE 0
#endif

static void __attribute__((noreturn)) out_of_memory(void)
{
	fputs("gdrcheck: out of memory\n", stderr);
	exit(3);
}

/* The newest block of a chain, with room for n more bytes. */
static struct strblock *block_with_room(struct strblock **chain, size_t n)
{
	struct strblock *b = *chain;

	if (b && b->size - b->used >= n)
		return b;
	b = xrealloc(NULL, sizeof(*b) + (n > STRBLOCK_SIZE ? n : STRBLOCK_SIZE));
	b->size = n > STRBLOCK_SIZE ? n : STRBLOCK_SIZE;
	b->used = 0;
	b->next = *chain;
	*chain = b;
	ASAN_POISON_MEMORY_REGION(b->data, b->size);
	return b;
}

static void *chain_alloc(struct strblock **chain, size_t n)
{
	size_t room = ((n + STR_ALIGN - 1) & ~(STR_ALIGN - 1)) + REDZONE;
	struct strblock *b = block_with_room(chain, room);
	void *p = b->data + b->used;

	ASAN_UNPOISON_MEMORY_REGION(p, n);
	b->used += room;
	return p;
}

static void chain_free(struct strblock **chain)
{
	while (*chain) {
		struct strblock *next = (*chain)->next;

		free(*chain);
		*chain = next;
	}
}

void *report_alloc(struct report *r, size_t n)
{
	return chain_alloc(&r->strings, n);
}

int report_safe_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!*p)
		return 0;
	if (*p < 0x80)
		return *p < 0x20 || *p == 0x7f ? -1 : 1;
	n = utf8_sequence(p);
	if (!n)
		return -1;
	/* C1 controls (U+0080..U+009F): 0xc2 0x80..0x9f. */
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return -1;
	/* U+FFFE, U+FFFF: not characters, forbidden in XML. */
	if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return -1;
	return (int)n;
}

bool report_is_clean(const char *s)
{
	int n;

	while ((n = report_safe_seq(s)) > 0)
		s += n;
	return n == 0;
}

size_t report_clean(char *dst, size_t size, const char *s)
{
	size_t len = 0, kept = 0;
	int n;

	while ((n = report_safe_seq(s))) {
		const char *piece = s;
		size_t k = (size_t)n;
		char esc[5];

		if (n < 0) {
			snprintf(esc, sizeof(esc), "\\x%02X",
				 *(const unsigned char *)s);
			piece = esc;
			k = 4;
			n = 1;
		}
		/* Once something did not fit, nothing after it is kept. */
		if (kept == len && len + k < size) {
			memcpy(dst + len, piece, k);
			kept += k;
		}
		len += k;
		s += n;
	}
	if (size)
		dst[kept] = '\0';
	return len;
}

/* s, in a block, cleaned by the rule: s itself when it passes. */
static char *clean_copy(struct report *r, char *s)
{
	size_t n;
	char *p;

	if (report_is_clean(s))
		return s;
	n = report_clean(NULL, 0, s) + 1;
	p = report_alloc(r, n);
	report_clean(p, n, s);
	return p;		/* the raw copy stays in its block */
}

static char *__attribute__((format(printf, 2, 0)))
raw_vprintf(struct report *r, const char *fmt, va_list ap)
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
	if (room > REDZONE)
		room -= REDZONE;
	else
		room = 0;
	if (room)
		ASAN_UNPOISON_MEMORY_REGION(b->data + b->used, room);
	va_copy(again, ap);
	n = vsnprintf(room ? b->data + b->used : NULL, room, fmt, again);
	va_end(again);
	if (n < 0)
		out_of_memory();
	if ((size_t)n < room) {
		p = b->data + b->used;
		b->used += (((size_t)n + STR_ALIGN) & ~(STR_ALIGN - 1)) + REDZONE;
		ASAN_POISON_MEMORY_REGION(p + n + 1, b->data + b->size - (p + n + 1));
		return p;
	}
	if (room)
		ASAN_POISON_MEMORY_REGION(b->data + b->used, room);
	p = report_alloc(r, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

/* Every string of the model is made here, and cleaned here. */
static char *__attribute__((format(printf, 2, 0)))
report_vprintf(struct report *r, const char *fmt, va_list ap)
{
	return clean_copy(r, raw_vprintf(r, fmt, ap));
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
	chain_free(&r->strings);
	chain_free(&r->evidence);
	free(r->res);
	free(r->subj);
	free(r->subj_slots);
	free(r->facts);
	for (int p = 0; p < PATH_COUNT; p++) {
		free(r->path[p].blockers);
		free(r->path[p].ready);
	}
	memset(r, 0, sizeof(*r));
}

static size_t key_hash(const char *key);

/* The id hash slot of id: where it is, or the free slot it would take. */
static int *subject_slot(const struct report *r, const char *id)
{
	size_t mask = r->subj_slots_cap - 1;
	size_t i = key_hash(id) & mask;

	while (r->subj_slots[i] && strcmp(r->subj[r->subj_slots[i] - 1].id, id))
		i = (i + 1) & mask;
	return &r->subj_slots[i];
}

/* Room in the id hash for one more subject: doubles at half full. */
static void subject_slots_grow(struct report *r)
{
	size_t cap;

	if (r->nsubj + 1 <= r->subj_slots_cap / 2)
		return;
	cap = r->subj_slots_cap ? 2 * r->subj_slots_cap : 64;
	free(r->subj_slots);
	r->subj_slots = xcalloc(cap, sizeof(*r->subj_slots));
	r->subj_slots_cap = cap;
	for (size_t i = 0; i < r->nsubj; i++)
		*subject_slot(r, r->subj[i].id) = (int)i + 1;
}

/*
 * id, cleaned, in s->id; when that is taken (or id was cut to fit), the
 * first free "<id>#N", the id shortened to leave room for the suffix.
 */
static void subject_unique_id(struct report *r, struct subject *s,
			      const char *id)
{
	char base[sizeof(s->id)];
	size_t len = report_clean(base, sizeof(base), id);

	memcpy(s->id, base, sizeof(base));
	if (len < sizeof(base) && !*subject_slot(r, s->id))
		return;
	for (unsigned int n = 2;; n++) {
		char suffix[16];
		size_t k = (size_t)snprintf(suffix, sizeof(suffix), "#%u", n);
		size_t keep = strlen(base);

		if (keep + k >= sizeof(s->id))
			keep = sizeof(s->id) - 1 - k;
		/* Never cut a sequence or an escape in two. */
		report_clean(s->id, keep + 1, base);
		keep = strlen(s->id);
		memcpy(s->id + keep, suffix, k + 1);
		if (!*subject_slot(r, s->id))
			return;
	}
}

static const struct pair_fact unknown_fact = {
	.distance = TOPO_UNKNOWN,
	.gdr = PAIR_GDR_UNKNOWN,
	.acs = PAIR_ACS_UNKNOWN,
	.distance_result = -1,
	.gdr_result = -1,
	.acs_result = -1,
};

int report_subject(struct report *r, enum subject_kind kind, const char *id,
		   const char *label, const char *pci, int parent)
{
	struct subject *s;

	subject_slots_grow(r);
	r->subj = grow(r->subj, r->nsubj, sizeof(*r->subj));
	s = &r->subj[r->nsubj];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	subject_unique_id(r, s, id ? id : "");
	report_clean(s->label, sizeof(s->label), label ? label : "");
	report_clean(s->pci, sizeof(s->pci), pci ? pci : "");
	s->parent = parent;
	s->pair_gpu = -1;
	s->pair_nic = -1;
	s->fact = -1;
	if (kind == SUBJ_PAIR) {
		r->facts = grow(r->facts, r->nfacts, sizeof(*r->facts));
		r->facts[r->nfacts] = unknown_fact;
		s->fact = (int)r->nfacts++;
	}
	*subject_slot(r, s->id) = (int)r->nsubj + 1;
	return (int)r->nsubj++;
}

void report_subject_uuid(struct report *r, int subject, const char *uuid)
{
	struct subject *s = &r->subj[subject];

	report_clean(s->uuid, sizeof(s->uuid), uuid ? uuid : "");
}

void report_subject_iommu_group(struct report *r, int subject,
				const char *group)
{
	struct subject *s = &r->subj[subject];

	report_clean(s->iommu_group, sizeof(s->iommu_group), group);
}

struct result *report_vadd(struct report *r, const struct gate_desc *gate,
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
	res->code_index = -1;
	res->fold_rep = -1;
	res->fold_next = -1;
	res->fold_n = 1;
	res->reason = report_vprintf(r, fmt, ap);
	return res;
}

struct result *report_add(struct report *r, const struct gate_desc *gate,
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

void result_vremedy(struct result *res, const char *fmt, va_list ap)
{
	res->remediation = report_vprintf(res->rep, fmt, ap);
}

void result_remedy(struct result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	result_vremedy(res, fmt, ap);
	va_end(ap);
}

/*
 * Evidence keys repeat in every result of a gate (and there are 4096 pairs
 * on a 64 x 64 node): each distinct key is stored once, in an open
 * addressing table of the report that doubles at 3/4 full, so equal keys
 * are equal pointers.
 */
static size_t key_hash(const char *key)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

static const char **key_slot(const char **table, size_t cap, const char *key)
{
	size_t i = key_hash(key) & (cap - 1);

	while (table[i] && strcmp(table[i], key))
		i = (i + 1) & (cap - 1);
	return &table[i];
}

static const char *intern_key(struct report *r, const char *key)
{
	const char **slot;
	size_t len;

	if (r->nkeys + 1 > r->keys_cap / 4 * 3) {
		size_t cap = r->keys_cap ? 2 * r->keys_cap : 256;
		const char **t = report_alloc(r, cap * sizeof(*t));

		memset(t, 0, cap * sizeof(*t));
		for (size_t i = 0; i < r->keys_cap; i++)
			if (r->keys[i])
				*key_slot(t, cap, r->keys[i]) = r->keys[i];
		r->keys = t;	/* the old table stays in its block */
		r->keys_cap = cap;
	}
	slot = key_slot(r->keys, r->keys_cap, key);
	if (!*slot) {
		len = strlen(key) + 1;
		*slot = memcpy(report_alloc(r, len), key, len);
		r->nkeys++;
	}
	return *slot;
}

/*
 * Room for one more evidence item. Evidence arrays have blocks of their
 * own, apart from the strings: a result's evidence is recorded right after
 * the result, so its array is the last thing in the newest block and grows
 * in place, one item at a time. Otherwise (evidence added to an older
 * result) the array moves, the old copy left behind.
 */
static struct evidence *ev_slot(struct result *res)
{
	struct strblock *b = res->rep->evidence;
	const size_t size = sizeof(struct evidence);
	struct evidence *v;

	if (res->nev && b && (char *)(res->ev + res->nev) == b->data + b->used &&
	    b->size - b->used >= size) {
		ASAN_UNPOISON_MEMORY_REGION(b->data + b->used, size);
		b->used += size;
		return &res->ev[res->nev++];
	}
	v = chain_alloc(&res->rep->evidence, (res->nev + 1) * size);
	if (res->nev)
		memcpy(v, res->ev, res->nev * size);
	res->ev = v;
	return &res->ev[res->nev++];
}

static struct evidence *ev_new(struct result *res, const char *key,
			       enum ev_type type)
{
	const char *k = intern_key(res->rep, key);
	struct evidence *e;

	for (size_t i = 0; i < res->nev; i++) {
		e = &res->ev[i];
		if (e->key == k) {
			e->type = type;
			return e;
		}
	}
	e = ev_slot(res);
	memset(e, 0, sizeof(*e));
	e->key = k;
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

const char *ev_find_str(const struct result *res, const char *key)
{
	for (size_t e = 0; res && e < res->nev; e++)
		if (res->ev[e].type == EV_STR && !strcmp(res->ev[e].key, key))
			return res->ev[e].s;
	return NULL;
}

long long ev_find_int(const struct result *res, const char *key,
		      long long deflt)
{
	for (size_t e = 0; res && e < res->nev; e++)
		if (res->ev[e].type == EV_INT && !strcmp(res->ev[e].key, key))
			return res->ev[e].i;
	return deflt;
}

const struct pair_fact *report_pair_fact(const struct report *r, int subject)
{
	if (subject < 0 || (size_t)subject >= r->nsubj ||
	    r->subj[subject].fact < 0 ||
	    (size_t)r->subj[subject].fact >= r->nfacts)
		return &unknown_fact;
	return &r->facts[r->subj[subject].fact];
}

/* The writable facts of res's subject; NULL (a bug, said) if no pair. */
static struct pair_fact *fact_of(struct result *res)
{
	const struct subject *s = &res->rep->subj[res->subject];

	if (s->fact < 0) {
		fprintf(stderr, "gdrcheck: internal error: pair fact on %s, "
			"not a pair\n", s->id);
		return NULL;
	}
	return &res->rep->facts[s->fact];
}

static int result_index(const struct result *res)
{
	return (int)(res - res->rep->res);
}

void fact_distance(struct result *res, enum topo_class c)
{
	struct pair_fact *f = fact_of(res);

	if (!f)
		return;
	f->distance = c;
	f->distance_result = result_index(res);
}

void fact_gdr(struct result *res, enum pair_gdr g)
{
	struct pair_fact *f = fact_of(res);

	if (!f)
		return;
	f->gdr = g;
	f->gdr_result = result_index(res);
}

void fact_acs(struct result *res, enum pair_acs a)
{
	struct pair_fact *f = fact_of(res);

	if (!f)
		return;
	f->acs = a;
	f->acs_result = result_index(res);
}

void pair_grid_build(const struct report *r, struct pair_grid *g)
{
	memset(g, 0, sizeof(*g));
	g->row = xcalloc(r->nsubj, sizeof(*g->row));
	g->col = xcalloc(r->nsubj, sizeof(*g->col));
	g->gpus = xcalloc(r->nsubj, sizeof(*g->gpus));
	g->nics = xcalloc(r->nsubj, sizeof(*g->nics));
	for (size_t i = 0; i < r->nsubj; i++) {
		g->row[i] = g->col[i] = -1;
		if (r->subj[i].kind == SUBJ_GPU) {
			g->row[i] = (int)g->ngpu;
			g->gpus[g->ngpu++] = (int)i;
		} else if (r->subj[i].kind == SUBJ_NIC) {
			g->col[i] = (int)g->nnic;
			g->nics[g->nnic++] = (int)i;
		}
	}
	g->pair = xcalloc(g->ngpu * g->nnic, sizeof(*g->pair));
	for (size_t i = 0; i < g->ngpu * g->nnic; i++)
		g->pair[i] = -1;
	for (size_t i = 0; i < r->nsubj; i++) {
		const struct subject *s = &r->subj[i];

		if (s->kind == SUBJ_PAIR && s->pair_gpu >= 0 && s->pair_nic >= 0 &&
		    g->row[s->pair_gpu] >= 0 && g->col[s->pair_nic] >= 0)
			g->pair[(size_t)g->row[s->pair_gpu] * g->nnic +
				(size_t)g->col[s->pair_nic]] = (int)i;
	}
}

int pair_grid_find(const struct pair_grid *g, int gpu, int nic)
{
	if (g->row[gpu] < 0 || g->col[nic] < 0)
		return -1;
	return g->pair[(size_t)g->row[gpu] * g->nnic + (size_t)g->col[nic]];
}

void pair_grid_free(struct pair_grid *g)
{
	free(g->row);
	free(g->col);
	free(g->gpus);
	free(g->nics);
	free(g->pair);
}

const struct pair_fact *pair_grid_fact(const struct report *r,
				       const struct pair_grid *g,
				       size_t row, size_t col)
{
	return report_pair_fact(r, g->pair[row * g->nnic + col]);
}
