/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_GATES_H
#define GDRCHECK_GATES_H

#include <stdio.h>

#include "gate/context.h"

/* A gate's probe function, from the catalog's GATE row. */
typedef void (*gate_fn)(struct gdr_ctx *ctx, const struct target *t);
extern const gate_fn gate_run[G_COUNT];

/*
 * --only/--skip, parsed once: a comma separated list of gate ids and layer
 * names becomes a gate_mask (bit G_x: gate x). 0, or -1 with the first
 * unknown word (at most 60 bytes of it; "" for an empty word) in bad.
 * A trailing comma ends the list.
 */
int gates_parse_list(const char *list, gate_mask *mask, char *bad,
		     size_t badlen);
/* Is the gate in the run's selection (options.gates)? */
bool gate_selected(const struct options *o, const struct gate_desc *g);
/* What to tell about an unknown token: " (did you mean mech?)" or so. */
const char *gates_list_hint(const char *bad);

/*
 * The worker stages (1 << WSTAGE_*) the selected gates read: the union of
 * their catalog stages column. gates_vendor_skips() turns it into the
 * worker's skip_* switches (only ever setting them: a replay's skips stay).
 */
unsigned int gates_stages(const struct options *o);
void gates_vendor_skips(const struct options *o, struct vendor_options *vo);

/* Run every gate in order over its subjects. */
void gates_run(struct gdr_ctx *ctx);
/* Two-node mode's peer layer, after gates_run and the node's verdict. */
void gates_run_peer(struct gdr_ctx *ctx);
void gates_list(FILE *out);

/*
 * A verified transfer outranks the inferences before registration that
 * said its path could not work: those become WARN CONTRADICTED_BY_PROOF.
 * Run before data.nccl (it reads them) and again by verdict_fold.
 */
void proof_outranks_inference(struct report *r);

/*
 * Fixes in the context gdrcheck runs in (engine/fixes.c): a result whose
 * cause a container, an RDMA namespace or another gate owns takes that
 * fix, so one line lists them. After the gates, before the verdict.
 */
void fixes_in_context(struct report *r);

/* Fold results into the per-path verdicts and the overall verdict. */
void verdict_fold(struct report *r, enum require_policy req);

/*
 * The policy the run is judged by: --require auto becomes nccl when the
 * NCCL model found NCCL for the node (report.nccl.found), else any; the
 * report's meta.require names the result. Any other policy is itself.
 */
enum require_policy policy_resolve(struct report *r, enum require_policy req);
/* "any", "dmabuf", "peermem", "nccl" or "auto". */
const char *require_name(enum require_policy req);

/* Apply --max-distance / --every-gpu / --warn-fails, then redo overall. */
void policy_apply(struct report *r, const struct options *o);
void policy_overall(struct report *r, enum require_policy req, bool warn_fails);
/* Two-node mode: the wire's verdict joins the node's (after the peer gates). */
void policy_wire(struct report *r, bool warn_fails);

#endif
