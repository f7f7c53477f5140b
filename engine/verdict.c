// SPDX-License-Identifier: MIT
/*
 * Fold gate results into a verdict per path. A path is READY when some
 * GPU and some RDMA port pass every gate of that path together with the
 * host, the port's device and the GPU x device pair; BLOCKED when every
 * such combination is closed (the decisive result is the latest gate in
 * chain order that closed one, so it names where the path finally closed);
 * otherwise UNKNOWN. SKIP never closes a path (it always comes with its
 * reason); ERROR makes it UNKNOWN.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#include "engine/gates.h"

enum fold {
	FOLD_OK = 0,
	FOLD_UNPROVEN,		/* only proofs skipped by --no-alloc */
	FOLD_ERROR,
	FOLD_BLOCKED,
};

struct subject_state {
	enum fold state;
	int first_blocked;	/* result index, -1 */
	int first_error;
};

static void state_add(struct subject_state *s, const struct result *r, int idx)
{
	/* An unproven proof gate leaves the path undecided. */
	bool unproven = r->proof && r->status == ST_SKIP && !r->waived;

	if (unproven && (r->code_index == C_NO_ALLOC ||
			 r->code_index == C_NCCL_NO_ALLOC ||
			 r->code_index == C_EFA_NO_RC)) {
		/*
		 * The user chose not to allocate, or the transfer cannot run
		 * by design (EFA has no RC QPs: the registrations are the
		 * proof there): not a fault, not a proof. READY-UNPROVEN,
		 * exit 0; exit 3 is for what could not be decided.
		 */
		if (s->state == FOLD_OK)
			s->state = FOLD_UNPROVEN;
		return;
	}
	if (unproven) {
		if (s->first_error < 0)
			s->first_error = idx;
		if (s->state == FOLD_OK)
			s->state = FOLD_ERROR;
		return;
	}
	if (r->status == ST_BLOCKED) {
		if (s->first_blocked < 0)
			s->first_blocked = idx;
		s->state = FOLD_BLOCKED;
	} else if (r->status == ST_ERROR) {
		if (s->first_error < 0)
			s->first_error = idx;
		if (s->state == FOLD_OK)
			s->state = FOLD_ERROR;
	}
}

static int min_idx(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static void merge(struct subject_state *into, const struct subject_state *s)
{
	if (s->state > into->state)
		into->state = s->state;
	into->first_blocked = min_idx(into->first_blocked, s->first_blocked);
	into->first_error = min_idx(into->first_error, s->first_error);
}

/*
 * Lookup tables built once per fold, so that large nodes (thousands of
 * GPU x NIC pairs) fold in linear time: the chain position of every
 * result's gate, the pair subject of every (GPU, NIC), which NICs have ports.
 */
struct fold_index {
	int *rank;		/* result -> index of its gate's first result */
	struct pair_grid grid;	/* (GPU, NIC) -> pair subject */
	bool *has_port;		/* subject (NIC) -> has a port subject */
};

static void index_build(const struct report *r, struct fold_index *ix)
{
	int first[G_COUNT];

	memset(ix, 0, sizeof(*ix));
	ix->rank = xcalloc(r->nres, sizeof(int));
	for (int g = 0; g < G_COUNT; g++)
		first[g] = -1;
	for (size_t i = 0; i < r->nres; i++) {
		int g = r->res[i].gate->index;

		if (first[g] < 0)
			first[g] = (int)i;
		ix->rank[i] = first[g];
	}
	pair_grid_build(r, &ix->grid);
	ix->has_port = xcalloc(r->nsubj, sizeof(bool));
	for (size_t i = 0; i < r->nsubj; i++)
		if (r->subj[i].kind == SUBJ_PORT && r->subj[i].parent >= 0)
			ix->has_port[r->subj[i].parent] = true;
}

static void index_free(struct fold_index *ix)
{
	free(ix->rank);
	pair_grid_free(&ix->grid);
	free(ix->has_port);
}

/* How the candidates of one path came out, gathered by fold_path. */
struct fold_tally {
	int decisive;		/* the result that names where it closed, -1 */
	int error;		/* the first ERROR among the candidates, -1 */
	int candidates;
	int blocked;
	bool ready;
	bool unproven;		/* a pair passes all but the --no-alloc proofs */
};

/* Forget the path's previous fold: its blockers and ready pairs. */
static void path_reset(struct path_verdict *pv)
{
	free(pv->blockers);
	pv->blockers = NULL;
	pv->nblockers = 0;
	free(pv->ready);
	pv->ready = NULL;
	pv->nready = 0;
}

/*
 * Each subject's state on path p, from the results that can close it;
 * every BLOCKED one is also listed as a blocker of the path.
 */
static void subject_states(struct report *r, enum gdr_path p,
			   struct subject_state *ss)
{
	struct path_verdict *pv = &r->path[p];

	for (size_t i = 0; i < r->nsubj; i++)
		ss[i] = (struct subject_state){ FOLD_OK, -1, -1 };
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];

		if (!(result_paths(res) & (1u << p)))
			continue;
		state_add(&ss[res->subject], res, (int)i);
		if (res->status == ST_BLOCKED) {
			pv->blockers = xrealloc(pv->blockers,
						(pv->nblockers + 1) * sizeof(int));
			pv->blockers[pv->nblockers++] = (int)i;
		}
	}
}

