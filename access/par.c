// SPDX-License-Identifier: MIT
/*
 * Per-GPU threads inside the worker: see access/par.h.
 *
 * Sharing: each item owns its slot in `items` (its call in progress) and
 * whatever per-GPU state its function writes (a distinct cuda_gpu,
 * gpu_buf, reg_vmm_gpu); the stage's st->call is written under `lock` only,
 * from the lowest-numbered busy item. The next item to start comes from an
 * atomic counter. Nothing else is shared by the threads.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/par.h"

struct par_item {
	char call[VF_NAME];
	int busy;		/* read by the crash handler: no lock there */
	int waiting;		/* stage_wait: queued behind another item */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct par_item *items;
static int nitems;
static struct stage_status *par_st;
static int next_item;
static void (*par_fn)(void *, int);
static void *par_arg;
static __thread int my_item = -1;

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				     SIGABRT };
#define NCRASH ((int)(sizeof(crash_signals) / sizeof(crash_signals[0])))
static struct sigaction saved[NCRASH];

/*
 * Under lock: st->call from the lowest-numbered busy item that is not
 * waiting for another; with all of them waiting, the lowest busy one.
 */
static void publish(void)
{
	int first = -1;

	for (int i = 0; i < nitems; i++) {
		if (!items[i].busy)
			continue;
		if (!items[i].waiting) {
			first = i;
			break;
		}
		if (first < 0)
			first = i;
	}
	if (first >= 0)
		memcpy(par_st->call, items[first].call, sizeof(par_st->call));
}

static void record(struct stage_status *st, const char *call, int waiting)
{
	if (my_item < 0 || !items) {
		snprintf(st->call, sizeof(st->call), "%s", call);
		return;
	}
	pthread_mutex_lock(&lock);
	snprintf(items[my_item].call, sizeof(items[my_item].call), "%s",
		 call);
	items[my_item].waiting = waiting;
	publish();
	pthread_mutex_unlock(&lock);
}

void stage_enter(struct stage_status *st, const char *call)
{
	record(st, call, 0);
}

void stage_wait(struct stage_status *st, const char *what)
{
	record(st, what, 1);
}

const char *stage_current(const struct stage_status *st)
{
	return my_item >= 0 && items ? items[my_item].call : st->call;
}

/*
 * A thread crashed: the worker dies of the signal, and the parent names
 * the call in st->call, which is this thread's, not the lowest busy
 * item's. memcpy into the shared mapping; then the default action.
 */
static void on_crash(int sig)
{
	if (my_item >= 0 && items && par_st)
		memcpy(par_st->call, items[my_item].call,
		       sizeof(par_st->call));
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *par_thread(void *unused)
{
	(void)unused;
	for (;;) {
		int i = __atomic_fetch_add(&next_item, 1, __ATOMIC_RELAXED);

		if (i >= nitems)
			return NULL;
		pthread_mutex_lock(&lock);
		items[i].busy = 1;
		pthread_mutex_unlock(&lock);
		my_item = i;
		par_fn(par_arg, i);
		my_item = -1;
		pthread_mutex_lock(&lock);
		items[i].busy = 0;
		items[i].waiting = 0;
		publish();
		pthread_mutex_unlock(&lock);
	}
}

static void crash_handlers(bool on)
{
	for (int s = 0; s < NCRASH; s++) {
		if (on) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_crash;
			sigemptyset(&sa.sa_mask);
			sa.sa_flags = SA_RESETHAND;
			sigaction(crash_signals[s], &sa, &saved[s]);
		} else {
			sigaction(crash_signals[s], &saved[s], NULL);
		}
	}
}

void par_for(struct stage_status *st, int n, void (*fn)(void *arg, int i),
	     void *arg)
{
	par_for_width(st, n, PAR_MAX_THREADS, fn, arg);
}

void par_for_width(struct stage_status *st, int n, int width,
		   void (*fn)(void *arg, int i), void *arg)
{
	pthread_t tid[PAR_MAX_THREADS];
	int started = 0, want;

	if (n <= 0)
		return;
	items = calloc((size_t)n, sizeof(*items));
	if (!items || n == 1) {
		/* One item (or no memory to track more): run them here. */
		free(items);
		items = NULL;
		for (int i = 0; i < n; i++)
			fn(arg, i);
		return;
	}
	nitems = n;
	par_st = st;
	par_fn = fn;
	par_arg = arg;
	next_item = 0;
	crash_handlers(true);
	/* The calling thread is one of the @width. */
	want = (n < width ? n : width) - 1;
	if (want > PAR_MAX_THREADS)
		want = PAR_MAX_THREADS;
	while (started < want &&
	       pthread_create(&tid[started], NULL, par_thread, NULL) == 0)
		started++;
	/* This thread takes items too: with no thread made, all of them. */
	par_thread(NULL);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	crash_handlers(false);
	pthread_mutex_lock(&lock);
	free(items);
	items = NULL;
	nitems = 0;
	par_st = NULL;
	pthread_mutex_unlock(&lock);
}
