/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PAR_H
#define GDRCHECK_PAR_H

/*
 * Per-GPU threads inside the worker (access/par.c). A stage hands its
 * per-GPU driver work to par_for(), which runs item i of n on a thread of
 * its own (libcuda is thread-safe; contexts are per thread) and joins them
 * all before it returns. The stage's deadline and fault isolation stay the
 * worker's: a thread that hangs keeps the stage RUNNING until the parent
 * kills the whole worker, a thread that crashes takes the worker down.
 *
 * The call in progress (stage_status.call), which names a hang or a crash:
 * stage_enter() records it per item; st->call shows the lowest-numbered
 * item still running that is not waiting for another (stage_wait), and a
 * crashing thread writes its own call there before the signal ends the
 * worker. Outside par_for() it is st->call
 * directly, as before.
 */
#include "access/vendor.h"

/* Most threads one par_for() starts; more items queue on them. */
#define PAR_MAX_THREADS	64

/* Record @call as the one in progress (this item's, inside par_for). */
void stage_enter(struct stage_status *st, const char *call);

/*
 * Record that this item waits for another's (a lock): @what is its call,
 * but st->call names a busy item that is not waiting, if any, so a hang
 * names the call that hangs, not the items queued behind it.
 */
void stage_wait(struct stage_status *st, const char *what);

/* This thread's call in progress: its item's inside par_for, else st's. */
const char *stage_current(const struct stage_status *st);

/* Run fn(arg, i) for i in [0, n), in parallel; returns once all are done.
 * Falls back to the calling thread for items no thread could be made for. */
void par_for(struct stage_status *st, int n, void (*fn)(void *arg, int i),
	     void *arg);

/* The same, at most @width items at a time (the calling thread's one of
 * them): for items that each hold memory while they run. */
void par_for_width(struct stage_status *st, int n, int width,
		   void (*fn)(void *arg, int i), void *arg);

#endif