/*
 * The port (or the RDMA device, when it has no port at all) that subject
 * q offers as a candidate's NIC side, its device in *nic; false when q is
 * no candidate. A device without ports can close the path, never open it.
 */
static bool candidate_nic(const struct report *r, const struct fold_index *ix,
			  const struct subject_state *ss, size_t q, int *nic)
{
	const struct subject *sq = &r->subj[q];

	if (sq->kind == SUBJ_PORT) {
		*nic = sq->parent;
		return true;
	}
	if (sq->kind == SUBJ_NIC && !ix->has_port[q] &&
	    ss[q].state == FOLD_BLOCKED) {
		*nic = (int)q;
		return true;
	}
	return false;
}

/* Count one candidate's state into the tally (and the ready list). */
static void tally_candidate(struct path_verdict *pv,
			    const struct fold_index *ix, struct fold_tally *t,
			    const struct subject_state *c, int g, int q)
{
	t->candidates++;
	if (c->state == FOLD_OK || (c->state == FOLD_UNPROVEN && !t->ready)) {
		if (c->state == FOLD_OK && !t->ready)
			pv->nready = 0;	/* proven pairs replace unproven ones */
		pv->ready = xrealloc(pv->ready, (pv->nready + 1) *
				     sizeof(*pv->ready));
		pv->ready[pv->nready][0] = g;
		pv->ready[pv->nready][1] = q;
		pv->nready++;
		if (c->state == FOLD_OK)
			t->ready = true;
		else
			t->unproven = true;
	} else if (c->state == FOLD_BLOCKED) {
		int rk = ix->rank[c->first_blocked];

		t->blocked++;
		/* The path closes at the latest gate any candidate still
		 * passed; the first subject there names it. */
		if (t->decisive < 0 || rk > ix->rank[t->decisive] ||
		    (rk == ix->rank[t->decisive] &&
		     c->first_blocked < t->decisive))
			t->decisive = c->first_blocked;
	} else {
		t->error = min_idx(t->error, c->first_error);
	}
}

/*
 * Is port subject q (of NIC subject nic) one of GPU g's rails? NCCL uses
 * only those (topo.nccl); true when the model did not run or has no rail
 * list for g, so the fold stays as wide as what is known.
 */
static bool nccl_rail_of(const struct report *r, int g, int nic, int q)
{
	const char *slash = strrchr(r->subj[q].id, '/');
	int port = slash ? atoi(slash + 1) : -1;

	if (!r->nccl.modelled)
		return true;
	for (size_t i = 0; i < r->nccl.ngpus; i++) {
		const struct nccl_gpu_rails *gr = &r->nccl.gpus[i];

		if (gr->gpu != g)
			continue;
		for (int k = 0; k < gr->nrails; k++)
			if (gr->rail[k].nic == nic &&
			    (r->subj[q].kind != SUBJ_PORT ||
			     gr->rail[k].port == port))
				return true;
		return false;
	}
	return true;
}

