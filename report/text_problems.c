// SPDX-License-Identifier: MIT
/*
 * What the operator has to act on: the problems (BLOCKED, WARN and ERROR
 * results that matter for the verdict, grouped by gate, status and reason
 * code with compressed subject lists), then the fixes grouped by fix.
 *
 * A result matters when it makes the policy fail (report_failing), or
 * when it is on a path the policy needs: the READY paths it accepts, or
 * every path it accepts while none is READY. A BLOCKED result on a path
 * the policy does not need (peermem on a node READY by DMA-BUF under
 * --require any) is not a problem; -v shows it, its fix is "optional".
 * "To fix" lists only the fixes of results that make the policy fail (and,
 * on the same line, the other results the same fix clears).
 */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "gate/catalog.h"
#include "report/text_sections.h"

/* Whether result i is shown as a problem by default (see above). */
static bool text_is_problem(const struct text_ctx *t, size_t i)
{
	const struct result *res = &t->r->res[i];

	if (t->failing[i])
		return true;
	switch (res->status) {
	case ST_BLOCKED:
	case ST_ERROR:
		return (result_paths(res) & t->required) != 0;
	case ST_WARN:
		return !res->paths || (result_paths(res) & t->required) != 0;
	case ST_SKIP:
		/*
		 * An unproven proof leaves a needed path undecided; one the
		 * user declined (--no-alloc) is said by the verdict word,
		 * READY-UNPROVEN.
		 */
		return res->proof && !res->waived &&
		       res->code_index != C_NO_ALLOC &&
		       res->code_index != C_NCCL_NO_ALLOC &&
		       (result_paths(res) & t->required) != 0;
	default:
		return false;
	}
}

struct group {
	size_t first;		/* result index */
	int *subj;
	size_t n;
	bool alike;		/* every reason equal to the first's */
};

void text_problems(const struct text_ctx *t)
{
	const struct report *r = t->r;
	struct group *g = NULL;
	size_t ng = 0, hidden = 0, optional = 0;
	int gw = 4;
	char list[1024];

	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		struct group *m = NULL;

		if (!text_is_problem(t, i)) {
			hidden++;
			optional += res->status == ST_BLOCKED;
			continue;
		}
		for (size_t k = 0; k < ng && !m; k++) {
			const struct result *f = &r->res[g[k].first];

			if (f->gate == res->gate && f->status == res->status &&
			    !strcmp(f->code, res->code))
				m = &g[k];
		}
		if (!m) {
			g = xrealloc(g, (ng + 1) * sizeof(*g));
			m = &g[ng++];
			*m = (struct group){ i, NULL, 0, true };
			if ((int)strlen(res->gate->id) > gw)
				gw = (int)strlen(res->gate->id);
		}
		/* A gate's results for one subject come together (topo.rails:
		 * a GPU's lost rails): the subject once. */
		if (!m->n || m->subj[m->n - 1] != res->subject) {
			m->subj = xrealloc(m->subj,
					   (m->n + 1) * sizeof(*m->subj));
			m->subj[m->n++] = res->subject;
		}
		if (strcmp(res->reason, r->res[m->first].reason))
			m->alike = false;
	}
	fprintf(t->out, "\n%sproblems%s\n", text_bold(t), text_reset(t));
	if (!ng)
		fputs("  none that matter for the verdict\n", t->out);
	for (size_t k = 0; k < ng; k++) {
		const struct result *f = &r->res[g[k].first];

		int len;

		text_subject_list(r, g[k].subj, g[k].n, list, sizeof(list));
		fprintf(t->out, "  %s%-7s%s  %-*s  ", text_status_color(t, f->status),
			status_name(f->status), text_reset(t), gw, f->gate->id);
		text_put_clean(list, t->out);
		/* The reason on a line of its own when it would not fit. */
		len = 13 + gw + (int)strlen(list) + 2 + (g[k].alike ? 0 : 5) +
		      (int)strlen(f->reason);
		fprintf(t->out, "%s%s%s\n", len > t->width ? "\n      " : ": ",
			g[k].alike ? "" : "e.g. ", f->reason);
		free(g[k].subj);
	}
	free(g);
	if (optional)
		fprintf(t->out, "  (%zu BLOCKED result(s) on paths the policy does "
			"not need; -v lists every result)\n", optional);
	else if (hidden && !t->o->verbose)
		fprintf(t->out, "  (-v lists every result)\n");
}

/* One fix, the gates and subjects it is for. */
struct fix {
	const char *text;
	enum gdr_status status;	/* the worst of its results */
	int rank;		/* cause order of its earliest gate */
	struct fix_by {
		const char *gate;
		enum gdr_status status;	/* the worst of this gate's results */
		int rank;
		int *subj;
		size_t n;
	} *by;
	size_t nby;
};

static int severity(enum gdr_status st)
{
	return st == ST_BLOCKED ? 3 : st == ST_ERROR ? 2 : st == ST_WARN ? 1 : 0;
}

/*
 * The one ordering rule for fixes: by cause, from the gate chain, with the
 * platform (firmware, boot parameters) before the mechanisms that sit on
 * it. A hung driver (gpu.cuinit) comes before `modprobe nvidia_peermem`,
 * whatever their statuses; within a layer, chain order.
 */
