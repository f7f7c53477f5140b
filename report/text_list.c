// SPDX-License-Identifier: MIT
/*
 * Compressed subject lists for the text report: GPU0,GPU1,GPU2,GPU3 is
 * "GPU0-3"; mlx5_0/1..mlx5_11/1 is "mlx5_0-11/1"; pairs are grouped by
 * GPUs that share the same NICs: "GPU0-3 x mlx5_8-11, GPU4-7 x mlx5_0-7".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report/text_util.h"

int text_natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			unsigned long long x = strtoull(a, (char **)&a, 10);
			unsigned long long y = strtoull(b, (char **)&b, 10);

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

/* An id split around its k-th digit run from the end (k = 0: the last). */
struct split {
	const char *id;
	size_t pre;		/* bytes before the run */
	size_t post;		/* offset of the bytes after it */
	long long num;		/* -1: no such run */
};

static struct split split_at(const char *id, int k)
{
	struct split s = { id, strlen(id), strlen(id), -1 };
	size_t end = strlen(id);

	while (end > 0) {
		size_t e, b;

		while (end > 0 && !isdigit((unsigned char)id[end - 1]))
			end--;
		if (!end)
			break;
		e = end;
		while (end > 0 && isdigit((unsigned char)id[end - 1]))
			end--;
		b = end;
		if (k-- == 0) {
			/* A leading zero ("07") is a name, not a number. */
			if (e - b > 9 || (e - b > 1 && id[b] == '0'))
				break;
			s.pre = b;
			s.post = e;
			s.num = strtoll(id + b, NULL, 10);
			break;
		}
	}
	return s;
}

static bool same_frame(const struct split *a, const struct split *b)
{
	return a->num >= 0 && b->num >= 0 && a->pre == b->pre &&
	       !strncmp(a->id, b->id, a->pre) &&
	       !strcmp(a->id + a->post, b->id + b->post);
}

static int split_cmp(const void *pa, const void *pb)
{
	const struct split *a = pa, *b = pb;
	int c;

	if (a->num < 0 || b->num < 0 || a->pre != b->pre ||
	    strncmp(a->id, b->id, a->pre) ||
	    strcmp(a->id + a->post, b->id + b->post)) {
		c = text_natcmp(a->id, b->id);
		return c;
	}
	return a->num < b->num ? -1 : a->num > b->num;
}

struct sbuf {
	char *p;
	size_t size, len;	/* len may run past size: cut at the end */
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, b->len++)
		if (b->len + 1 < b->size)
			b->p[b->len] = s[i];
	if (b->size)
		b->p[b->len + 1 < b->size ? b->len : b->size - 1] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* Groups of ids compressed on digit run k; returns the number of groups. */
static size_t compress(const char **ids, size_t n, int k, struct sbuf *b)
{
	struct split *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t groups = 0;
	char num[48];

	for (size_t i = 0; i < n; i++)
		v[i] = split_at(ids[i], k);
	qsort(v, n, sizeof(*v), split_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && same_frame(&v[i], &v[j + 1]) &&
		       v[j + 1].num == v[j].num + 1)
			j++;
		if (b) {
			if (groups)
				sb_str(b, ",");
			if (j == i) {
				sb_str(b, v[i].id);
			} else {
				sb_put(b, v[i].id, v[i].pre);
				snprintf(num, sizeof(num), "%lld-%lld", v[i].num,
					 v[j].num);
				sb_str(b, num);
				sb_str(b, v[i].id + v[i].post);
			}
		}
		groups++;
		i = j + 1;
	}
	free(v);
	return groups;
}

static void plain_list(const char **ids, size_t n, struct sbuf *b)
{
	/* The run that varies: the last (mlx5_0-11) or the one before (ports). */
	int k = compress(ids, n, 1, NULL) < compress(ids, n, 0, NULL) ? 1 : 0;

	compress(ids, n, k, b);
}

/* (a, b) subject pairs: the a's with the same b set share a group. */
void text_pair_list(const struct report *r, const int (*pv)[2], size_t n,
		    const char *sep, char *buf, size_t size)
{
	const char **as = xcalloc(n ? n : 1, sizeof(*as));
	char (*bset)[512] = xcalloc(n ? n : 1, sizeof(*bset));
	const char **ids = xcalloc(n ? n : 1, sizeof(*ids));
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	struct sbuf b = { buf, size, 0 };
	size_t na = 0, groups = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *a = r->subj[pv[i][0]].id;
		size_t j;

		for (j = 0; j < na && strcmp(as[j], a); j++)
			;
		if (j == na)
			as[na++] = a;
	}
	for (size_t g = 0; g < na; g++) {
		struct sbuf nb = { bset[g], sizeof(bset[g]), 0 };
		size_t nn = 0;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(r->subj[pv[i][0]].id, as[g]))
				ids[nn++] = r->subj[pv[i][1]].id;
		plain_list(ids, nn, &nb);
	}
	for (size_t g = 0; g < na; g++) {
		size_t nn = 0;

		if (done[g])
			continue;
		for (size_t h = g; h < na; h++)
			if (!done[h] && !strcmp(bset[h], bset[g])) {
				ids[nn++] = as[h];
				done[h] = true;
			}
		if (groups++)
			sb_str(&b, ", ");
		plain_list(ids, nn, &b);
		sb_str(&b, sep);
		sb_str(&b, bset[g]);
	}
	if (size > 4 && b.len >= size)
		memcpy(buf + size - 4, "...", 4);
	free(as);
	free(bset);
	free(ids);
	free(done);
}

void text_subject_list(const struct report *r, const int *subj, size_t n,
		       char *buf, size_t size)
{
	struct sbuf b = { buf, size, 0 };
	bool pairs = n > 0;
	const char **ids;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (r->subj[subj[i]].kind != SUBJ_PAIR ||
		    r->subj[subj[i]].pair_gpu < 0 || r->subj[subj[i]].pair_nic < 0)
			pairs = false;
	if (pairs) {
		int (*pv)[2] = xcalloc(n, sizeof(*pv));

		for (size_t i = 0; i < n; i++) {
			pv[i][0] = r->subj[subj[i]].pair_gpu;
			pv[i][1] = r->subj[subj[i]].pair_nic;
		}
		text_pair_list(r, (const int (*)[2])pv, n, " x ", buf, size);
		free(pv);
		return;
	} else {
		ids = xcalloc(n ? n : 1, sizeof(*ids));
		for (size_t i = 0; i < n; i++)
			ids[i] = r->subj[subj[i]].id;
		plain_list(ids, n, &b);
		free(ids);
	}
	if (size > 4 && b.len >= size)
		memcpy(buf + size - 4, "...", 4);
}