/*
 * A candidate is one GPU with one RDMA port: the host, the GPU, the port,
 * its device and the GPU x device pair must all be open for it to work.
 */
static void fold_candidates(struct report *r, enum gdr_path p,
			    const struct fold_index *ix,
			    const struct subject_state *ss,
			    const struct subject_state *host,
			    struct fold_tally *t)
{
	for (size_t g = 0; g < r->nsubj; g++) {
		if (r->subj[g].kind != SUBJ_GPU)
			continue;
		for (size_t q = 0; q < r->nsubj; q++) {
			struct subject_state c = *host;
			int nic, pair;

			if (!candidate_nic(r, ix, ss, q, &nic))
				continue;

			merge(&c, &ss[g]);
			merge(&c, &ss[q]);
			if (nic >= 0 && nic != (int)q)
				merge(&c, &ss[nic]);
			pair = nic >= 0 ? pair_grid_find(&ix->grid, (int)g, nic) : -1;
			if (pair >= 0)
				merge(&c, &ss[pair]);
			tally_candidate(&r->path[p], ix, t, &c, (int)g, (int)q);
		}
	}
}

/*
 * No GPU or no port to pair: the path is closed when the host, every port
 * or every GPU is. Returns the decisive result, or -1 when it is open.
 */
static int fold_without_candidates(const struct report *r,
				   const struct subject_state *ss,
				   const struct subject_state *host)
{
	int port_dec = -1, gpu_dec = -1, nports = 0, ngpus = 0, decisive = -1;
	bool ports_closed = true, gpus_closed = true;

	for (size_t i = 0; i < r->nsubj; i++) {
		struct subject_state st = ss[i];

		if (r->subj[i].kind == SUBJ_PORT) {
			if (r->subj[i].parent >= 0)
				merge(&st, &ss[r->subj[i].parent]);
			nports++;
			ports_closed &= st.state == FOLD_BLOCKED;
			if (st.state == FOLD_BLOCKED)
				port_dec = min_idx(port_dec, st.first_blocked);
		} else if (r->subj[i].kind == SUBJ_GPU) {
			ngpus++;
			gpus_closed &= st.state == FOLD_BLOCKED;
			if (st.state == FOLD_BLOCKED)
				gpu_dec = min_idx(gpu_dec, st.first_blocked);
		}
	}
	if (host->state == FOLD_BLOCKED)
		decisive = host->first_blocked;
	if (nports && ports_closed)
		decisive = min_idx(decisive, port_dec);
	if (ngpus && gpus_closed)
		decisive = min_idx(decisive, gpu_dec);
	return decisive;
}

/*
 * Set a path's one-line summary; a reason too long for it is cut at a word
 * and ends in "..." (U+2026) rather than mid-word.
 */
static void __attribute__((format(printf, 2, 3)))
summary_set(struct path_verdict *pv, const char *fmt, ...)
{
	static const char ell[] = "\xe2\x80\xa6";
	size_t len = sizeof(pv->summary);
	va_list ap;
	char *cut;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(pv->summary, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n < len)
		return;
	pv->summary[len - sizeof(ell)] = '\0';
	cut = strrchr(pv->summary, ' ');
	if (cut && (size_t)(cut - pv->summary) > len / 2)
		*cut = '\0';
	/* No space to cut at: drop a UTF-8 sequence the cut split. */
	n = (int)strlen(pv->summary);
	for (int l = n; l > 0; l--) {
		unsigned char b = (unsigned char)pv->summary[l - 1];
		int need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;

		if ((b & 0xc0) == 0x80)
			continue;		/* a continuation byte */
		if ((b & 0xc0) == 0xc0 && n - (l - 1) < need)
			pv->summary[l - 1] = '\0';	/* its lead: cut */
		break;
	}
	strcat(pv->summary, ell);
}

/* Is the path's proof missing by design (EFA_NO_RC), not by --no-alloc? */
static bool efa_unprovable(const struct report *r,
			   const struct path_verdict *pv)
{
	unsigned int bit = 1u << (pv - r->path);

	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].code_index == C_EFA_NO_RC &&
		    (r->res[i].paths & bit))
			return true;
	return false;
}

