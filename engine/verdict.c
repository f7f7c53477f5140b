// SPDX-License-Identifier: MIT
/*
 * Fold gate results into a verdict per path. A path is READY when the host
 * passes its gates and at least one GPU and one NIC port pass theirs; it is
 * BLOCKED when the host, every GPU or every port is closed (the decisive
 * gate is the earliest in chain order); otherwise UNKNOWN. SKIP never
 * closes a path (it always comes with its reason); ERROR makes it UNKNOWN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gates.h"

enum fold {
	F_OK = 0,
	F_ERROR,
	F_BLOCKED,
};

struct subject_state {
	enum fold state;
	int first_blocked;	/* result index, -1 */
	int first_error;
};

static void state_add(struct subject_state *s, const struct result *r, int idx)
{
	if (r->status == ST_BLOCKED) {
		if (s->first_blocked < 0)
			s->first_blocked = idx;
		s->state = F_BLOCKED;
	} else if (r->status == ST_ERROR) {
		if (s->first_error < 0)
			s->first_error = idx;
		if (s->state == F_OK)
			s->state = F_ERROR;
	}
}

/* Fold a set of subjects of one kind: fine if any is OK. */
struct set_state {
	int count;
	bool any_ok;
	bool all_blocked;
	int decisive;		/* earliest first_blocked over the set */
	int first_error;
};

static void set_init(struct set_state *s)
{
	memset(s, 0, sizeof(*s));
	s->all_blocked = true;
	s->decisive = -1;
	s->first_error = -1;
}

static void set_add(struct set_state *s, const struct subject_state *st)
{
	s->count++;
	if (st->state == F_OK)
		s->any_ok = true;
	if (st->state != F_BLOCKED)
		s->all_blocked = false;
	else if (s->decisive < 0 || st->first_blocked < s->decisive)
		s->decisive = st->first_blocked;
	if (st->first_error >= 0 &&
	    (s->first_error < 0 || st->first_error < s->first_error))
		s->first_error = st->first_error;
}

static int min_idx(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static void fold_path(struct report *r, enum gdr_path p)
{
	struct path_verdict *pv = &r->path[p];
	unsigned int mask = 1u << p;
	struct subject_state *ss;
	struct subject_state host = { F_OK, -1, -1 };
	struct set_state gpus, ports;
	int decisive = -1, error = -1;
	bool blocked = false, undecided = false;

	ss = calloc(r->nsubj ? r->nsubj : 1, sizeof(*ss));
	if (!ss) {
		fputs("gdrcheck: out of memory\n", stderr);
		exit(3);
	}
	for (size_t i = 0; i < r->nsubj; i++)
		ss[i] = (struct subject_state){ F_OK, -1, -1 };

	free(pv->blockers);
	pv->blockers = NULL;
	pv->nblockers = 0;
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (!(res->paths & mask))
			continue;
		state_add(&ss[res->subject], res, (int)i);
		if (res->status == ST_BLOCKED) {
			int *nb = realloc(pv->blockers,
					  (pv->nblockers + 1) * sizeof(int));

			if (!nb) {
				fputs("gdrcheck: out of memory\n", stderr);
				exit(3);
			}
			pv->blockers = nb;
			pv->blockers[pv->nblockers++] = (int)i;
		}
	}

	set_init(&gpus);
	set_init(&ports);
	for (size_t i = 0; i < r->nsubj; i++) {
		const struct subject *s = &r->subj[i];

		switch (s->kind) {
		case SUBJ_HOST:
			host = ss[i];
			break;
		case SUBJ_GPU:
			set_add(&gpus, &ss[i]);
			break;
		case SUBJ_PORT: {
			/* A port is only as open as its device. */
			struct subject_state st = ss[i];

			if (s->parent >= 0) {
				const struct subject_state *d = &ss[s->parent];

				if (d->state > st.state)
					st.state = d->state;
				st.first_blocked = min_idx(st.first_blocked,
							   d->first_blocked);
				st.first_error = min_idx(st.first_error,
							 d->first_error);
			}
			set_add(&ports, &st);
			break;
		}
		default:
			break;
		}
	}
	/* NIC devices with blocked results but no ports still close the path. */
	for (size_t i = 0; i < r->nsubj; i++) {
		bool has_port = false;

		if (r->subj[i].kind != SUBJ_NIC)
			continue;
		for (size_t j = 0; j < r->nsubj; j++)
			has_port |= r->subj[j].parent == (int)i;
		if (!has_port)
			set_add(&ports, &ss[i]);
	}

	if (host.state == F_BLOCKED) {
		blocked = true;
		decisive = host.first_blocked;
	}
	if (gpus.count && gpus.all_blocked) {
		blocked = true;
		decisive = min_idx(decisive, gpus.decisive);
	}
	if (ports.count && ports.all_blocked) {
		blocked = true;
		decisive = min_idx(decisive, ports.decisive);
	}
	error = min_idx(host.first_error,
			min_idx(gpus.any_ok ? -1 : gpus.first_error,
				ports.any_ok ? -1 : ports.first_error));
	undecided = host.state == F_ERROR || !gpus.any_ok || !ports.any_ok;

	if (blocked) {
		const struct result *d = &r->res[decisive];

		pv->verdict = V_BLOCKED;
		pv->decisive = decisive;
		snprintf(pv->summary, sizeof(pv->summary),
			 "BLOCKED at %s (%s): %s", d->gate,
			 r->subj[d->subject].id, d->reason);
	} else if (undecided) {
		pv->verdict = V_UNKNOWN;
		pv->decisive = error;
		if (error >= 0)
			snprintf(pv->summary, sizeof(pv->summary),
				 "UNKNOWN: %s (%s) could not decide: %s",
				 r->res[error].gate,
				 r->subj[r->res[error].subject].id,
				 r->res[error].reason);
		else
			snprintf(pv->summary, sizeof(pv->summary),
				 "UNKNOWN: no %s was checked",
				 !gpus.any_ok ? "GPU" : "RDMA port");
	} else {
		pv->verdict = V_READY;
		pv->decisive = -1;
		snprintf(pv->summary, sizeof(pv->summary),
			 "READY: every gate open for at least one GPU and one "
			 "RDMA port");
	}
	free(ss);
}

void verdict_fold(struct report *r, enum require_policy req)
{
	enum verdict d, p;

	for (int i = 0; i < PATH_COUNT; i++)
		fold_path(r, (enum gdr_path)i);
	d = r->path[PATH_DMABUF].verdict;
	p = r->path[PATH_PEERMEM].verdict;
	switch (req) {
	case REQUIRE_DMABUF:
		r->overall = d;
		break;
	case REQUIRE_PEERMEM:
		r->overall = p;
		break;
	case REQUIRE_ANY:
	default:
		if (d == V_READY || p == V_READY)
			r->overall = V_READY;
		else if (d == V_BLOCKED && p == V_BLOCKED)
			r->overall = V_BLOCKED;
		else
			r->overall = V_UNKNOWN;
		break;
	}
	r->exit_code = r->overall == V_READY ? 0 :
		       r->overall == V_BLOCKED ? 1 : 3;
}
