// SPDX-License-Identifier: MIT
/*
 * Vendor-library isolation. All libcuda and libibverbs calls run in one
 * forked worker for the whole run (CUDA is initialised once, as the driver's
 * own cost dominates). The worker writes its facts into a shared anonymous
 * mapping and ticks a pipe at every stage boundary; the parent gives each
 * stage a deadline. A stage that hangs is killed, a stage that crashes is
 * recorded with its signal and the call in progress, and a fresh worker
 * carries on with the next stage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access/cuda.h"
#include "access/reg.h"
#include "access/symtab.h"
#include "access/vendor.h"
#include "access/verbs.h"

struct stage_def {
	const char *name;
	void (*run)(const struct vendor_options *opt, struct vendor_facts *vf,
		    struct stage_status *st);
};

static const struct stage_def stages[WSTAGE_COUNT] = {
	[WSTAGE_CUDA] = { .name = "cuda", .run = cuda_stage_query },
	[WSTAGE_CUDA_EXPORT] = { .name = "cuda-export", .run = cuda_stage_export },
	[WSTAGE_VERBS] = { .name = "verbs", .run = verbs_stage_probe },
	[WSTAGE_REGISTRATION] = { .name = "registration", .run = reg_stage },
};

volatile sig_atomic_t vendor_interrupted;

const char *stage_name(enum worker_stage s)
{
	return s < WSTAGE_COUNT ? stages[s].name : "?";
}

static bool stage_wanted(const struct vendor_options *opt, int s)
{
	switch (s) {
	case WSTAGE_CUDA:
		return !opt->skip_cuda;
	case WSTAGE_CUDA_EXPORT:
		return !opt->skip_cuda && !opt->skip_export && !opt->no_alloc &&
		       !opt->cuda_poisoned;
	case WSTAGE_VERBS:
		return !opt->skip_verbs;
	case WSTAGE_REGISTRATION:
		/* Runs without CUDA too: the host-memory control needs verbs only. */
		return !opt->skip_verbs && !opt->verbs_poisoned &&
		       !opt->skip_registration && !opt->no_alloc;
	default:
		return false;
	}
}

static void tick(int fd)
{
	char c = 's';

	while (write(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void __attribute__((noreturn))
worker_main(const struct vendor_options *opt, struct vendor_facts *vf,
	    int first, int fd)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	for (int s = first; s < WSTAGE_COUNT; s++) {
		struct stage_status *st = &vf->stage[s];
		double t0;

		if (!stage_wanted(opt, s))
			continue;
		st->call[0] = '\0';
		st->pid = (int)getpid();
		st->state = STAGE_RUNNING;
		tick(fd);
		t0 = now_ms();
		stages[s].run(opt, vf, st);
		st->seconds = (now_ms() - t0) / 1e3;
		st->state = STAGE_DONE;
		tick(fd);
	}
	cuda_release_all();
	_exit(0);
}

static int running_stage(const struct vendor_facts *vf)
{
	for (int s = 0; s < WSTAGE_COUNT; s++)
		if (vf->stage[s].state == STAGE_RUNNING)
			return s;
	return -1;
}

/* Run one worker from stage `first`; returns the stage to resume at. */
static int run_worker(const struct vendor_options *opt,
		      struct vendor_facts *vf, int first)
{
	int pipefd[2], status = 0, cur = -1;
	double deadline = 0, started = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		goto fail;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		goto fail;
	}
	if (pid == 0) {
		close(pipefd[0]);
		worker_main(opt, vf, first, pipefd[1]);
	}
	close(pipefd[1]);

	for (;;) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
		int s = running_stage(vf), timeout_ms, ret;
		char buf[64];

		if (s != cur) {
			cur = s;
			started = now_ms();
			deadline = started + opt->stage_timeout * 1e3;
		}
		timeout_ms = cur < 0 ? 1000 : (int)(deadline - now_ms()) + 1;
		if (timeout_ms < 0)
			timeout_ms = 0;
		ret = poll(&p, 1, timeout_ms);
		if (vendor_interrupted) {
			/* The worker's resources die with it: the kernel and
			 * the drivers release MRs, QPs and GPU memory. */
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(pipefd[0]);
			for (int s2 = first; s2 < WSTAGE_COUNT; s2++)
				if (stage_wanted(opt, s2) &&
				    vf->stage[s2].state != STAGE_DONE)
					vf->stage[s2].state = STAGE_INTERRUPTED;
			return WSTAGE_COUNT;
		}
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret == 0 && cur >= 0 && now_ms() >= deadline) {
			struct stage_status *st = &vf->stage[cur];

			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(pipefd[0]);
			st->state = STAGE_TIMEOUT;
			st->seconds = (now_ms() - started) / 1e3;
			return cur + 1;
		}
		if (ret > 0) {
			ssize_t n = read(pipefd[0], buf, sizeof(buf));

			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				break;	/* worker is gone */
		}
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cur = running_stage(vf);
	if (cur < 0)
		return WSTAGE_COUNT;
	/* Died inside a stage: a signal, or a library calling exit(). */
	vf->stage[cur].state = STAGE_CRASHED;
	vf->stage[cur].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	vf->stage[cur].seconds = (now_ms() - started) / 1e3;
	return cur + 1;
fail:
	for (int s = first; s < WSTAGE_COUNT; s++)
		if (stage_wanted(opt, s))
			vf->stage[s].state = STAGE_FAILED;
	return WSTAGE_COUNT;
}