/* The path's verdict, decisive result and one-line summary. */
static void path_conclude(struct report *r, struct path_verdict *pv,
			  const struct fold_tally *t, int host_error)
{
	int error = t->error;

	if (!t->ready && t->unproven) {
		pv->verdict = V_READY_UNPROVEN;
		pv->decisive = -1;
		if (efa_unprovable(r, pv))
			summary_set(pv,
				 "READY-UNPROVEN: %s with %s registers GPU "
				 "memory; an AWS EFA has no RC QPs, so no "
				 "loopback transfer can prove it (fi_rma_bw -p "
				 "efa -D cuda does)",
				 r->subj[pv->ready[0][0]].id,
				 r->subj[pv->ready[0][1]].id);
		else
			summary_set(pv,
				 "READY-UNPROVEN: %s with %s passes every gate; "
				 "the registration proof was not attempted "
				 "(--no-alloc)", r->subj[pv->ready[0][0]].id,
				 r->subj[pv->ready[0][1]].id);
	} else if (t->ready) {
		size_t k = 0;

		/* The nccl line names a rail: a pair NCCL would use. */
		while (pv == &r->path[PATH_NCCL] && k + 1 < pv->nready &&
		       !nccl_rail_of(r, pv->ready[k][0],
				     r->subj[pv->ready[k][1]].kind == SUBJ_PORT ?
				     r->subj[pv->ready[k][1]].parent :
				     pv->ready[k][1], pv->ready[k][1]))
			k++;
		pv->verdict = V_READY;
		pv->decisive = -1;
		summary_set(pv,
			 "READY: %s with %s%s", r->subj[pv->ready[k][0]].id,
			 r->subj[pv->ready[k][1]].id,
			 pv->nready < 2 ? "" : pv == &r->path[PATH_NCCL] ?
			 " (and more: see rails)" :
			 " (and more: see ready pairs)");
	} else if (t->blocked && (t->blocked == t->candidates ||
				  !t->candidates)) {
		const struct result *d = &r->res[t->decisive];

		pv->verdict = V_BLOCKED;
		pv->decisive = t->decisive;
		summary_set(pv,
			 "BLOCKED at %s (%s): %s", d->gate->id,
			 r->subj[d->subject].id, d->reason);
	} else {
		if (error < 0)
			error = host_error;
		pv->verdict = V_UNKNOWN;
		pv->decisive = error;
		if (error >= 0)
			summary_set(pv,
				 "UNKNOWN: %s (%s) could not decide: %s",
				 r->res[error].gate->id,
				 r->subj[r->res[error].subject].id,
				 r->res[error].reason);
		else
			summary_set(pv,
				 "UNKNOWN: no GPU with an RDMA port was checked");
	}
}

static void fold_path(struct report *r, enum gdr_path p,
		      const struct fold_index *ix)
{
	struct path_verdict *pv = &r->path[p];
	struct subject_state *ss, host = { FOLD_OK, -1, -1 };
	struct fold_tally t = { .decisive = -1, .error = -1 };

	ss = xcalloc(r->nsubj, sizeof(*ss));
	path_reset(pv);
	subject_states(r, p, ss);
	for (size_t i = 0; i < r->nsubj; i++)
		if (r->subj[i].kind == SUBJ_HOST)
			merge(&host, &ss[i]);
	fold_candidates(r, p, ix, ss, &host, &t);
	if (!t.candidates) {
		t.decisive = fold_without_candidates(r, ss, &host);
		t.blocked = t.decisive >= 0;
	}
	path_conclude(r, pv, &t, host.first_error);
	free(ss);
}

/*
 * Which subjects a verified transfer covers, per path: the pair, its GPU,
 * its NIC (a GPU-level proof, data.nccl, covers its GPU) and the host.
 */
struct proven {
	int *by_subject;	/* subject -> a proving result index, or -1 */
	int any;		/* a proving result index, or -1 */
};

static void proven_mark(struct proven *pv, int subject, int idx)
{
	if (subject >= 0 && pv->by_subject[subject] < 0)
		pv->by_subject[subject] = idx;
	if (pv->any < 0)
		pv->any = idx;
}

