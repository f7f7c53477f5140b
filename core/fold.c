// SPDX-License-Identifier: MIT
/*
 * Folding: results about GPU x NIC pairs that say the same thing are shown
 * once, with the list of their subjects. Two results fold when they are of
 * one gate and every fact is equal: status, reason code, the waiver, and
 * the reason, the remediation and each evidence value, literally or once
 * each pair's own names are replaced by placeholders (the pair's id, its
 * GPU's and its NIC's ids and PCI addresses, and their IOMMU groups where
 * the result cites them: facts of the GPU and the NIC, at their subjects).
 * A result with a measurement (an EV_REAL: times, bandwidths) is its pair's
 * own and never folds: two pairs measuring the same by chance would fold in
 * one run and not the next. The model keeps every result (the verdicts,
 * JUnit and Prometheus read them all); the text and JSON renderers show a
 * group where its first result stands, with its subjects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
#include "core/xalloc.h"

struct fbuf {
	char *p;
	size_t len, cap;
};

static void fb_put(struct fbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/*
 * The pair's own names, longest first where one holds another: its id, its
 * GPU's and NIC's PCI addresses and ids, and their IOMMU groups where the
 * result cites them as such (evidence gpu_group, nic_group equal to the
 * subject's): a number is the pair's own name only there.
 */
struct names {
	const char *s[7];
	size_t len[7];
	int n;
};

static void names_of(const struct report *r, const struct result *res,
		     struct names *nm)
{
	const struct subject *p = &r->subj[res->subject];
	const struct subject *g = &r->subj[p->pair_gpu], *c = &r->subj[p->pair_nic];
	const char *gg = ev_find_str(res, "gpu_group");
	const char *ng = ev_find_str(res, "nic_group");
	const char *all[7] = {
		p->id, g->pci, c->pci, g->id, c->id,
		gg && g->iommu_group[0] && !strcmp(gg, g->iommu_group) ?
		g->iommu_group : "",
		ng && c->iommu_group[0] && !strcmp(ng, c->iommu_group) ?
		c->iommu_group : "",
	};

	nm->n = 0;
	for (int i = 0; i < 7; i++)
		if (all[i][0]) {
			nm->s[nm->n] = all[i];
			nm->len[nm->n++] = strlen(all[i]);
		}
}

/* @s with each whole-word occurrence of the pair's names as "\x01<i>". */
static void put_norm(struct fbuf *b, const char *s, const struct names *nm)
{
	const char *run = s;

	for (const char *q = s; *q;) {
		int hit = -1;

		if (q == s || !word_char(q[-1]))
			for (int i = 0; i < nm->n && hit < 0; i++)
				if (!strncmp(q, nm->s[i], nm->len[i]) &&
				    !word_char(q[nm->len[i]]))
					hit = i;
		if (hit < 0) {
			q++;
			continue;
		}
		fb_put(b, run, (size_t)(q - run));
		fb_put(b, "\x01", 1);
		fb_put(b, &"0123456"[hit], 1);
		q += nm->len[hit];
		run = q;
	}
	fb_put(b, run, strlen(run));
}

/* Everything the report says of @res, the pair's names left out. */
static void fold_key(const struct report *r, const struct result *res,
		     bool own_names, struct fbuf *b)
{
	struct names nm = { .n = 0 };
	char num[64];

	b->len = 0;
	if (own_names)
		names_of(r, res, &nm);
	snprintf(num, sizeof(num), "%c%d|%d|%d|%d|%s|", own_names ? 'N' : 'R',
		 res->gate->index,
		 (int)res->status, res->waived, res->proof, res->code);
	fb_put(b, num, strlen(num));
	put_norm(b, res->reason, &nm);
	fb_put(b, "\x02", 1);
	if (res->remediation)
		put_norm(b, res->remediation, &nm);
	else
		fb_put(b, "\x03", 1);
	for (size_t e = 0; e < res->nev; e++) {
		const struct evidence *ev = &res->ev[e];

		fb_put(b, "\x02", 1);
		fb_put(b, ev->key, strlen(ev->key));
		if (ev->type == EV_STR) {
			fb_put(b, "=s", 2);
			put_norm(b, ev->s, &nm);
			continue;
		}
		if (ev->type == EV_INT)
			snprintf(num, sizeof(num), "=i%lld", ev->i);
		else
			snprintf(num, sizeof(num), "=b%d", ev->b);
		fb_put(b, num, strlen(num));
	}
}