/* Which libraries a stage calls into. */
static bool uses_cuda(int s)
{
	return s == WSTAGE_CUDA || s == WSTAGE_CUDA_EXPORT ||
	       s == WSTAGE_REGISTRATION;
}

static bool uses_verbs(int s)
{
	return s == WSTAGE_VERBS || s == WSTAGE_REGISTRATION;
}

void vendor_collect(const struct vendor_options *in, struct vendor_facts *vf)
{
	struct vendor_options copy = *in, *opt = &copy;
	struct vendor_facts *shared;
	int next = 0;

	memset(vf, 0, sizeof(*vf));
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		for (int s = 0; s < WSTAGE_COUNT; s++)
			if (stage_wanted(opt, s))
				vf->stage[s].state = STAGE_FAILED;
		return;
	}
	memset(shared, 0, sizeof(*shared));
	while (next < WSTAGE_COUNT) {
		while (next < WSTAGE_COUNT && !stage_wanted(opt, next))
			next++;
		if (next >= WSTAGE_COUNT)
			break;
		if (vendor_interrupted) {
			for (; next < WSTAGE_COUNT; next++)
				if (stage_wanted(opt, next))
					shared->stage[next].state = STAGE_INTERRUPTED;
			break;
		}
		{
			int ran = next;

			next = run_worker(opt, shared, next);
			/* A stage that hung or crashed poisons its libraries;
			 * the registration stage is the only one using both,
			 * so it is blamed on the call in progress. */
			for (int s = ran; s < next; s++) {
				const struct stage_status *st = &shared->stage[s];

				if (st->state != STAGE_TIMEOUT &&
				    st->state != STAGE_CRASHED)
					continue;
				if (uses_cuda(s) && (s != WSTAGE_REGISTRATION ||
						     !strncmp(st->call, "cu", 2)))
					opt->cuda_poisoned = true;
				if (uses_verbs(s) && (s != WSTAGE_REGISTRATION ||
						      strncmp(st->call, "cu", 2)))
					opt->verbs_poisoned = true;
			}
			for (int s = next; s < WSTAGE_COUNT; s++)
				if (shared->stage[s].state == STAGE_NOT_RUN &&
				    !stage_wanted(opt, s) && stage_wanted(in, s))
					shared->stage[s].state = STAGE_SKIPPED_DEP;
		}
	}
	memcpy(vf, shared, sizeof(*vf));
	munmap(shared, sizeof(*shared));
}