static int cause_rank(const struct gate_desc *g)
{
	static const int layer_rank[] = {
		[L_HOST] = 0, [L_GPU] = 1, [L_NIC] = 2, [L_PLATFORM] = 3,
		[L_MECHANISM] = 4, [L_TOPOLOGY] = 5, [L_REGISTRATION] = 6,
		[L_DATAPATH] = 7, [L_PEER] = 8,
	};
	int l = (unsigned int)g->layer < sizeof(layer_rank) / sizeof(int) ?
		layer_rank[g->layer] : 9;

	return l * G_COUNT + g->index;
}

/*
 * Is this fix also the fix of a result that makes the policy fail? Then it
 * is listed once, under "to fix", with every result it clears (data.nccl
 * carries its rail's topo.nccl fix: both go on one line).
 */
static bool fix_is_required(const struct text_ctx *t, size_t i)
{
	const struct report *r = t->r;

	if (t->failing[i])
		return true;
	for (size_t k = 0; k < r->nres; k++)
		if (t->failing[k] && r->res[k].remediation &&
		    !strcmp(r->res[k].remediation, r->res[i].remediation))
			return true;
	return false;
}

static size_t collect(const struct text_ctx *t, bool required, struct fix **out)
{
	const struct report *r = t->r;
	struct fix *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		struct fix *m = NULL;
		size_t b;

		if (!res->remediation || res->status == ST_PASS ||
		    fix_is_required(t, i) != required)
			continue;
		for (size_t k = 0; k < n && !m; k++)
			if (!strcmp(v[k].text, res->remediation))
				m = &v[k];
		if (!m) {
			v = xrealloc(v, (n + 1) * sizeof(*v));
			m = &v[n++];
			*m = (struct fix){ res->remediation, res->status,
					   cause_rank(res->gate), NULL, 0 };
		}
		if (severity(res->status) > severity(m->status))
			m->status = res->status;
		if (cause_rank(res->gate) < m->rank)
			m->rank = cause_rank(res->gate);
		for (b = 0; b < m->nby && strcmp(m->by[b].gate, res->gate->id); b++)
			;
		if (b == m->nby) {
			m->by = xrealloc(m->by, (m->nby + 1) * sizeof(*m->by));
			m->by[b].gate = res->gate->id;
			m->by[b].status = res->status;
			m->by[b].rank = cause_rank(res->gate);
			m->by[b].subj = NULL;
			m->by[b].n = 0;
			m->nby++;
		}
		if (severity(res->status) > severity(m->by[b].status))
			m->by[b].status = res->status;
		m->by[b].subj = xrealloc(m->by[b].subj,
					 (m->by[b].n + 1) * sizeof(int));
		m->by[b].subj[m->by[b].n++] = res->subject;
	}
	*out = v;
	return n;
}

/* Cause order (stable: equal ranks keep collection order). */
static int fix_cmp(const void *pa, const void *pb)
{
	const struct fix *a = pa, *b = pb;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* A fix's results: worst status first, then cause order. */
static int by_cmp(const void *pa, const void *pb)
{
	const struct fix_by *a = pa, *b = pb;
	int d = severity(b->status) - severity(a->status);

	return d ? d : (a->rank > b->rank) - (a->rank < b->rank);
}

static void print_fixes(const struct text_ctx *t, const char *title,
			struct fix *v, size_t n)
{
	char list[1024];

	if (n)
		fprintf(t->out, "\n%s%s%s\n", text_bold(t), title,
			text_reset(t));
	/* Ranks are distinct per gate, so qsort's instability is moot. */
	if (n)
		qsort(v, n, sizeof(*v), fix_cmp);
	for (size_t i = 0; i < n; i++) {
		if (v[i].nby)
			qsort(v[i].by, v[i].nby, sizeof(*v[i].by), by_cmp);
		fprintf(t->out, "  %zu. ", i + 1);
		/* Each result's own status: a tag where it changes. */
		for (size_t b = 0; b < v[i].nby; b++) {
			text_subject_list(t->r, v[i].by[b].subj, v[i].by[b].n,
					  list, sizeof(list));
			if (!b || v[i].by[b].status != v[i].by[b - 1].status)
				fprintf(t->out, "%s[%s] ", b ? "; " : "",
					status_name(v[i].by[b].status));
			else
				fputs("; ", t->out);
			fprintf(t->out, "%s (", v[i].by[b].gate);
			text_put_clean(list, t->out);
			fputc(')', t->out);
		}
		fprintf(t->out, ": %s\n", v[i].text);
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t b = 0; b < v[i].nby; b++)
			free(v[i].by[b].subj);
		free(v[i].by);
	}
	free(v);
}

/*
 * Move the fixes whose results are all SKIPs out of v: checks that did not
 * run, most of them for how gdrcheck was run (a library to name, root), so
 * they do not read as changes the node needs.
 */
static size_t take_skips(struct fix *v, size_t *n, struct fix **out)
{
	struct fix *s = NULL;
	size_t ns = 0, kept = 0;

	for (size_t i = 0; i < *n; i++) {
		if (v[i].status != ST_SKIP) {
			v[kept++] = v[i];
			continue;
		}
		s = xrealloc(s, (ns + 1) * sizeof(*s));
		s[ns++] = v[i];
	}
	*n = kept;
	*out = s;
	return ns;
}

void text_fixes(const struct text_ctx *t)
{
	struct fix *v, *skips;
	size_t n, ns;

	n = collect(t, true, &v);
	print_fixes(t, "to fix", v, n);
	n = collect(t, false, &v);
	ns = take_skips(v, &n, &skips);
	print_fixes(t, "optional (not needed for the verdict)", v, n);
	print_fixes(t, "skipped checks (not needed for the verdict)", skips, ns);
}