static unsigned long long fnv(const char *s, size_t n)
{
	unsigned long long h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool foldable(const struct report *r, const struct result *res)
{
	const struct subject *s = &r->subj[res->subject];

	if (!res->gate || s->kind != SUBJ_PAIR || s->pair_gpu < 0 ||
	    s->pair_nic < 0)
		return false;
	for (size_t e = 0; e < res->nev; e++)
		if (res->ev[e].type == EV_REAL)
			return false;
	return true;
}

struct slot {
	unsigned long long hash;
	int rep;		/* result index + 1; 0: empty */
	bool own_names;		/* which key (fold_key) */
};

struct table {
	struct slot *t;
	size_t cap;
	struct fbuf other;
};

/* The slot of the group @key (of @res) belongs to, or the empty one. */
static struct slot *find(const struct report *r, struct table *tb,
			 const struct fbuf *key, bool own_names)
{
	unsigned long long h = fnv(key->p, key->len);
	size_t at;

	for (at = h & (tb->cap - 1); tb->t[at].rep; at = (at + 1) & (tb->cap - 1)) {
		struct slot *sl = &tb->t[at];

		if (sl->hash != h || sl->own_names != own_names)
			continue;
		fold_key(r, &r->res[sl->rep - 1], own_names, &tb->other);
		if (tb->other.len == key->len &&
		    !memcmp(tb->other.p, key->p, key->len))
			return sl;
	}
	tb->t[at].hash = h;
	tb->t[at].own_names = own_names;
	return &tb->t[at];
}

/*
 * A result joins the first group whose first result says literally the
 * same (a list that names the pair's own NIC among others stays equal),
 * else one that says the same but for each pair's own names.
 */
void report_fold(struct report *r)
{
	struct table tb = { .cap = 16 };
	struct fbuf raw = { 0 }, own = { 0 };
	int *last = xcalloc(r->nres ? r->nres : 1, sizeof(*last));

	for (size_t i = 0; i < r->nres; i++) {
		r->res[i].fold_rep = -1;
		r->res[i].fold_next = -1;
		r->res[i].fold_n = 1;
	}
	while (tb.cap < 4 * r->nres)
		tb.cap *= 2;
	tb.t = xcalloc(tb.cap, sizeof(*tb.t));
	for (size_t i = 0; i < r->nres; i++) {
		struct result *res = &r->res[i];
		struct slot *a, *b = NULL;
		int rep;

		if (!foldable(r, res))
			continue;
		fold_key(r, res, false, &raw);
		a = find(r, &tb, &raw, false);
		if (!a->rep) {
			fold_key(r, res, true, &own);
			b = find(r, &tb, &own, true);
		}
		if (!a->rep && !b->rep) {
			a->rep = b->rep = (int)i + 1;
			last[i] = (int)i;
			continue;
		}
		rep = (a->rep ? a->rep : b->rep) - 1;
		res->fold_rep = rep;
		r->res[last[rep]].fold_next = (int)i;
		last[rep] = (int)i;
		r->res[rep].fold_n++;
	}
	free(tb.t);
	free(tb.other.p);
	free(raw.p);
	free(own.p);
	free(last);
}

size_t result_fold_subjects(const struct report *r, size_t i, int *subj)
{
	size_t n = 0;

	for (int k = (int)i; k >= 0; k = r->res[k].fold_next)
		subj[n++] = r->res[k].subject;
	return n;
}
