// SPDX-License-Identifier: MIT
/*
 * Vendor-library isolation. All libcuda and libibverbs calls run in one
 * forked worker for the whole run (CUDA is initialised once, as the driver's
 * own cost dominates); NVML's run at the same time in a second worker of
 * its own (a "lane"), so its cost hides behind cuInit and the allocations
 * and a hang or crash in either library loses nothing of the other's. The worker writes its facts into a shared anonymous
 * mapping; the parent gives each stage a deadline. A stage that hangs is
 * killed, a stage that crashes is recorded with its signal and the call in
 * progress, and a fresh worker carries on with the next stage.
 *
 * The parent trusts nothing the libraries do to the process: the shared
 * mapping, not the pipe, says how far the worker got, so a library that
 * forks a helper holding the pipe open or closes every descriptor cannot
 * stall the parent. Every wait polls against a deadline; the worker runs in
 * its own process group, which is killed (SIGKILL) and reaped on every exit
 * path, and dies with the parent (PR_SET_PDEATHSIG). Each stage's stdout and
 * stderr go to a pipe of their own, which the parent drains: what a library
 * printed becomes evidence, never part of the report streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "access/cuda.h"
#include "access/nvml.h"
#include "access/peer_run.h"
#include "access/reg.h"
#include "access/symtab.h"
#include "access/sysroot.h"
#include "access/vendor.h"
#include "access/verbs.h"

/* How long a SIGKILLed worker may take to be reaped (a task stuck in the
 * driver dies only when the driver lets go); then it is left to init. */
#define REAP_GRACE_MS	2000.0
/* The parent wakes at least this often to check the worker's state. */
#define POLL_TICK_MS	100

static void release_stage(const struct vendor_options *opt,
			  struct vendor_facts *vf, struct stage_status *st)
{
	(void)opt;
	(void)vf;
	snprintf(st->call, sizeof(st->call), "CUDA context release");
	cuda_release_all();
}

struct stage_def {
	const char *name;
	void (*run)(const struct vendor_options *opt, struct vendor_facts *vf,
		    struct stage_status *st);
};

static const struct stage_def stages[WSTAGE_COUNT] = {
	[WSTAGE_CUDA] = { .name = "cuda", .run = cuda_stage_query },
	[WSTAGE_CUDA_EXPORT] = { .name = "cuda-export", .run = cuda_stage_export },
	[WSTAGE_VERBS] = { .name = "verbs", .run = verbs_stage_probe },
	[WSTAGE_NVML] = { .name = "nvml", .run = nvml_stage_query },
	[WSTAGE_REGISTRATION] = { .name = "registration", .run = reg_stage },
	[WSTAGE_RELEASE] = { .name = "release", .run = release_stage },
	[WSTAGE_PEER] = { .name = "peer", .run = peer_stage },
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
	case WSTAGE_NVML:
		return !opt->skip_nvml;
	case WSTAGE_REGISTRATION:
		/* Runs without CUDA too: the host-memory control needs verbs only. */
		return !opt->skip_verbs && !opt->verbs_poisoned &&
		       !opt->skip_registration && !opt->no_alloc;
	case WSTAGE_RELEASE:
		return !opt->skip_cuda && !opt->cuda_poisoned;
	case WSTAGE_PEER:
		return opt->peer_plan && !opt->cuda_poisoned &&
		       !opt->verbs_poisoned;
	default:
		return false;
	}
}

#define SBIT(s)		(1u << (s))
#define ALL_STAGES	(SBIT(WSTAGE_COUNT) - 1)
/* The lanes: NVML's stage on its own worker, every other on the main one. */
#define NVML_LANE	SBIT(WSTAGE_NVML)
#define MAIN_LANE	(ALL_STAGES & ~NVML_LANE)

static bool in_lane(unsigned int mask, int s)
{
	return (mask & SBIT(s)) != 0;
}

/* A lane's slot in vendor_facts.lane_done. */
static int lane_index(unsigned int mask)
{
	return mask == NVML_LANE;
}

static bool run_spent(const struct vendor_options *opt)
{
	return opt->run_deadline_ms > 0 && now_ms() >= opt->run_deadline_ms;
}

/* One worker's descriptors: a wake-up pipe and a stdout/stderr pipe per
 * stage (so what was printed is attributed to the stage exactly). */
struct worker_fds {
	int tick[2];
	int out[WSTAGE_COUNT][2];
	/* Inode of each write end: a library that closed our descriptors
	 * may have reused the numbers, and those are not ours to write. */
	ino_t tick_ino;
	ino_t out_ino[WSTAGE_COUNT];
};

static void fds_init(struct worker_fds *f)
{
	memset(f, 0, sizeof(*f));
	f->tick[0] = f->tick[1] = -1;
	for (int s = 0; s < WSTAGE_COUNT; s++)
		f->out[s][0] = f->out[s][1] = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void close_write_ends(struct worker_fds *f)
{
	close_fd(&f->tick[1]);
	for (int s = 0; s < WSTAGE_COUNT; s++)
		close_fd(&f->out[s][1]);
}

static void close_read_ends(struct worker_fds *f)
{
	close_fd(&f->tick[0]);
	for (int s = 0; s < WSTAGE_COUNT; s++)
		close_fd(&f->out[s][0]);
}

static ino_t fd_ino(int fd)
{
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISFIFO(sb.st_mode))
		return 0;
	return sb.st_ino;
}