/* The proof covering subject s on this path, or -1. */
static int proven_for(const struct report *r, const struct proven *pv,
		      int s)
{
	const struct subject *sj = &r->subj[s];

	if (sj->kind == SUBJ_HOST)
		return pv->any;
	if (sj->kind == SUBJ_PORT && sj->parent >= 0)
		return pv->by_subject[sj->parent];
	return pv->by_subject[s];
}

/*
 * A proof outranks an inference (a rule applied to a file, a config, a
 * layout): a BLOCKED or ERROR result of the layers before registration,
 * on a path that a verified transfer then proved for a subject it covers,
 * is contradicted by that transfer. It becomes a WARN saying so, and the
 * verdict follows the proof. (platform.acs makes the same call itself.)
 */
void proof_outranks_inference(struct report *r)
{
	struct proven pv[PATH_COUNT];

	for (int p = 0; p < PATH_COUNT; p++) {
		pv[p].by_subject = xcalloc(r->nsubj, sizeof(int));
		for (size_t i = 0; i < r->nsubj; i++)
			pv[p].by_subject[i] = -1;
		pv[p].any = -1;
	}
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *x = &r->res[i];
		const struct subject *sj;

		if (x->layer != L_DATAPATH || !x->proof ||
		    x->status != ST_PASS || x->waived)
			continue;
		sj = &r->subj[x->subject];
		for (int p = 0; p < PATH_COUNT; p++) {
			if (!(x->paths & (1u << p)))
				continue;
			proven_mark(&pv[p], x->subject, (int)i);
			if (sj->kind == SUBJ_PAIR) {
				proven_mark(&pv[p], sj->pair_gpu, (int)i);
				proven_mark(&pv[p], sj->pair_nic, (int)i);
			}
		}
	}
	for (size_t i = 0; i < r->nres; i++) {
		struct result *x = &r->res[i];
		const struct result *by;
		int proof = -1;
		char *why;
		size_t n;

		if (x->layer >= L_REGISTRATION ||
		    (x->status != ST_BLOCKED && x->status != ST_ERROR))
			continue;
		/*
		 * A lost rail is a fact about the node as built, not an
		 * inference: the transfer proven on the GPU's other rail does
		 * not bring the lost one back.
		 */
		if (x->gate == &gate_descs[G_TOPO_RAILS])
			continue;
		for (int p = 0; p < PATH_COUNT && proof < 0; p++)
			if (result_paths(x) & (1u << p))
				proof = proven_for(r, &pv[p], x->subject);
		if (proof < 0)
			continue;
		by = &r->res[proof];
		n = strlen(x->reason) + 256;
		why = report_alloc(r, n);
		/* A rule's "no" is contradicted; an unread input is moot. */
		if (x->status == ST_BLOCKED)
			snprintf(why, n, "%s; yet %s verified a transfer on %s: "
				 "this does not hold here", x->reason,
				 by->gate->id, r->subj[by->subject].id);
		else
			snprintf(why, n, "%s; %s verified a transfer on %s, "
				 "which decides the path without it", x->reason,
				 by->gate->id, r->subj[by->subject].id);
		ev_str(x, "inferred_code", "%s", x->code);
		ev_str(x, "inferred_status", "%s", status_name(x->status));
		x->reason = why;
		x->code_index = C_CONTRADICTED_BY_PROOF;
		x->code = code_descs[C_CONTRADICTED_BY_PROOF].name;
		if (x->status == ST_BLOCKED)
			remedy_CONTRADICTED_BY_PROOF(x);
		x->status = ST_WARN;
	}
	for (int p = 0; p < PATH_COUNT; p++)
		free(pv[p].by_subject);
}

void verdict_fold(struct report *r, enum require_policy req)
{
	struct fold_index ix;

	proof_outranks_inference(r);
	index_build(r, &ix);
	for (int i = 0; i < PATH_COUNT; i++)
		fold_path(r, (enum gdr_path)i, &ix);
	index_free(&ix);
	/* The overall verdict and exit code: one rule, in policy.c. */
	policy_overall(r, req, false);
}