/* Returns the name of the call that failed, or NULL. */
static const char *fds_open(struct worker_fds *f,
			    const struct vendor_options *opt, int first,
			    unsigned int mask)
{
	if (pipe2(f->tick, O_CLOEXEC) < 0)
		return "pipe2";
	if (fcntl(f->tick[0], F_SETFL, O_NONBLOCK) < 0)
		return "fcntl";
	f->tick_ino = fd_ino(f->tick[1]);
	for (int s = first; s < WSTAGE_COUNT; s++) {
		if (!stage_wanted(opt, s) || !in_lane(mask, s))
			continue;
		if (pipe2(f->out[s], O_CLOEXEC) < 0)
			return "pipe2";
		if (fcntl(f->out[s][0], F_SETFL, O_NONBLOCK) < 0)
			return "fcntl";
		f->out_ino[s] = fd_ino(f->out[s][1]);
	}
	return NULL;
}

/* Still the pipe we made (a library may have closed it and reused the
 * number)? */
static bool fd_ours(int fd, ino_t ino)
{
	return fd >= 0 && ino && fd_ino(fd) == ino;
}

static void tick(const struct worker_fds *f)
{
	char c = 's';

	if (!fd_ours(f->tick[1], f->tick_ino))
		return;
	while (write(f->tick[1], &c, 1) < 0 && errno == EINTR)
		;
}

/* A stage's output goes to its own pipe; flush what stdio buffered first. */
static void redirect_output(struct worker_fds *f, int s)
{
	fflush(stdout);
	fflush(stderr);
	if (!fd_ours(f->out[s][1], f->out_ino[s]))
		return;
	dup2(f->out[s][1], STDOUT_FILENO);
	dup2(f->out[s][1], STDERR_FILENO);
	close(f->out[s][1]);
	f->out[s][1] = -1;
}

static void __attribute__((noreturn))
worker_main(const struct vendor_options *opt, struct vendor_facts *vf,
	    int first, unsigned int mask, struct worker_fds *f, pid_t parent)
{
	int devnull;

	/* Dies with the parent; if the parent is already gone, the death
	 * signal was armed too late to fire. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	close_read_ends(f);
	/* The vendor libraries loaded here may close what they did not open. */
	sysroot_guard_fd(opt->sysroot);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		close(devnull);
	}
	for (int s = first; s < WSTAGE_COUNT; s++) {
		struct stage_status *st = &vf->stage[s];
		double t0;

		if (!stage_wanted(opt, s) || !in_lane(mask, s))
			continue;
		if (run_spent(opt)) {
			for (; s < WSTAGE_COUNT; s++)
				if (stage_wanted(opt, s) && in_lane(mask, s) &&
				    s != WSTAGE_RELEASE)
					vf->stage[s].state = STAGE_DEADLINE;
			break;
		}
		redirect_output(f, s);
		st->call[0] = '\0';
		st->pid = (int)getpid();
		t0 = now_ms();
		st->started_ms = t0;
		st->state = STAGE_RUNNING;
		tick(f);
		stages[s].run(opt, vf, st);
		fflush(stdout);
		fflush(stderr);
		st->seconds = (now_ms() - t0) / 1e3;
		/* A release that went through is no finding. */
		if (s == WSTAGE_RELEASE)
			memset(st, 0, sizeof(*st));
		else
			st->state = STAGE_DONE;
		tick(f);
	}
	/* Done: the parent may report while the driver tears this down. */
	__atomic_store_n(&vf->lane_done[lane_index(mask)], (int)getpid(),
			 __ATOMIC_RELEASE);
	tick(f);
	_exit(0);
}

static int running_stage(const struct vendor_facts *vf, unsigned int mask)
{
	for (int s = 0; s < WSTAGE_COUNT; s++)
		if (in_lane(mask, s) && vf->stage[s].state == STAGE_RUNNING)
			return s;
	return -1;
}

/* What the parent drained from a stage's output pipe. */
struct stage_output {
	char text[VF_OUTPUT];
	size_t len;
	unsigned long long total;
	bool truncated;
};

struct supervisor {
	const struct vendor_options *opt;
	struct vendor_facts *vf;		/* the shared mapping */
	struct stage_output out[WSTAGE_COUNT];
	bool progress;				/* stderr is a terminal */
	bool progress_shown;
	int progress_stage;
	long progress_secs;
};

static void keep_output(struct stage_output *o, const char *buf, size_t n)
{
	size_t i;

	o->total += n;
	for (i = 0; i < n && o->len < sizeof(o->text) - 1; i++)
		if (buf[i])	/* NUL-free: the evidence is a C string */
			o->text[o->len++] = buf[i];
	if (i < n)
		o->truncated = true;
	o->text[o->len] = '\0';
}

/* Read what is there now, never blocking (the pipes are O_NONBLOCK). */
static void drain_output(struct supervisor *sv, struct worker_fds *f)
{
	char buf[4096];

	for (int s = 0; s < WSTAGE_COUNT; s++) {
		for (int rounds = 0; f->out[s][0] >= 0 && rounds < 64; rounds++) {
			ssize_t n = read(f->out[s][0], buf, sizeof(buf));

			if (n > 0) {
				keep_output(&sv->out[s], buf, (size_t)n);
				continue;
			}
			if (n == 0 || (errno != EINTR && errno != EAGAIN))
				close_fd(&f->out[s][0]);	/* EOF */
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
	}
}

static void drain_ticks(struct worker_fds *f)
{
	char buf[64];
	ssize_t n;

	while (f->tick[0] >= 0 && (n = read(f->tick[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			close_fd(&f->tick[0]);
		if (n < 0)
			return;
	}
	close_fd(&f->tick[0]);	/* EOF: the worker (or a library) closed it */
}

/* One line on a terminal's stderr, overwritten, once the run is slow. */
static void show_progress(struct supervisor *sv, int cur)
{
	double now = now_ms();
	long secs;

	if (!sv->progress || cur < 0 ||
	    now - sv->opt->run_started_ms < 1000.0)
		return;
	secs = (long)((now - sv->vf->stage[cur].started_ms) / 1e3);
	if (sv->progress_shown && cur == sv->progress_stage &&
	    secs == sv->progress_secs)
		return;
	sv->progress_shown = true;
	sv->progress_stage = cur;
	sv->progress_secs = secs;
	fprintf(stderr, "\r\033[Kgdrcheck: %s stage, %ld s", stage_name(cur),
		secs);
	if (sv->vf->stage[cur].call[0])
		fprintf(stderr, " (%.40s)", sv->vf->stage[cur].call);
	fflush(stderr);
}

static void sleep_ms(double ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1e3),
		.tv_nsec = (long)((ms - (double)(time_t)(ms / 1e3) * 1e3) * 1e6),
	};

	nanosleep(&ts, NULL);
}

/*
 * Kill the worker's whole process group and reap the worker, waiting at
 * most REAP_GRACE_MS. *status is set when it was reaped.
 */
static bool kill_and_reap(pid_t pid, int *status)
{
	double until = now_ms() + REAP_GRACE_MS;
	/* Readable once the worker is gone: its exit wakes us at once, not
	 * at the next look (the driver's teardown of a CUDA process ends at
	 * no predictable time). -1 on a kernel before 5.3: look every 5 ms. */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool reaped = false;
	siginfo_t si;

	/* Kill the group while the leader is unreaped: its id cannot be
	 * reused as long as the leader is a zombie. */
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
		    errno != EINTR)
			goto out;	/* not our child any more */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		if (si.si_pid == pid)
			break;
		if (now_ms() >= until)
			goto out;
		if (pidfd >= 0) {
			struct pollfd p = { .fd = pidfd, .events = POLLIN };

			poll(&p, 1, 5);
		} else {
			sleep_ms(5);
		}
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	reaped = true;
out:
	if (pidfd >= 0)
		close(pidfd);
	return reaped;
}

/* Workers that finished their stages and are exiting, to be reaped after
 * the report (vendor_reap_finished); one per lane at most. */
static pid_t finished[2];

/* The children the orphan sweep leaves alone: gdrcheck's own host-side
 * helper, the worker of every lane still running and the finished ones
 * still exiting. */
#define MAX_SPARE 5

struct spare_set {
	pid_t pid[MAX_SPARE];
	int n;
};

static bool spared(const struct spare_set *sp, pid_t id)
{
	for (int i = 0; i < sp->n; i++)
		if (sp->pid[i] > 0 && sp->pid[i] == id)
			return true;
	return false;
}

/*
 * gdrcheck is a child subreaper (see vendor_collect): a helper a library
 * forked and moved out of the worker's group lands here once the worker
 * died. Kill and reap every such orphan; gdrcheck's other children, *sp
 * (its own helper, the other lane's worker), are left running and
 * unreaped: each is joined by its owner (waitpid on the orphans' ids
 * only, never on any child).
 */
static void reap_orphans(const struct spare_set *sp)
{
	char path[64], buf[4096];
	FILE *f;

	for (int round = 0; round < 8; round++) {
		pid_t ids[64];
		int n = 0;

		snprintf(path, sizeof(path), "/proc/self/task/%d/children",
			 (int)getpid());
		f = fopen(path, "re");
		if (!f)
			return;
		if (fgets(buf, sizeof(buf), f)) {
			char *p = buf, *end;

			for (long id; n < 64 && (id = strtol(p, &end, 10)) > 0;
			     p = end) {
				if (spared(sp, (pid_t)id))
					continue;
				kill((pid_t)id, SIGKILL);
				ids[n++] = (pid_t)id;
			}
		}
		fclose(f);
		if (!n)
			return;
		for (double until = now_ms() + 200; now_ms() < until;) {
			int left = 0;

			for (int i = 0; i < n; i++) {
				if (ids[i] > 0 && waitpid(ids[i], NULL, WNOHANG) != 0)
					ids[i] = 0;	/* reaped, or not ours */
				left += ids[i] > 0;
			}
			if (!left)
				break;
			sleep_ms(5);
		}
	}
}

static void mark_failed(const struct vendor_options *opt,
			struct vendor_facts *vf, int first, unsigned int mask,
			const char *call, int err)
{
	for (int s = first; s < WSTAGE_COUNT; s++) {
		if (!stage_wanted(opt, s) || s == WSTAGE_RELEASE ||
		    !in_lane(mask, s))
			continue;
		vf->stage[s].state = STAGE_FAILED;
		vf->stage[s].err = err;
		snprintf(vf->stage[s].call, sizeof(vf->stage[s].call), "%s",
			 call);
	}
}

/* Stages a stop left unfinished. A release never started is nothing to
 * report: the killed worker's contexts went with it. */
static void mark_rest(const struct vendor_options *opt,
		      struct vendor_facts *vf, int first, unsigned int mask,
		      enum stage_state state)
{
	for (int s = first; s < WSTAGE_COUNT; s++)
		if (stage_wanted(opt, s) && in_lane(mask, s) &&
		    (vf->stage[s].state == STAGE_RUNNING ||
		     (vf->stage[s].state == STAGE_NOT_RUN &&
		      s != WSTAGE_RELEASE)))
			vf->stage[s].state = state;
}

/*
 * Stage st has begun: its start time (the worker's clock, if sane), and
 * the deadline it runs under, the stage's own or the run's if sooner.
 */
static double stage_deadline(const struct vendor_options *opt,
			     struct stage_status *st)
{
	double started = st->started_ms, deadline;

	/* Trust the worker's clock only if sane. */
	if (!(started > 0 && started <= now_ms()))
		started = now_ms();
	st->started_ms = started;
	deadline = started + opt->stage_timeout * 1e3;
	st->by_deadline = opt->run_deadline_ms > 0 &&
			  opt->run_deadline_ms < deadline;
	if (st->by_deadline)
		deadline = opt->run_deadline_ms;
	st->limit = (deadline - started) / 1e3;
	return deadline;
}

/*
 * One worker process and the stages it runs: the main lane (libcuda,
 * libibverbs: restarted past a stage that hung or crashed) and NVML's.
 */
struct lane {
	unsigned int mask;	/* the stages it may run */
	bool live;		/* a worker is running */
	pid_t pid;
	int first;		/* where this worker began */
	int cur;		/* stage running, -1 between stages */
	double deadline;	/* of cur */
	struct worker_fds f;
	bool stopped;		/* killed and reaped (lane_stop) */
	bool reaped;
	int status;
};

/* Kill the lane's worker group and reap it, before its stages are marked:
 * a worker still running could overwrite the marks. */
static void lane_stop(struct lane *self)
{
	if (self->stopped)
		return;
	self->reaped = kill_and_reap(self->pid, &self->status);
	self->stopped = true;
}

/* How long to wait for output: a tick, or less when a deadline is near. */
static int poll_timeout(const struct vendor_options *opt,
			const struct lane *ln, int nlanes)
{
	int timeout_ms = POLL_TICK_MS;

	for (int l = 0; l < nlanes; l++)
		if (ln[l].live && ln[l].cur >= 0 &&
		    ln[l].deadline - now_ms() < timeout_ms)
			timeout_ms = (int)(ln[l].deadline - now_ms()) + 1;
	if (opt->run_deadline_ms > 0 &&
	    opt->run_deadline_ms - now_ms() < timeout_ms)
		timeout_ms = (int)(opt->run_deadline_ms - now_ms()) + 1;
	return timeout_ms < 0 ? 0 : timeout_ms;
}

/* Wait for any live lane's ticks or output, at most timeout_ms. */
static void wait_output(const struct lane *ln, int nlanes, int timeout_ms)
{
	struct pollfd p[2 * (1 + WSTAGE_COUNT)];
	int n = 0;

	for (int l = 0; l < nlanes; l++) {
		const struct worker_fds *f = &ln[l].f;

		if (!ln[l].live)
			continue;
		if (f->tick[0] >= 0)
			p[n++] = (struct pollfd){ .fd = f->tick[0],
						  .events = POLLIN };
		for (int o = 0; o < WSTAGE_COUNT; o++)
			if (f->out[o][0] >= 0)
				p[n++] = (struct pollfd){ .fd = f->out[o][0],
							  .events = POLLIN };
	}
	/* EINTR (a signal) and timeouts all loop back to the checks. */
	if (n)
		poll(p, (nfds_t)n, timeout_ms);
	else
		/*
		 * Every pipe closed: the workers are exiting. Look again
		 * soon rather than a whole tick later (the 100 ms the
		 * bench saw as a bimodal wall time).
		 */
		sleep_ms(timeout_ms < 2 ? timeout_ms : 2);
}

/* Fork the lane's worker from stage `first`. False: it could not start
 * (its stages are marked FAILED). */
static bool lane_start(struct supervisor *sv, struct lane *ln, int first)
{
	const struct vendor_options *opt = sv->opt;
	const char *failed;
	pid_t pid, self;

	ln->first = first;
	ln->cur = -1;
	ln->deadline = 0;
	fds_init(&ln->f);
	failed = fds_open(&ln->f, opt, first, ln->mask);
	if (!failed) {
		fflush(NULL);
		self = getpid();
		pid = fork();
		if (pid == 0)
			worker_main(opt, sv->vf, first, ln->mask, &ln->f, self);
		if (pid < 0)
			failed = "fork";
	}
	if (failed) {
		int err = errno;

		close_write_ends(&ln->f);
		close_read_ends(&ln->f);
		mark_failed(opt, sv->vf, first, ln->mask, failed, err);
		return false;
	}
	/* Both sides set the group, so no kill(-pid) can miss it. */
	setpgid(pid, pid);
	close_write_ends(&ln->f);
	ln->pid = pid;
	ln->live = true;
	ln->stopped = ln->reaped = false;
	ln->status = 0;
	return true;
}

/* The other lanes' workers, and gdrcheck's own helper. */
static void spares_of(const struct supervisor *sv, const struct lane *ln,
		      int nlanes, const struct lane *self,
		      struct spare_set *sp)
{
	sp->n = 0;
	sp->pid[sp->n++] = sv->opt->spare_child;
	for (int l = 0; l < nlanes && sp->n < MAX_SPARE; l++)
		if (&ln[l] != self && ln[l].live)
			sp->pid[sp->n++] = ln[l].pid;
	for (int l = 0; l < 2 && sp->n < MAX_SPARE; l++)
		if (finished[l] > 0)
			sp->pid[sp->n++] = finished[l];
}

/*
 * The lane's worker said it finished every stage and is exiting: its facts
 * are final. Keep what it printed and leave it to vendor_reap_finished(),
 * so the driver's teardown of the process runs beside the gates.
 */
static int lane_finished(struct supervisor *sv, struct lane *self)
{
	drain_output(sv, &self->f);
	close_read_ends(&self->f);
	self->live = false;
	finished[lane_index(self->mask)] = self->pid;
	return WSTAGE_COUNT;
}

void vendor_reap_finished(void)
{
	struct spare_set none = { .n = 0 };
	bool any = false;

	for (int l = 0; l < 2; l++) {
		int status;

		if (finished[l] <= 0)
			continue;
		kill_and_reap(finished[l], &status);
		finished[l] = 0;
		any = true;
	}
	/* Helpers the finished workers forked and left behind. */
	if (any)
		reap_orphans(&none);
}

/*
 * The lane's worker stopped (exited, was killed or is to be killed now):
 * reap it and its orphans, keep what it printed. Returns the stage to
 * resume the lane at.
 */
static int lane_end(struct supervisor *sv, struct lane *ln, int nlanes,
		    struct lane *self, int ret, bool died)
{
	struct vendor_facts *vf = sv->vf;
	struct spare_set sp;
	int status, cur;
	bool reaped;

	lane_stop(self);
	status = self->status;
	reaped = self->reaped;
	self->live = false;
	if (died) {
		cur = running_stage(vf, self->mask);
		if (cur >= 0) {
			/* Died inside a stage: a signal, or a library
			 * calling exit(). */
			vf->stage[cur].state = STAGE_CRASHED;
			vf->stage[cur].signal = reaped && WIFSIGNALED(status) ?
						WTERMSIG(status) : 0;
			vf->stage[cur].seconds =
				(now_ms() - vf->stage[cur].started_ms) / 1e3;
			ret = cur + 1;
		}
	}
	spares_of(sv, ln, nlanes, self, &sp);
	reap_orphans(&sp);
	drain_output(sv, &self->f);
	close_read_ends(&self->f);
	return ret;
}

/*
 * Look at one live lane: -1 while its worker runs on, else it has ended
 * (finished, timed out, crashed, stopped) and the stage to resume at.
 */
static int lane_check(struct supervisor *sv, struct lane *ln, int nlanes,
		      struct lane *self)
{
	const struct vendor_options *opt = sv->opt;
	struct vendor_facts *vf = sv->vf;
	siginfo_t si;
	int s;

	drain_output(sv, &self->f);
	drain_ticks(&self->f);
	if (__atomic_load_n(&vf->lane_done[lane_index(self->mask)],
			    __ATOMIC_ACQUIRE) == self->pid)
		return lane_finished(sv, self);
	if (vendor_interrupted) {
		/* The worker's resources die with it: the kernel and the
		 * drivers release MRs, QPs and GPU memory. */
		lane_stop(self);
		mark_rest(opt, vf, self->first, self->mask, STAGE_INTERRUPTED);
		return lane_end(sv, ln, nlanes, self, WSTAGE_COUNT, false);
	}
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)self->pid, &si,
		   WEXITED | WNOHANG | WNOWAIT) < 0 && errno != EINTR)
		return lane_end(sv, ln, nlanes, self, WSTAGE_COUNT, true);
	if (si.si_pid == self->pid)	/* finished, crashed, a library's exit */
		return lane_end(sv, ln, nlanes, self, WSTAGE_COUNT, true);
	s = running_stage(vf, self->mask);
	if (s != self->cur) {
		self->cur = s;
		if (s >= 0)
			self->deadline = stage_deadline(opt, &vf->stage[s]);
	}
	if (self->cur >= 0 && now_ms() >= self->deadline) {
		struct stage_status *st = &vf->stage[self->cur];
		int ret = self->cur + 1;

		lane_stop(self);
		st->state = STAGE_TIMEOUT;
		st->seconds = (now_ms() - st->started_ms) / 1e3;
		if (st->by_deadline) {
			mark_rest(opt, vf, self->cur + 1, self->mask,
				  STAGE_DEADLINE);
			ret = WSTAGE_COUNT;
		}
		return lane_end(sv, ln, nlanes, self, ret, false);
	}
	/* Between stages: the run's budget still holds. */
	if (self->cur < 0 && run_spent(opt)) {
		lane_stop(self);
		mark_rest(opt, vf, self->first, self->mask, STAGE_DEADLINE);
		return lane_end(sv, ln, nlanes, self, WSTAGE_COUNT, false);
	}
	return -1;
}

/* Which libraries a stage calls into. */
static bool uses_cuda(int s)
{
	return s == WSTAGE_CUDA || s == WSTAGE_CUDA_EXPORT ||
	       s == WSTAGE_REGISTRATION || s == WSTAGE_RELEASE ||
	       s == WSTAGE_PEER;
}

static bool uses_verbs(int s)
{
	return s == WSTAGE_VERBS || s == WSTAGE_REGISTRATION ||
	       s == WSTAGE_PEER;
}

/* Stages calling both: a hang or crash is blamed on the call in progress. */
static bool both_libs(int s)
{
	return s == WSTAGE_REGISTRATION || s == WSTAGE_PEER;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = '\0')

/* The worker wrote these strings: end each inside its array, whatever a
 * crashing library left in the mapping. */
static void terminate_strings(struct vendor_facts *vf)
{
	int ngpu, n;

	for (int s = 0; s < WSTAGE_COUNT; s++)
		TERMINATE(vf->stage[s].call);
	TERMINATE(vf->cuda.lib.path);
	TERMINATE(vf->cuda.lib.error);
	TERMINATE(vf->cuda.lib.missing_required);
	TERMINATE(vf->cuda.lib.missing_optional);
	TERMINATE(vf->cuda.init.name);
	TERMINATE(vf->cuda.version_call.name);
	TERMINATE(vf->cuda.count_call.name);
	ngpu = vf_upto(vf->cuda.gpus_recorded, vf->cap.gpus);
	for (int i = 0; i < ngpu; i++) {
		struct cuda_gpu *g = &vf->cuda.gpus[i];

		TERMINATE(g->name);
		TERMINATE(g->pci);
		TERMINATE(g->attr_call.name);
		TERMINATE(g->ctx_retain.name);
		TERMINATE(g->alloc.name);
		TERMINATE(g->export_call.name);
		TERMINATE(g->enum_call.name);
		TERMINATE(g->enum_fn);
		TERMINATE(g->setup_call.name);
		TERMINATE(g->fd_link);
		TERMINATE(g->fd_exp_name);
	}
	TERMINATE(vf->verbs.lib.path);
	TERMINATE(vf->verbs.lib.error);
	TERMINATE(vf->verbs.lib.missing_required);
	TERMINATE(vf->verbs.lib.missing_optional);
	n = vf_upto(vf->verbs.count, vf->cap.nics);
	for (int i = 0; i < n; i++)
		TERMINATE(vf->verbs.nics[i].name);
	TERMINATE(vf->nvml.lib.path);
	TERMINATE(vf->nvml.lib.error);
	TERMINATE(vf->nvml.lib.missing_required);
	TERMINATE(vf->nvml.lib.missing_optional);
	TERMINATE(vf->nvml.init.name);
	TERMINATE(vf->nvml.count_call.name);
	TERMINATE(vf->nvml.shutdown.name);
	TERMINATE(vf->nvml.driver_version);
	n = vf_upto(vf->nvml.gpus_recorded, vf->cap.gpus);
	for (int i = 0; i < n; i++) {
		struct nvml_gpu *g = &vf->nvml.gpus[i];

		TERMINATE(g->uuid);
		TERMINATE(g->pci);
		TERMINATE(g->fail.name);
		TERMINATE(g->fail_fn);
		for (int l = 0; l < NV_MAX_LINKS; l++)
			TERMINATE(g->links[l].remote_pci);
	}
	TERMINATE(vf->reg.alloc_fail.name);
	TERMINATE(vf->reg.alloc_fn);
	n = vf_upto(vf->reg.npairs, vf->cap.pairs);
	for (int i = 0; i < n; i++) {
		struct reg_pair *p = &vf->reg.pairs[i];

		TERMINATE(p->nic);
		TERMINATE(p->skip);
		TERMINATE(p->export_call.name);
		TERMINATE(p->peermem.call);
		TERMINATE(p->dmabuf.call);
		TERMINATE(p->dp_peermem.step);
		TERMINATE(p->dp_peermem.dtoh.name);
		TERMINATE(p->dp_dmabuf.step);
		TERMINATE(p->dp_dmabuf.dtoh.name);
		TERMINATE(p->vmm_export_call.name);
		TERMINATE(p->vmm_peermem.call);
		TERMINATE(p->vmm_dmabuf.call);
		TERMINATE(p->dp_vmm_peermem.step);
		TERMINATE(p->dp_vmm_peermem.dtoh.name);
		TERMINATE(p->dp_vmm_peermem.htod.name);
		TERMINATE(p->dp_vmm_dmabuf.step);
		TERMINATE(p->dp_vmm_dmabuf.dtoh.name);
		TERMINATE(p->dp_vmm_dmabuf.htod.name);
	}
	for (int i = 0; i < ngpu; i++) {
		struct reg_vmm_gpu *v = &vf->reg.vmm[i];

		TERMINATE(v->missing);
		TERMINATE(v->attr_call.name);
		TERMINATE(v->fail_fn);
		TERMINATE(v->fail.name);
	}
	n = vf_upto(vf->reg.nnics, vf->cap.nics);
	for (int i = 0; i < n; i++) {
		TERMINATE(vf->reg.nics[i].nic);
		TERMINATE(vf->reg.nics[i].host.call);
		TERMINATE(vf->reg.nics[i].g2g_error);
	}
	for (int i = 0; i < KMSG_MAX_LINES; i++)
		TERMINATE(vf->reg.kmsg[i]);
}

/*
 * Floors of the capacities: what the libraries may list beyond what the
 * tree shows (a container's partial /sys, a test double).
 */
#define CAPS_FLOOR_GPUS 128
#define CAPS_FLOOR_NICS 128

/*
 * At least the number of NVIDIA display/3D controllers among the PCI
 * functions of the tree: counted only where that could pass the floor.
 */
static int count_pci_gpus(struct sysroot *sr)
{
	char **names = NULL, path[320], buf[16];
	size_t n = 0;
	int gpus = 0;

	if (sysroot_list(sr, "/sys/bus/pci/devices", &names, &n) < 0)
		return 0;
	/* No more functions than the floor: no need to tell which are
	 * GPUs (two reads each, before the worker can start). */
	if (n <= CAPS_FLOOR_GPUS) {
		sysroot_free_list(names, n);
		return (int)n;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 names[i]);
		if (sysroot_read_line(sr, path, buf, sizeof(buf)) < 0 ||
		    strcmp(buf, "0x10de"))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class",
			 names[i]);
		if (sysroot_read_line(sr, path, buf, sizeof(buf)) >= 0 &&
		    !strncmp(buf, "0x03", 4))
			gpus++;
	}
	sysroot_free_list(names, n);
	return gpus;
}

static int count_entries(struct sysroot *sr, const char *dir)
{
	char **names = NULL;
	size_t n = 0;

	if (sysroot_list(sr, dir, &names, &n) < 0)
		return 0;
	sysroot_free_list(names, n);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

static int clamp_cap(long long want, int floor, int max)
{
	return want < floor ? floor : want > max ? max : (int)want;
}

/*
 * Capacities from what the node shows before the worker starts: every
 * GPU and RDMA device it lists, and every pair of them, fit (the
 * libraries enumerate from the same sysfs).
 */
static void node_caps(struct sysroot *sr, struct vf_caps *caps)
{
	int ib = count_entries(sr, "/sys/class/infiniband"),
	    uv = count_entries(sr, "/sys/class/infiniband_verbs");

	caps->gpus = clamp_cap(count_pci_gpus(sr), CAPS_FLOOR_GPUS,
			       VF_CAPS_MAX_GPUS);
	caps->nics = clamp_cap(ib > uv ? ib : uv, CAPS_FLOOR_NICS,
			       VF_CAPS_MAX_NICS);
	caps->pairs = clamp_cap((long long)caps->gpus * caps->nics, 0,
				VF_CAPS_MAX_PAIRS);
}

/*
 * A main-lane worker that began at `ran` stopped before `next`: a stage
 * that hung or crashed poisons its libraries (the registration stage, the
 * only one using both, is blamed on the call in progress), and the stages
 * that poison rules out are SKIPPED_DEP.
 */
static void after_main(const struct vendor_options *in,
		       struct vendor_options *opt, struct vendor_facts *vf,
		       int ran, int next)
{
	for (int s = ran; s < next; s++) {
		const struct stage_status *st = &vf->stage[s];

		if (!in_lane(MAIN_LANE, s) || (st->state != STAGE_TIMEOUT &&
					       st->state != STAGE_CRASHED))
			continue;
		if (uses_cuda(s) && (!both_libs(s) ||
				     !strncmp(st->call, "cu", 2)))
			opt->cuda_poisoned = true;
		if (uses_verbs(s) && (!both_libs(s) ||
				      strncmp(st->call, "cu", 2)))
			opt->verbs_poisoned = true;
	}
	/* (The release stage is no finding of its own.) */
	for (int s = next; s < WSTAGE_RELEASE; s++)
		if (vf->stage[s].state == STAGE_NOT_RUN &&
		    !stage_wanted(opt, s) && stage_wanted(in, s))
			vf->stage[s].state = STAGE_SKIPPED_DEP;
}

/* Start the lane's worker at its next wanted stage from `next`, unless the
 * run was stopped or spent (then those stages say so). */
static void lane_resume(struct supervisor *sv, struct lane *ln, int next)
{
	const struct vendor_options *opt = sv->opt;

	while (next < WSTAGE_COUNT &&
	       (!stage_wanted(opt, next) || !in_lane(ln->mask, next)))
		next++;
	if (next >= WSTAGE_COUNT)
		return;
	if (vendor_interrupted)
		mark_rest(opt, sv->vf, next, ln->mask, STAGE_INTERRUPTED);
	else if (run_spent(opt))
		mark_rest(opt, sv->vf, next, ln->mask, STAGE_DEADLINE);
	else
		lane_start(sv, ln, next);
}

/*
 * Both lanes at once: NVML's worker beside the main one, each under its
 * stages' deadlines; the main lane restarts past a stage that hung or
 * crashed. vf->nvml_settled tells the main worker (registration reads
 * NVML's C2C answer) that NVML's lane is over.
 */
static void supervise(struct supervisor *sv, const struct vendor_options *in,
		      struct vendor_options *opt, struct vendor_facts *vf)
{
	struct lane lanes[2] = { { .mask = MAIN_LANE, .cur = -1 },
				 { .mask = NVML_LANE, .cur = -1 } };

	/* The main lane first: its cuInit is the run's critical path. */
	lane_resume(sv, &lanes[0], 0);
	lane_resume(sv, &lanes[1], 0);
	vf->nvml_settled = !lanes[1].live;
	/* The workers are off (forked): the parent's own reading now. */
	if (opt->meanwhile)
		opt->meanwhile(opt->meanwhile_arg);
	while (lanes[0].live || lanes[1].live) {
		for (int l = 0; l < 2; l++) {
			int ran = lanes[l].first, next;

			if (!lanes[l].live)
				continue;
			next = lane_check(sv, lanes, 2, &lanes[l]);
			if (next < 0)
				continue;
			if (l == 1) {
				vf->nvml_settled = true;
				continue;
			}
			after_main(in, opt, vf, ran, next);
			lane_resume(sv, &lanes[0], next);
		}
		show_progress(sv, lanes[0].live ? lanes[0].cur : lanes[1].cur);
		if (lanes[0].live || lanes[1].live)
			wait_output(lanes, 2, poll_timeout(opt, lanes, 2));
	}
}

void vendor_collect(const struct vendor_options *in, struct vendor_facts *vf)
{
	/* Static, not heap: a worker leaves by _exit() with it allocated. */
	static struct supervisor supervisor;
	struct vendor_options copy = *in, *opt = &copy;
	struct supervisor *sv = &supervisor;
	struct vendor_facts *shared, own;
	struct vf_caps caps;
	int err;

	vendor_reap_finished();		/* an earlier call's */
	memset(vf, 0, sizeof(*vf));
	memset(sv, 0, sizeof(*sv));
	node_caps(opt->sysroot, &caps);
	/* The arrays and the header the worker writes are both shared; the
	 * parent keeps its own copy of where the arrays are. */
	err = vendor_facts_alloc(&own, &caps, true);
	shared = err ? MAP_FAILED : mmap(NULL, sizeof(*shared),
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		if (!err)
			err = -errno;
		vendor_facts_free(&own);
		mark_failed(opt, vf, 0, ALL_STAGES, "mmap", -err);
		return;
	}
	*shared = own;
	sv->opt = opt;
	sv->vf = shared;
	sv->progress = isatty(STDERR_FILENO) == 1;
	/* Helpers a library forks and moves out of the worker's process
	 * group are re-parented here, not to init, so they can be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	supervise(sv, in, opt, shared);
	if (sv->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	memcpy(vf, shared, sizeof(*vf));
	munmap(shared, sizeof(*shared));
	vf->cap = own.cap;
	vf->arena = own.arena;
	vf->arena_size = own.arena_size;
	vf->arena_shared = own.arena_shared;
	vendor_facts_layout(vf);
	terminate_strings(vf);
	for (int s = 0; s < WSTAGE_COUNT; s++) {
		memcpy(vf->stage[s].output, sv->out[s].text,
		       sizeof(vf->stage[s].output));
		vf->stage[s].output_bytes = sv->out[s].total;
		vf->stage[s].output_truncated = sv->out[s].truncated;
	}
}
