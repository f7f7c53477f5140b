// SPDX-License-Identifier: MIT
/*
 * Layers 6 and 7 in the worker: real registrations of GPU memory and a
 * verified loopback transfer. Every allocation, MR, QP, CQ, PD, context and
 * fd taken here is released on every path (single cleanup exits).
 */
#include "core/clock.h"
#include "access/reg.h"

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "access/cuda.h"
#include "access/ibsysfs.h"
#include "access/mlx5.h"
#include "access/par.h"
#include "access/symtab.h"
#include "access/sysroot.h"
#include "access/verbs.h"

#define PAGE		4096ull
/* A completion that has not come in 2 s is not coming (an eighth of the
 * stage deadline when --timeout is short). */
#define POLL_DEADLINE_MS 2000.0
/*
 * Devices the pair loop works on at once (pairs_width): each holds its
 * host buffers and scratch, four times --reg-size (8 MiB by default),
 * while it runs, and the doubles map what it registers. Up to 8 (a node's
 * rail count) within 32 MiB of buffers; an SR-IOV node of hundreds of
 * functions queues the rest (64 at once held 720 MiB on an 8 x 256 node).
 */
#define REG_DEVICES_MAX		8
#define REG_LOOP_BYTES		(32ull << 20)
#define BW_MAX_ITERS	64
#define BW_BATCH	8
/*
 * Full bandwidth bursts (up to 64 MiB of WRITEs) per run, on the first
 * pairs the plan gives a transfer (pairs_prepare); later pairs burst one
 * batch: a node of hundreds of rails (SR-IOV functions) spent most of its
 * proof moving bytes for a figure the first bursts already give. The
 * verified rounds before and after the burst are not shortened.
 */
#define BW_FULL_BURSTS	16
/* Verified rounds per MR: before the bandwidth run and after it. */
#define DP_ROUNDS	2
/* What memory holds before a transfer: distinct on either side, so a READ
 * that returns GPU poison is told from one that never landed. */
#define POISON_GPU	0xa5
#define POISON_HOST	0x5a
/* Where cuMemcpyDtoH copies to: a copy that moved nothing shows. */
#define POISON_FETCH	0x3c
/* Earlier contents of a GPU buffer remembered to recognise stale data. */
#define GPU_HISTORY	32

/* NCCL registers GPU buffers with these rights. */
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)

/*
 * Contents of a buffer of rr->bytes: the pattern of @key at [off, off +
 * len), @fill everywhere else (only @fill when !pattern).
 */
struct content {
	bool pattern;
	uint64_t key;
	size_t off, len;
	uint8_t fill;
};

/* What a transfer moves: the pattern key is derived from all of it. */
enum dp_path { DPP_PEERMEM = 1, DPP_DMABUF = 2, DPP_VMM_PEERMEM = 3,
	       DPP_VMM_DMABUF = 4 };
enum dp_dir { DPD_WRITE = 1, DPD_READ = 2, DPD_GPU_TO_GPU = 3 };

struct gpu_buf {
	int ordinal;
	CUcontext ctx;
	CUdeviceptr ptr;
	bool allocated;
	/* Why not: this GPU's own failed set-up call (reg_facts keeps the
	 * first GPU's only), named in its pairs' skip. */
	struct cu_call fail;
	char fail_fn[VF_NAME];
	/* A VMM buffer (vmm_setup): what of it is held, for vmm_release. */
	CUmemGenericAllocationHandle handle;
	size_t vsize;
	bool created, reserved, mapped;
	/* What this run put into the buffer, newest last (a ring). */
	struct content history[GPU_HISTORY];
	int nhistory;
};

struct nic_res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *host_mr;
	uint8_t *host;		/* 2 x bytes: source, then READ target (the
				 * device thread's struct scratch) */
	/* NCCL would see this device as `<dev>_dma` and register through
	 * mlx5dv_reg_dmabuf_mr with Data Direct (access/mlx5.c). */
	bool data_direct;
};

struct reg_run {
	const struct cuda_table *cu;
	const struct verbs_table *ibv;
	const struct mlx5_table *dv;	/* NULL: no libmlx5 */
	const struct vendor_facts *vf;
	const struct vendor_options *opt;
	struct reg_facts *rf;
	struct stage_status *st;
	size_t bytes;
	size_t guard;		/* poison at both ends of a GPU buffer */
	uint64_t seed;		/* patterns differ run to run */
	uint8_t *expect;	/* this thread's, rr->bytes each: what a buffer should hold */
	uint8_t *got;		/* and what cuMemcpyDtoH found */
	struct sysroot *sr;	/* this thread's reader (sysroot.h: Threads) */
	pthread_mutex_t *sr_lock;	/* held to read sr, if set */
	const uint64_t *pat_base;	/* pattern_base(): NULL, none */
	size_t pat_words;
	bool full_burst;	/* this pair: a full bandwidth burst */
};

/* The call in progress, per GPU inside par_for (access/par.h). */
static void enter(struct stage_status *st, const char *call)
{
	stage_enter(st, call);
}

/* --- patterns and poison ------------------------------------------------ */

/* SplitMix64's finaliser: a bijection on 64 bits. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t run_seed(void)
{
	struct timespec ts;
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	/* No entropy yet (early boot): unique per run is all that counts. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return mix64((uint64_t)ts.tv_sec * 1000000000ull +
		     (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
}

/*
 * The key of one transfer. The fields are packed without overlap and both
 * steps are bijections, so two transfers of a run never share a key; word i
 * of a pattern is key ^ mix64((i + 1) * golden), so two patterns differ in
 * every 8-byte word (by key ^ key') and a pattern moved by whole words
 * differs from itself in every word: nothing left over from another GPU,
 * NIC, path, direction or round, nor misplaced, can pass for this
 * transfer's data.
 */
static uint64_t pattern_key(const struct reg_run *rr, int gpu, int nic,
			    enum dp_path path, enum dp_dir dir, int round)
{
	uint64_t id = ((uint64_t)(gpu & 0xffff) << 48) |
		      ((uint64_t)(nic & 0xffff) << 32) |
		      ((uint64_t)path << 20) | ((uint64_t)dir << 16) |
		      (uint64_t)(round & 0xffff);

	return mix64(rr->seed ^ mix64(id));
}

/*
 * Word i of every pattern before its key is applied: mix64((i + 1) *
 * golden), computed once per run and shared read-only by the pair loop's
 * threads. A pattern is key ^ base, word by word: filling one costs a pass
 * over memory, where mix64 per word was the proof's largest CPU cost on a
 * node of many rails. NULL when there is no memory for it (each word is
 * then computed in place, the same bytes).
 */
static uint64_t base_word(size_t i)
{
	return mix64((i + 1) * 0x9e3779b97f4a7c15ull);
}

static uint64_t *pattern_base(size_t bytes, size_t *words)
{
	size_t n = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
	uint64_t *b = malloc(n * sizeof(*b));

	*words = b ? n : 0;
	for (size_t i = 0; b && i < n; i++)
		b[i] = base_word(i);
	return b;
}

static void content_fill(const struct reg_run *rr, uint8_t *p, size_t n,
			 const struct content *c)
{
	size_t words = c->len / sizeof(uint64_t), i;
	size_t from_base = words < rr->pat_words ? words : rr->pat_words;
	const uint64_t *base = rr->pat_base, key = c->key;
	uint8_t *at = p + c->off;
	uint64_t w;

	if (!c->pattern) {
		memset(p, c->fill, n);
		return;
	}
	/* Only the bytes the pattern leaves. */
	memset(p, c->fill, c->off);
	memset(at + c->len, c->fill, n - c->off - c->len);
	/* Locals: stores through @at may alias *rr and *c as far as the
	 * compiler knows, and reloading them each word kept it scalar. */
	for (i = 0; i < from_base; i++) {
		w = key ^ base[i];
		memcpy(at + i * sizeof(w), &w, sizeof(w));
	}
	for (; i * sizeof(w) < c->len; i++) {
		size_t k = c->len - i * sizeof(w);

		w = key ^ base_word(i);
		memcpy(at + i * sizeof(w), &w, k < sizeof(w) ? k : sizeof(w));
	}
}

static struct content poison(uint8_t fill)
{
	return (struct content){ .fill = fill };
}

static struct content pattern(uint64_t key, size_t off, size_t len,
			      uint8_t fill)
{
	return (struct content){ .pattern = true, .key = key, .off = off,
				 .len = len, .fill = fill };
}

/* Remember what the buffer holds now (or was just sent). */
static void gpu_note(struct gpu_buf *gb, const struct content *c)
{
	gb->history[gb->nhistory++ % GPU_HISTORY] = *c;
}

/* Does @p hold @n bytes of @v? One pass over @p. */
static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	return !n || (p[0] == v && !memcmp(p, p + 1, n - 1));
}

/*
 * Does @t hold pattern @c's bytes? Compared word by word against the base,
 * without writing the pattern out. false as well when there is no base to
 * compare with: the caller then takes the long way.
 */
static bool pattern_holds(const struct reg_run *rr, const uint8_t *t,
			  const struct content *c)
{
	size_t words = c->len / sizeof(uint64_t), tail = c->len % sizeof(uint64_t);
	const uint64_t *base = rr->pat_base, key = c->key;
	uint64_t diff = 0, g, w;

	if (words + (tail != 0) > rr->pat_words)
		return false;
	for (size_t i = 0; i < words; i++) {
		memcpy(&g, t + i * sizeof(g), sizeof(g));
		diff |= g ^ key ^ base[i];
	}
	if (tail) {
		w = key ^ base[words];
		diff |= memcmp(t + words * sizeof(w), &w, tail) != 0;
	}
	return !diff;
}

/*
 * Does @got (rr->bytes) hold @want? The target range is judged first: still
 * the poison it held before (@poison_known) is a transfer that never landed,
 * part of it a partial one; an earlier content of @gb there is stale data;
 * anything else is corrupt. Then the rest, which must still be @want's fill.
 */
static enum dp_fault judge(const struct reg_run *rr, const uint8_t *got,
			   const struct content *want, bool poison_known,
			   const struct gpu_buf *gb, bool read)
{
	const uint8_t *t = got + want->off, *e;
	size_t bad = 0, still_poison = 0, landed = 0;
	int h, n;

	/* The common case, read once: the data as it should be. Without the
	 * poison the rest of the buffer is unknown. */
	if ((!want->pattern || pattern_holds(rr, t, want)) &&
	    (!poison_known ||
	     (all_bytes(got, want->off, want->fill) &&
	      all_bytes(t + want->len, rr->bytes - want->off - want->len,
			want->fill))))
		return DPF_NONE;
	content_fill(rr, rr->expect, rr->bytes, want);
	e = rr->expect + want->off;
	if (poison_known ? !memcmp(got, rr->expect, rr->bytes) :
	    !memcmp(t, e, want->len))
		return DPF_NONE;
	for (size_t i = 0; i < want->len; i++) {
		if (t[i] == e[i]) {
			landed += e[i] != want->fill;
			continue;
		}
		bad++;
		still_poison += t[i] == want->fill;
	}
	if (!bad)
		return DPF_STRAY;
	if (poison_known && still_poison == bad)
		return landed ? DPF_PARTIAL : DPF_NOT_LANDED;
	/* Newest first: the contents the GPU buffer held before. */
	n = gb->nhistory < GPU_HISTORY ? gb->nhistory : GPU_HISTORY;
	for (h = 0; h < n; h++) {
		const struct content *c =
			&gb->history[(gb->nhistory - 1 - h) % GPU_HISTORY];

		content_fill(rr, rr->expect, rr->bytes, c);
		if (!memcmp(t, rr->expect + want->off, want->len))
			return read ? DPF_STALE : DPF_NOT_LANDED;
	}
	return DPF_CORRUPT;
}

const char *wc_status_meaning(int status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return "success";
	case IBV_WC_LOC_LEN_ERR:
		return "local length error";
	case IBV_WC_LOC_QP_OP_ERR:
		return "local QP operation error";
	case IBV_WC_LOC_PROT_ERR:
		return "local protection error: the NIC could not DMA the "
		       "memory (MR, IOMMU or ACS blocking peer traffic)";
	case IBV_WC_WR_FLUSH_ERR:
		return "flushed: the QP was already in error";
	case IBV_WC_REM_ACCESS_ERR:
		return "remote access error: rkey or access rights of the "
		       "target MR";
	case IBV_WC_REM_OP_ERR:
		return "remote operation error";
	case IBV_WC_RETRY_EXC_ERR:
		return "transport retries exceeded: no answer (link, GID, "
		       "routing or a DMA fault on the responder)";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "receiver not ready";
	case IBV_WC_REM_INV_REQ_ERR:
		return "remote invalid request";
	case IBV_WC_FATAL_ERR:
		return "fatal error";
	default:
		return "completion error";
	}
}

/* --- memory registration ---------------------------------------------- */

static struct ibv_mr *reg_plain(const struct reg_run *rr, struct ibv_pd *pd,
				void *addr, size_t len, struct mr_result *m)
{
	if (rr->ibv->reg_mr_iova2) {
		m->relaxed_ordering = true;
		return rr->ibv->reg_mr_iova2(pd, addr, len, (uintptr_t)addr,
					     MR_ACCESS |
					     IBV_ACCESS_RELAXED_ORDERING);
	}
	return rr->ibv->reg_mr(pd, addr, len, MR_ACCESS);
}

/*
 * Register, deregister, register again (warm), and keep the second MR.
 * Returns the MR or NULL with m->err set.
 */
static struct ibv_mr *reg_timed(const struct reg_run *rr, struct ibv_pd *pd,
				void *addr, size_t len, int fd, uint64_t offset,
				struct mr_result *m)
{
	struct ibv_mr *mr;
	double t0;

	m->tried = true;
	for (int round = 0; round < 2; round++) {
		enter(rr->st, fd >= 0 && m->data_direct ? "mlx5dv_reg_dmabuf_mr" :
		      fd >= 0 ? "ibv_reg_dmabuf_mr" :
		      rr->ibv->reg_mr_iova2 ? "ibv_reg_mr_iova2" : "ibv_reg_mr");
		snprintf(m->call, sizeof(m->call), "%s", stage_current(rr->st));
		errno = 0;
		t0 = now_ms();
		/* NCCL net_ib reg.cc ncclIbRegMrDmaBufInternal: a Data
		 * Direct device registers through mlx5dv (2.27.3+). */
		if (fd >= 0 && m->data_direct)
			mr = rr->dv->reg_dmabuf_mr(pd, offset, len,
					(uintptr_t)addr, fd, MR_ACCESS,
					GDR_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT);
		else if (fd >= 0)
			mr = rr->ibv->reg_dmabuf_mr(pd, offset, len,
						    (uintptr_t)addr, fd,
						    MR_ACCESS);
		else
			mr = reg_plain(rr, pd, addr, len, m);
		if (!mr) {
			m->err = errno ? errno : EIO;
			return NULL;
		}
		if (round == 0)
			m->ms_cold = now_ms() - t0;
		else
			m->ms_warm = now_ms() - t0;
		m->lkey = mr->lkey;
		m->rkey = mr->rkey;
		if (round == 1)
			break;
		enter(rr->st, "ibv_dereg_mr");
		t0 = now_ms();
		rr->ibv->dereg_mr(mr);
		m->ms_dereg = now_ms() - t0;
	}
	m->call[0] = '\0';
	m->ok = true;
	return mr;
}

static void dereg(const struct reg_run *rr, struct ibv_mr *mr)
{
	if (!mr)
		return;
	enter(rr->st, "ibv_dereg_mr");
	rr->ibv->dereg_mr(mr);
}

/* --- the loopback RC QP ------------------------------------------------ */

struct loopback {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static void loopback_destroy(const struct reg_run *rr, struct loopback *lb)
{
	if (lb->qp) {
		enter(rr->st, "ibv_destroy_qp");
		rr->ibv->destroy_qp(lb->qp);
	}
	if (lb->cq) {
		enter(rr->st, "ibv_destroy_cq");
		rr->ibv->destroy_cq(lb->cq);
	}
	memset(lb, 0, sizeof(*lb));
}

static int fail_step(struct dp_result *d, const char *step, int err)
{
	snprintf(d->step, sizeof(d->step), "%s", step);
	d->err = err ? err : EIO;
	return -1;
}

/* An RC QP connected to itself on port (NCCL's flush QP is built so). */
static int loopback_create(const struct reg_run *rr, struct nic_res *nr,
			   const struct reg_pair *pp, struct loopback *lb,
			   struct dp_result *d)
{
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	union ibv_gid gid;

	enter(rr->st, "ibv_query_port");
	memset(&pa, 0, sizeof(pa));
	if (rr->ibv->query_port(nr->ctx, (uint8_t)pp->port, &pa))
		return fail_step(d, "ibv_query_port", errno);
	if (pp->gid_index >= 0) {
		enter(rr->st, "ibv_query_gid");
		if (rr->ibv->query_gid(nr->ctx, (uint8_t)pp->port,
				       pp->gid_index, &gid))
			return fail_step(d, "ibv_query_gid", errno);
	}
	enter(rr->st, "ibv_create_cq");
	errno = 0;
	lb->cq = rr->ibv->create_cq(nr->ctx, 2 * BW_BATCH + 4, NULL, NULL, 0);
	if (!lb->cq)
		return fail_step(d, "ibv_create_cq", errno);
	init.send_cq = lb->cq;
	init.recv_cq = lb->cq;
	init.qp_type = IBV_QPT_RC;
	init.sq_sig_all = 0;
	init.cap.max_send_wr = 2 * BW_BATCH;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	enter(rr->st, "ibv_create_qp");
	errno = 0;
	lb->qp = rr->ibv->create_qp(nr->pd, &init);
	if (!lb->qp)
		return fail_step(d, "ibv_create_qp", errno);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)pp->port;
	a.qp_access_flags = MR_ACCESS;
	enter(rr->st, "ibv_modify_qp");
	if (rr->ibv->modify_qp(lb->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail_step(d, "ibv_modify_qp(INIT)", errno);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu ? pa.active_mtu : IBV_MTU_1024;
	a.dest_qp_num = lb->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)pp->port;
	a.ah_attr.dlid = pa.lid;
	if (pp->gid_index >= 0) {
		/* RoCE: address ourselves by our own RoCE v2 GID. */
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = (uint8_t)pp->gid_index;
		a.ah_attr.grh.hop_limit = 1;
	}
	if (rr->ibv->modify_qp(lb->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER))
		return fail_step(d, "ibv_modify_qp(RTR)", errno);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (rr->ibv->modify_qp(lb->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail_step(d, "ibv_modify_qp(RTS)", errno);
	return 0;
}

/* Post one RDMA op; signal it when asked. Returns 0 or an errno value. */
static int post_rdma(struct loopback *lb, enum ibv_wr_opcode op, void *local,
		     uint32_t lkey, uint64_t remote, uint32_t rkey, size_t len,
		     bool signaled, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = lkey,
	};
	struct ibv_send_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(lb->qp, &wr, &bad);
}

/* Wait for one completion, bounded. 0, or -1 with d filled. */
static int wait_one(const struct reg_run *rr, struct loopback *lb,
		    struct dp_result *d, const char *what)
{
	const struct timespec pause = { 0, 50000 };
	double limit = rr->opt->stage_timeout * 1e3 / 8;
	double deadline = now_ms() + (limit < POLL_DEADLINE_MS ? limit :
				      POLL_DEADLINE_MS);
	struct ibv_wc wc;

	enter(rr->st, "ibv_poll_cq");
	for (;;) {
		int n = ibv_poll_cq(lb->cq, 1, &wc);

		if (n < 0)
			return fail_step(d, "ibv_poll_cq", -n);
		if (n == 1)
			break;
		if (now_ms() > deadline) {
			d->timeout = true;
			snprintf(d->step, sizeof(d->step), "%s", what);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	if (wc.status != IBV_WC_SUCCESS) {
		d->wc_status = (int)wc.status;
		snprintf(d->step, sizeof(d->step), "%s", what);
		return -1;
	}
	return 0;
}

/* Load GPU memory with @c (through rr->expect) and remember it. */
static int gpu_load(const struct reg_run *rr, struct gpu_buf *gb,
		    const struct content *c, struct cu_call *rec)
{
	double t0;
	int rc;

	content_fill(rr, rr->expect, rr->bytes, c);
	enter(rr->st, "cuMemcpyHtoD_v2");
	t0 = now_ms();
	rc = rr->cu->memcpy_htod(gb->ptr, rr->expect, rr->bytes);
	if (rc != CUDA_SUCCESS) {
		if (rec)
			cuda_call_record(rec, rc, t0);
		return -1;
	}
	gpu_note(gb, c);
	return 0;
}

/* The whole GPU buffer into rr->got. */
static int gpu_fetch(const struct reg_run *rr, const struct gpu_buf *gb,
		     struct cu_call *rec)
{
	double t0;
	int rc;

	memset(rr->got, POISON_FETCH, rr->bytes);
	enter(rr->st, "cuMemcpyDtoH_v2");
	t0 = now_ms();
	rc = rr->cu->memcpy_dtoh(rr->got, gb->ptr, rr->bytes);
	if (rc != CUDA_SUCCESS) {
		cuda_call_record(rec, rc, t0);
		return -1;
	}
	return 0;
}

/*
 * One verified round. The WRITE carries a fresh pattern from host memory
 * into the middle of GPU memory poisoned just before, and cuMemcpyDtoH
 * checks it there (the guards at both ends still poison, the host's READ
 * target untouched). The READ then carries a pattern of its own, loaded into
 * the GPU by cuMemcpyHtoD, into poisoned host memory; without both copies
 * it reads back the WRITE's. 0, or -1 with d filled when a step failed.
 */
static int dp_round(const struct reg_run *rr, struct nic_res *nr,
		    struct loopback *lb, struct gpu_buf *gb,
		    const struct ibv_mr *gmr, int nic, enum dp_path path,
		    int round, struct content *sent, struct dp_result *d)
{
	size_t n = rr->bytes, g = rr->guard, len = n - 2 * g;
	uint8_t *src = nr->host, *dst = nr->host + n;
	bool in = rr->cu->memcpy_htod, out = rr->cu->memcpy_dtoh;
	uint64_t remote = (uint64_t)gb->ptr + g;
	struct content at_gpu, r, at_host, gpu_poison = poison(POISON_GPU);
	struct content untouched = poison(POISON_HOST);
	bool dst_poisoned = false;
	int ret;

	d->write_ok = d->read_ok = false;
	d->verified_gpu = d->verified_read = false;
	d->read_own_pattern = in && out;
	*sent = pattern(pattern_key(rr, gb->ordinal, nic, path, DPD_WRITE,
				    round), 0, len, POISON_HOST);
	at_gpu = pattern(sent->key, g, len, POISON_GPU);
	content_fill(rr, src, n, sent);
	memset(dst, POISON_HOST, n);
	if (in && gpu_load(rr, gb, &gpu_poison, &d->htod))
		return fail_step(d, "cuMemcpyHtoD_v2", EIO);
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(lb, IBV_WR_RDMA_WRITE, src, nr->host_mr->lkey, remote,
			gmr->rkey, len, true, 1);
	if (ret)
		return fail_step(d, "ibv_post_send(WRITE)", ret);
	if (wait_one(rr, lb, d, "RDMA WRITE"))
		return -1;
	d->write_ok = true;
	if (out) {
		if (gpu_fetch(rr, gb, &d->dtoh))
			return fail_step(d, "cuMemcpyDtoH_v2", EIO);
		d->write_fault = judge(rr, rr->got, &at_gpu, in, gb, false);
	}
	if (!d->write_fault) {
		dst_poisoned = !judge(rr, dst, &untouched, true, gb, false);
		if (!dst_poisoned)
			d->write_fault = DPF_STRAY;
	}
	gpu_note(gb, &at_gpu);

	r = at_gpu;
	if (d->read_own_pattern) {
		r = pattern(pattern_key(rr, gb->ordinal, nic, path, DPD_READ,
					round), g, len, POISON_GPU);
		if (gpu_load(rr, gb, &r, &d->htod))
			return fail_step(d, "cuMemcpyHtoD_v2", EIO);
	}
	if (!dst_poisoned)	/* else it was just judged to hold it */
		memset(dst, POISON_HOST, n);
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(lb, IBV_WR_RDMA_READ, dst + g, nr->host_mr->lkey,
			remote, gmr->rkey, len, true, 2);
	if (ret)
		return fail_step(d, "ibv_post_send(READ)", ret);
	if (wait_one(rr, lb, d, "RDMA READ"))
		return -1;
	d->read_ok = true;
	at_host = pattern(r.key, g, len, POISON_HOST);
	d->read_fault = judge(rr, dst, &at_host, true, gb, true);
	d->verified_gpu = out && !d->write_fault;
	d->verified_read = !d->read_fault;
	return 0;
}

/* Batches of WRITEs of the whole buffer, the last of each batch signaled. */
static int dp_bandwidth(const struct reg_run *rr, struct nic_res *nr,
			struct loopback *lb, struct gpu_buf *gb,
			const struct ibv_mr *gmr, const struct content *sent,
			struct dp_result *d)
{
	int iters, done = 0, ret;
	double t0;

	iters = (int)((64ull << 20) / rr->bytes);
	iters = iters < BW_BATCH ? BW_BATCH : iters > BW_MAX_ITERS ? BW_MAX_ITERS :
		iters / BW_BATCH * BW_BATCH;
	if (!rr->full_burst)
		iters = BW_BATCH;
	/* GPU memory will hold the source buffer, if anything. */
	gpu_note(gb, sent);
	t0 = now_ms();
	while (done < iters) {
		for (int i = 0; i < BW_BATCH; i++) {
			enter(rr->st, "ibv_post_send");
			ret = post_rdma(lb, IBV_WR_RDMA_WRITE, nr->host,
					nr->host_mr->lkey, (uint64_t)gb->ptr,
					gmr->rkey, rr->bytes, i == BW_BATCH - 1,
					(uint64_t)(done + i));
			if (ret)
				return fail_step(d, "ibv_post_send(bandwidth)",
						 ret);
		}
		if (wait_one(rr, lb, d, "RDMA WRITE (bandwidth)"))
			return -1;
		done += BW_BATCH;
	}
	d->iters = done;
	d->gbps = (double)rr->bytes * done * 8 / ((now_ms() - t0) * 1e6);
	return 0;
}

/* A path of this pair already carried the bandwidth burst. */
static bool pair_burst_done(const struct reg_pair *pp)
{
	return pp->dp_peermem.iters || pp->dp_dmabuf.iters ||
	       pp->dp_vmm_peermem.iters || pp->dp_vmm_dmabuf.iters;
}

/*
 * The proof through one GPU MR: a verified round, the bandwidth run, and
 * a second verified round (the NIC still moves data after the burst).
 * The burst runs once per pair, on its first path: the other mechanisms
 * move the same memory through the same NIC, and their verified round
 * proves them (on a node with hundreds of pairs the bursts were the run).
 */
static void datapath(const struct reg_run *rr, struct nic_res *nr,
		     const struct reg_pair *pp, struct gpu_buf *gb,
		     const struct ibv_mr *gmr, int nic, enum dp_path path,
		     struct dp_result *d)
{
	struct loopback lb = { 0 };
	struct content sent = { 0 };

	d->tried = true;
	d->wc_status = -1;
	d->bytes = rr->bytes;
	if (!rr->expect || !rr->got) {
		fail_step(d, "malloc", ENOMEM);
		return;
	}
	if (loopback_create(rr, nr, pp, &lb, d))
		goto out;
	for (int round = 0; round < (pair_burst_done(pp) ? 1 : DP_ROUNDS);
	     round++) {
		if (round && dp_bandwidth(rr, nr, &lb, gb, gmr, &sent, d))
			goto out;
		if (dp_round(rr, nr, &lb, gb, gmr, nic, path, round, &sent, d))
			goto out;
		if (d->write_fault || d->read_fault) {
			d->fault_round = round;
			snprintf(d->step, sizeof(d->step), "data check");
			goto out;
		}
	}
	d->ok = d->verified_read && (d->verified_gpu || !rr->cu->memcpy_dtoh);
	if (!d->ok)
		snprintf(d->step, sizeof(d->step), "data check");
out:
	loopback_destroy(rr, &lb);
}

/* --- set-up and tear-down ------------------------------------------------ */

static void gpu_release(const struct reg_run *rr, struct gpu_buf *gb)
{
	if (gb->allocated) {
		enter(rr->st, "cuCtxSetCurrent");
		rr->cu->ctx_set_current(gb->ctx);
		enter(rr->st, "cuMemFree_v2");
		rr->cu->mem_free(gb->ptr);
		gb->allocated = false;
	}
	/* The primary context stays with the worker (cuda_release_all). */
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(NULL);
}

static int gpu_setup(const struct reg_run *rr, struct gpu_buf *gb, int ordinal)
{
	struct content fresh = poison(POISON_GPU);
	double t0;
	int rc;

	gb->ordinal = ordinal;
	t0 = now_ms();
	rc = cuda_primary_ctx(ordinal, &gb->ctx, NULL, rr->st);
	if (rc == CUDA_SUCCESS) {
		enter(rr->st, "cuCtxSetCurrent");
		t0 = now_ms();
		rc = rr->cu->ctx_set_current(gb->ctx);
		if (rc == CUDA_SUCCESS) {
			enter(rr->st, "cuMemAlloc_v2");
			t0 = now_ms();
			rc = rr->cu->mem_alloc(&gb->ptr, rr->bytes);
		}
	}
	if (rc != CUDA_SUCCESS) {
		/* Name the call that failed: the one in progress. */
		cuda_call_record(&gb->fail, rc, t0);
		snprintf(gb->fail_fn, sizeof(gb->fail_fn), "%s",
			 stage_current(rr->st));
		/* reg_facts.alloc_fail: the first GPU's, once all are done. */
		return -1;
	}
	gb->allocated = true;
	/* Poisoned from the start; every transfer poisons again anyway. */
	if (rr->cu->memcpy_htod && rr->expect)
		(void)gpu_load(rr, gb, &fresh, NULL);
	return 0;
}

static void nic_release(const struct reg_run *rr, struct nic_res *nr)
{
	dereg(rr, nr->host_mr);
	if (nr->pd) {
		enter(rr->st, "ibv_dealloc_pd");
		rr->ibv->dealloc_pd(nr->pd);
	}
	if (nr->ctx) {
		enter(rr->st, "ibv_close_device");
		rr->ibv->close_device(nr->ctx);
	}
	memset(nr, 0, sizeof(*nr));
}

static void nic_setup(const struct reg_run *rr, struct ibv_device *dev,
		      struct nic_res *nr, struct reg_nic *rn)
{
	enter(rr->st, "ibv_open_device");
	errno = 0;
	nr->ctx = rr->ibv->open_device(dev);
	if (!nr->ctx) {
		rn->open_err = errno ? errno : EIO;
		return;
	}
	enter(rr->st, "ibv_alloc_pd");
	errno = 0;
	nr->pd = rr->ibv->alloc_pd(nr->ctx);
	if (!nr->pd) {
		rn->pd_err = errno ? errno : EIO;
		return;
	}
	/* The control: host memory, as every verbs program registers it. */
	if (!nr->host) {
		rn->host.tried = true;
		rn->host.err = ENOMEM;
		snprintf(rn->host.call, sizeof(rn->host.call), "posix_memalign");
		return;
	}
	memset(nr->host, 0, 2 * rr->bytes);
	nr->host_mr = reg_timed(rr, nr->pd, nr->host, 2 * rr->bytes, -1, 0,
				&rn->host);
}

/* First ACTIVE port from sysfs, and the GID to address it by on RoCE. */
static void choose_port(const struct reg_run *rr, struct nic_res *nr,
			struct reg_pair *pp)
{
	for (int port = 1; port <= 16; port++) {
		struct ibv_port_attr pa;
		struct gid_scan gs;

		if (ib_port_state(rr->sr, pp->nic, port) != IBV_PORT_ACTIVE)
			continue;
		memset(&pa, 0, sizeof(pa));
		enter(rr->st, "ibv_query_port");
		errno = 0;
		if (rr->ibv->query_port(nr->ctx, (uint8_t)port, &pa)) {
			int err = errno ? errno : EIO;

			snprintf(pp->skip, sizeof(pp->skip),
				 "ibv_query_port(port %d) failed: %s", port,
				 strerror(err));
			return;
		}
		pp->port = port;
		pp->link_layer = pa.link_layer;
		pp->gid_index = -1;
		if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
			return;
		ib_scan_gids(rr->sr, pp->nic, port, &gs);
		pp->gid_index = gs.v2 >= 0 ? gs.v2 : gs.v1;
		if (pp->gid_index < 0) {
			snprintf(pp->skip, sizeof(pp->skip),
				 "port %d has no RoCE GID", port);
			pp->port = 0;
		}
		return;
	}
	snprintf(pp->skip, sizeof(pp->skip), "no ACTIVE port");
}

/*
 * DMA-BUF: export the page-aligned range holding the buffer, register it.
 * The export is recorded in *exp, the registration in *m.
 */
/*
 * The flags NCCL exports with (net.cc getHandleForAddressRangeFlags, NCCL
 * >= 2.26 built with CUDA >= 12.8): PCIe mapping when its gdrMode is PCI
 * (graph/paths.cc ncclTopoCheckGdr: the GPU reaches its CPU over C2C and
 * the NIC by another path). Here: a Data Direct device (a PCIe function
 * beside the GPU) of a GPU NVML reports C2C-enabled, driver >= 12.8.
 */
/*
 * NVML's stage runs in a worker of its own beside this one (access/
 * worker.c): wait until the parent says its answers are final. Bounded by
 * this stage's deadline (the parent kills this worker at it) and NVML's
 * own, which began earlier.
 */
static void nvml_wait(const struct reg_run *rr)
{
	const volatile bool *settled = &rr->vf->nvml_settled;

	if (*settled)
		return;
	enter(rr->st, "waiting for the nvml stage");
	while (!*settled) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };

		nanosleep(&ts, NULL);
	}
}

static unsigned int export_flags(const struct reg_run *rr,
				 const struct nic_res *nr, int ordinal)
{
	const struct cuda_facts *c = &rr->vf->cuda;
	const struct nvml_facts *nv = &rr->vf->nvml;
	const char *pci = NULL;

	if (!nr->data_direct || c->driver_version < 12080)
		return 0;
	nvml_wait(rr);
	for (int g = 0; g < c->gpus_recorded; g++)
		if (c->gpus[g].ordinal == ordinal)
			pci = c->gpus[g].pci;
	for (int g = 0; pci && *pci && g < nv->gpus_recorded; g++)
		if (!strcmp(nv->gpus[g].pci, pci))
			return nv->gpus[g].c2c == 1 ?
			       CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE : 0;
	return 0;
}

static struct ibv_mr *reg_dmabuf(const struct reg_run *rr, struct nic_res *nr,
				 const struct gpu_buf *gb, struct cu_call *exp,
				 struct mr_result *m, unsigned int flags)
{
	CUdeviceptr base = gb->ptr & ~(CUdeviceptr)(PAGE - 1);
	size_t span = (size_t)((gb->ptr + rr->bytes - base + PAGE - 1) &
			       ~(PAGE - 1));
	struct ibv_mr *mr;
	double t0;
	int fd = -1, rc;

	m->data_direct = nr->data_direct;
	if (!rr->cu->mem_get_handle_for_address_range ||
	    (m->data_direct ? !rr->dv->reg_dmabuf_mr : !rr->ibv->reg_dmabuf_mr))
		return NULL;
	enter(rr->st, "cuMemGetHandleForAddressRange");
	t0 = now_ms();
	rc = rr->cu->mem_get_handle_for_address_range(&fd, base, span,
			CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
	cuda_call_record(exp, rc, t0);
	if (rc != CUDA_SUCCESS || fd < 0)
		return NULL;
	mr = reg_timed(rr, nr->pd, (void *)(uintptr_t)gb->ptr, rr->bytes, fd,
		       (uint64_t)(gb->ptr - base), m);
	/* The MR holds its own reference: the fd can go now. */
	close(fd);
	return mr;
}

/*
 * GPU A's MR -> GPU B's MR through the NIC: A loaded with a pattern of its
 * own, B poisoned, B checked with cuMemcpyDtoH (guards included).
 */
static void gpu_to_gpu(const struct reg_run *rr, struct nic_res *nr,
		       const struct reg_pair *pp, int nic, enum dp_path path,
		       struct gpu_buf *a, struct ibv_mr *amr,
		       struct gpu_buf *b, struct ibv_mr *bmr, struct reg_nic *rn)
{
	size_t g = rr->guard, len = rr->bytes - 2 * g;
	struct content sent, b_poison = poison(POISON_GPU);
	struct dp_result d = { 0 };
	struct loopback lb = { 0 };
	struct cu_call cc = { 0 };
	int ret;

	rn->g2g_tried = true;
	rn->g2g_src = a->ordinal;
	rn->g2g_dst = b->ordinal;
	if (!rr->expect || !rr->got || !rr->cu->memcpy_htod ||
	    !rr->cu->memcpy_dtoh) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error),
			 "cannot stage the pattern (cuMemcpy unavailable)");
		goto out;
	}
	sent = pattern(pattern_key(rr, a->ordinal, nic, path, DPD_GPU_TO_GPU,
				   b->ordinal), g, len, POISON_GPU);
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(a->ctx);
	if (gpu_load(rr, a, &sent, &cc))
		goto copy_failed;
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(b->ctx);
	if (gpu_load(rr, b, &b_poison, &cc))
		goto copy_failed;
	d.wc_status = -1;
	if (loopback_create(rr, nr, pp, &lb, &d)) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error), "%s: %s", d.step,
			 strerror(d.err));
		goto out;
	}
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(&lb, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)(a->ptr + g),
			amr->lkey, (uint64_t)b->ptr + g, bmr->rkey, len, true,
			9);
	if (ret) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error),
			 "ibv_post_send: %s", strerror(ret));
		goto out;
	}
	if (wait_one(rr, &lb, &d, "RDMA WRITE GPU to GPU")) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error), "%s",
			 d.timeout ? "no completion" :
			 d.wc_status >= 0 ? wc_status_meaning(d.wc_status) :
			 strerror(d.err));
		goto out;
	}
	if (gpu_fetch(rr, b, &cc))
		goto copy_failed;
	rn->g2g_fault = judge(rr, rr->got, &sent, true, b, false);
	gpu_note(b, &sent);
	rn->g2g_ok = rn->g2g_fault == DPF_NONE;
	if (!rn->g2g_ok)
		snprintf(rn->g2g_error, sizeof(rn->g2g_error),
			 "the WRITE completed but the data in the destination "
			 "GPU does not match");
	goto out;
copy_failed:
	/* Both copies are cuMemcpy*_v2: name the direction, then the error. */
	snprintf(rn->g2g_error, sizeof(rn->g2g_error), "%s failed: %.48s",
		 strcmp(stage_current(rr->st), "cuMemcpyDtoH_v2") ? "cuMemcpyHtoD_v2" :
		 "cuMemcpyDtoH_v2", cc.name);
out:
	loopback_destroy(rr, &lb);
}

/* --- NCCL-style VMM buffers --------------------------------------------- */

static void vmm_release(const struct reg_run *rr, struct gpu_buf *vb)
{
	if (!vb->created && !vb->reserved)
		return;
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(vb->ctx);
	/* ncclCuMemFree's order: unmap, release the handle, free the VA. */
	if (vb->mapped) {
		enter(rr->st, "cuMemUnmap");
		rr->cu->mem_unmap(vb->ptr, vb->vsize);
	}
	if (vb->created) {
		enter(rr->st, "cuMemRelease");
		rr->cu->mem_release(vb->handle);
	}
	if (vb->reserved) {
		enter(rr->st, "cuMemAddressFree");
		rr->cu->mem_address_free(vb->ptr, vb->vsize);
	}
	vb->mapped = vb->created = vb->reserved = vb->allocated = false;
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(NULL);
}

/* The VMM entry points this libcuda lacks, space separated, into @out. */
static bool vmm_missing(const struct cuda_table *cu, char *out, size_t len)
{
	const struct {
		const char *name;
		bool have;
	} fns[] = {
		{ "cuMemGetAllocationGranularity",
		  cu->mem_get_allocation_granularity },
		{ "cuMemCreate", cu->mem_create },
		{ "cuMemAddressReserve", cu->mem_address_reserve },
		{ "cuMemMap", cu->mem_map },
		{ "cuMemSetAccess", cu->mem_set_access },
		{ "cuMemUnmap", cu->mem_unmap },
		{ "cuMemAddressFree", cu->mem_address_free },
		{ "cuMemRelease", cu->mem_release },
	};
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int n;

		if (fns[i].have)
			continue;
		n = snprintf(out + used, len - used, "%s%s", used ? " " : "",
			     fns[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	return out[0] != '\0';
}

/* One device attribute for the VMM set-up; false (recorded) on failure. */
static bool vmm_attr(const struct reg_run *rr, CUdevice dev, int attr,
		     int *val, struct reg_vmm_gpu *v)
{
	double t0 = now_ms();
	int rc;

	enter(rr->st, "cuDeviceGetAttribute");
	*val = 0;
	rc = rr->cu->device_get_attribute(val, attr, dev);
	if (rc == CUDA_SUCCESS)
		return true;
	cuda_call_record(&v->attr_call, rc, t0);
	v->attr = attr;
	v->skip = VMMS_ATTR_FAILED;
	return false;
}

/* A failed cuMem* call of the set-up: name it, keep its result. */
static int vmm_fail(const struct reg_run *rr, struct reg_vmm_gpu *v, int rc,
		    double t0)
{
	snprintf(v->fail_fn, sizeof(v->fail_fn), "%s", stage_current(rr->st));
	cuda_call_record(&v->fail, rc, t0);
	return -1;
}

/*
 * A GPU buffer allocated as NCCL allocates its own since 2.19.1 whenever
 * the driver supports it (src/misc/cudawrap.cc ncclCuMemEnable, the
 * NCCL_CUMEM_ENABLE auto default): src/include/alloc.h ncclCuMemAlloc
 * (NCCL v2.18.1 to v2.30.7) asks cuDeviceGetAttribute(
 * GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED), builds a CUmemAllocationProp
 * {PINNED, DEVICE id, requestedHandleTypes = ncclCuMemHandleType
 * (POSIX_FILE_DESCRIPTOR, cudawrap.cc), allocFlags.gpuDirectRDMACapable =
 * 1 when that attribute is set}, rounds the size up to
 * cuMemGetAllocationGranularity(MINIMUM), then cuMemCreate,
 * cuMemAddressReserve(size, alignment = granularity), and
 * ncclCuMemMapAndSetAccess: cuMemMap(offset 0) and cuMemSetAccess(DEVICE,
 * PROT_READWRITE). ncclIsCuMemSupported (cudawrap.cc) also wants
 * VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED. Everything taken is given back on
 * every failure (vmm_release). 0, or -1 with v saying why.
 */
static int vmm_setup(const struct reg_run *rr, struct gpu_buf *vb,
		     const struct gpu_buf *gb, struct reg_vmm_gpu *v)
{
	struct content fresh = poison(POISON_GPU);
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	size_t gran = 0;
	CUdevice dev;
	double t0;
	int rc, vmm = 0, flag = 0;

	vb->ordinal = gb->ordinal;
	vb->ctx = gb->ctx;
	if (vmm_missing(rr->cu, v->missing, sizeof(v->missing))) {
		v->skip = VMMS_NO_API;
		return -1;
	}
	enter(rr->st, "cuCtxSetCurrent");
	t0 = now_ms();
	rc = rr->cu->ctx_set_current(vb->ctx);
	if (rc != CUDA_SUCCESS)
		return vmm_fail(rr, v, rc, t0);
	enter(rr->st, "cuDeviceGet");
	t0 = now_ms();
	rc = rr->cu->device_get(&dev, vb->ordinal);
	if (rc != CUDA_SUCCESS)
		return vmm_fail(rr, v, rc, t0);
	if (!vmm_attr(rr, dev,
		      CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
		      &vmm, v))
		return -1;
	if (vmm <= 0) {
		v->skip = VMMS_UNSUPPORTED;
		return -1;
	}
	if (!vmm_attr(rr, dev,
		      CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
		      &flag, v))
		return -1;
	/*
	 * Without it NCCL still allocates (no gpuDirectRDMACapable), but the
	 * driver says RDMA cannot reach such memory: nothing to prove.
	 */
	if (flag <= 0) {
		v->skip = VMMS_GDR_UNSUPPORTED;
		return -1;
	}
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.location.id = dev;
	if (flag)
		prop.allocFlags.gpuDirectRDMACapable = 1;
	v->gdr_capable_flag = prop.allocFlags.gpuDirectRDMACapable;
	enter(rr->st, "cuMemGetAllocationGranularity");
	t0 = now_ms();
	rc = rr->cu->mem_get_allocation_granularity(&gran, &prop,
			CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (rc != CUDA_SUCCESS)
		return vmm_fail(rr, v, rc, t0);
	if (!gran) {
		/* No granularity is no answer; cuMemCreate would divide by it. */
		snprintf(v->fail_fn, sizeof(v->fail_fn),
			 "cuMemGetAllocationGranularity");
		cuda_call_record(&v->fail, CUDA_ERROR_INVALID_VALUE, t0);
		return -1;
	}
	v->granularity = gran;
	vb->vsize = (rr->bytes + gran - 1) / gran * gran;
	v->size = vb->vsize;
	enter(rr->st, "cuMemCreate");
	t0 = now_ms();
	rc = rr->cu->mem_create(&vb->handle, vb->vsize, &prop, 0);
	if (rc != CUDA_SUCCESS)
		goto fail;
	vb->created = true;
	enter(rr->st, "cuMemAddressReserve");
	t0 = now_ms();
	rc = rr->cu->mem_address_reserve(&vb->ptr, vb->vsize, gran, 0, 0);
	if (rc != CUDA_SUCCESS)
		goto fail;
	vb->reserved = true;
	enter(rr->st, "cuMemMap");
	t0 = now_ms();
	rc = rr->cu->mem_map(vb->ptr, vb->vsize, 0, vb->handle, 0);
	if (rc != CUDA_SUCCESS)
		goto fail;
	vb->mapped = true;
	memset(&access, 0, sizeof(access));
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = dev;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	enter(rr->st, "cuMemSetAccess");
	t0 = now_ms();
	rc = rr->cu->mem_set_access(vb->ptr, vb->vsize, &access, 1);
	if (rc != CUDA_SUCCESS)
		goto fail;
	vb->allocated = true;
	v->ok = true;
	if (rr->cu->memcpy_htod && rr->expect)
		(void)gpu_load(rr, vb, &fresh, NULL);
	return 0;
fail:
	vmm_fail(rr, v, rc, t0);
	vmm_release(rr, vb);
	return -1;
}

/*
 * The transfers through a pair's two MRs of one buffer (cuMemAlloc's, or
 * with @vmm the VMM one), where the pair carries any: a port, the host
 * control registered, transfers not turned off, on the plan.
 */
static void prove_paths(const struct reg_run *rr, struct nic_res *nr,
			struct reg_pair *pp, struct gpu_buf *gb, int nic,
			bool vmm, const struct ibv_mr *pmr,
			const struct ibv_mr *dmr)
{
	if (!pp->port || !nr->host_mr || rr->opt->no_datapath ||
	    pp->dp_off_rail)
		return;
	if (pmr)
		datapath(rr, nr, pp, gb, pmr, nic,
			 vmm ? DPP_VMM_PEERMEM : DPP_PEERMEM,
			 vmm ? &pp->dp_vmm_peermem : &pp->dp_peermem);
	if (dmr)
		datapath(rr, nr, pp, gb, dmr, nic,
			 vmm ? DPP_VMM_DMABUF : DPP_DMABUF,
			 vmm ? &pp->dp_vmm_dmabuf : &pp->dp_dmabuf);
}

/*
 * The cuMemAlloc proof again on the GPU's VMM buffer: ibv_reg_mr on the
 * pointer (peermem), the dma-buf export of the range + ibv_reg_dmabuf_mr,
 * and the verified loopback transfer through each MR.
 */
static void vmm_pair(const struct reg_run *rr, struct nic_res *nr,
		     struct reg_pair *pp, struct gpu_buf *vb, int nic)
{
	struct ibv_mr *pmr, *dmr;

	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(vb->ctx);
	pmr = reg_timed(rr, nr->pd, (void *)(uintptr_t)vb->ptr, rr->bytes, -1,
			0, &pp->vmm_peermem);
	dmr = reg_dmabuf(rr, nr, vb, &pp->vmm_export_call, &pp->vmm_dmabuf,
			 pp->export_flags);
	prove_paths(rr, nr, pp, vb, nic, true, pmr, dmr);
	dereg(rr, pmr);
	dereg(rr, dmr);
}

/* --- kernel log window --------------------------------------------------- */

static int kmsg_open(struct sysroot *sr, struct reg_facts *rf)
{
	struct stat sb;
	/* Confined to the sysroot like every other /dev lookup. */
	int fd = sysroot_open(sr, "/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		/* Never 0: the report names this errno. */
		rf->kmsg_errno = -fd;
		return -1;
	}
	/* The kernel log is a character device; anything else (a FIFO, a
	 * file or directory planted in a sysroot) is not, and reads no log. */
	if (fstat(fd, &sb) || !S_ISCHR(sb.st_mode)) {
		rf->kmsg_errno = ENODEV;
		close(fd);
		return -1;
	}
	/* Only what is logged from now on is ours to report. */
	if (lseek(fd, 0, SEEK_END) < 0) {
		rf->kmsg_errno = errno ? errno : EIO;
		close(fd);
		return -1;
	}
	rf->kmsg_readable = true;
	return fd;
}

static bool kmsg_interesting(const char *msg)
{
	static const char *const words[] = {
		"DMAR", "AMD-Vi", "IOMMU", "iommu", "AER", "PCIe Bus Error",
		"Xid", "page fault", "dma_buf", "ib_umem",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(msg, words[i]))
			return true;
	return false;
}

static void kmsg_collect(struct reg_facts *rf, int fd)
{
	char rec[1024];
	ssize_t n;

	if (fd < 0)
		return;
	for (;;) {
		char *msg, *nl;

		errno = 0;
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip ahead */
		if (n < 0 && errno != EAGAIN) {
			/* What could not be read is no clean log. */
			rf->kmsg_readable = false;
			rf->kmsg_errno = errno ? errno : EIO;
			break;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !kmsg_interesting(++msg))
			continue;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		if (rf->kmsg_count < KMSG_MAX_LINES)
			snprintf(rf->kmsg[rf->kmsg_count], sizeof(rf->kmsg[0]),
				 "%s", msg);
		rf->kmsg_count++;
	}
	close(fd);
}

/* --- the stage ----------------------------------------------------------- */

/* What the verbs stage found of the device @name, or NULL. */
static const struct verbs_nic *verbs_nic_named(const struct reg_run *rr,
					       const char *name)
{
	const struct verbs_facts *v = &rr->vf->verbs;

	for (int i = 0; i < vf_upto(v->count, rr->vf->cap.nics); i++)
		if (!strcmp(v->nics[i].name, name))
			return &v->nics[i];
	return NULL;
}

/* Is the device (by name) Data Direct, as the verbs stage found it? */
static bool nic_data_direct(const struct reg_run *rr, const char *name)
{
	const struct verbs_nic *vn;

	if (!rr->dv || !rr->dv->reg_dmabuf_mr || rr->opt->no_data_direct)
		return false;
	vn = verbs_nic_named(rr, name);
	return vn && mlx5_data_direct(vn);
}

/* --- which pairs carry a transfer ---------------------------------------- */

/*
 * Path components two sysfs device paths share ("/sys/devices/pci0000:00/
 * 0000:00:01.0/..."): the deeper, the nearer the two functions are.
 */
static int shared_depth(const char *a, const char *b)
{
	int depth = 0;

	for (size_t i = 1;; i++) {
		bool end_a = a[i] == '/' || !a[i], end_b = b[i] == '/' || !b[i];

		if (end_a && end_b) {
			depth++;
			if (!a[i] || !b[i])
				break;
		} else if (a[i] != b[i]) {
			break;
		}
	}
	return depth;
}

/*
 * The transfer (the costly part: buffers filled, moved and compared) runs
 * on each GPU's rails, the RDMA devices nearest to it in the PCIe tree, and
 * on every device that is no GPU's rail with the GPU nearest to it: each
 * mechanism is then proven on every GPU and on every device, and the cost
 * grows with rails, not with GPUs x devices. --every-pair (and a tree
 * without the paths) plans every pair. @plan: ngpu x ndev, true = run.
 */
static void plan_transfers(const struct reg_run *rr, const struct gpu_buf *gbufs,
			   int ngpu, struct ibv_device **list, int ndev,
			   bool *plan)
{
	char (*gpath)[256] = NULL, (*npath)[256] = NULL, path[320];
	int *depth = NULL;
	bool known = !rr->opt->every_pair && rr->opt->sysroot;

	for (int i = 0; i < ngpu * ndev; i++)
		plan[i] = true;
	if (!known || !ngpu || !ndev)
		return;
	gpath = calloc((size_t)ngpu, sizeof(*gpath));
	npath = calloc((size_t)ndev, sizeof(*npath));
	depth = calloc((size_t)ngpu * (size_t)ndev, sizeof(*depth));
	if (!gpath || !npath || !depth)
		goto out;
	for (int g = 0; g < ngpu; g++) {
		const char *pci = rr->vf->cuda.gpus[gbufs[g].ordinal].pci;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", pci);
		if (!pci[0] || sysroot_realpath(rr->opt->sysroot, path, gpath[g],
						sizeof(gpath[g])) < 0)
			goto out;
	}
	for (int d = 0; d < ndev; d++) {
		const char *name = rr->ibv->get_device_name(list[d]);

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device",
			 name ? name : "");
		if (!name || sysroot_realpath(rr->opt->sysroot, path, npath[d],
					      sizeof(npath[d])) < 0)
			goto out;
	}
	for (int g = 0; g < ngpu; g++)
		for (int d = 0; d < ndev; d++)
			depth[g * ndev + d] = shared_depth(gpath[g], npath[d]);
	for (int i = 0; i < ngpu * ndev; i++)
		plan[i] = false;
	/* Each GPU's rails. */
	for (int g = 0; g < ngpu; g++) {
		int best = -1;

		for (int d = 0; d < ndev; d++)
			if (depth[g * ndev + d] > best)
				best = depth[g * ndev + d];
		for (int d = 0; d < ndev; d++)
			plan[g * ndev + d] = depth[g * ndev + d] == best;
	}
	/* Each device no GPU has as a rail: with its nearest GPU. */
	for (int d = 0; d < ndev; d++) {
		int best = -1, at = 0;
		bool covered = false;

		for (int g = 0; g < ngpu; g++) {
			covered |= plan[g * ndev + d];
			if (depth[g * ndev + d] > best) {
				best = depth[g * ndev + d];
				at = g;
			}
		}
		if (!covered)
			plan[at * ndev + d] = true;
	}
out:
	free(gpath);
	free(npath);
	free(depth);
}

/*
 * Up to this many GPU x device pairs every pair is registered (a node of 8
 * GPUs and 32 devices): the NCCL model's rails (PXN through a peer GPU,
 * a wider NIC further away) are not always the PCIe-nearest pairs
 * plan_transfers sees, and the verdict stands on their registrations.
 */
#define REG_EVERY_PAIR_MAX 256

/*
 * The registrations (each cheap, but GPUs x devices of them, four a pair,
 * made a node of 8 GPUs and 256 SR-IOV functions mostly this): on a node
 * of more than REG_EVERY_PAIR_MAX pairs, the transfer pairs of @plan and,
 * on a device with fewer than two of them, the first other GPUs with a
 * buffer up to two (the MRs the GPU-to-GPU transfer uses). Every GPU and
 * every device then holds a registration of each mechanism; the report
 * infers the rest from their GPU's proven pair. @reg: ngpu x ndev, true =
 * register.
 */
static void plan_registrations(const struct gpu_buf *gbufs, int ngpu,
			       int ndev, const bool *plan, bool *reg)
{
	bool all = (long long)ngpu * ndev <= REG_EVERY_PAIR_MAX;

	for (int d = 0; d < ndev; d++) {
		int have = 0;

		for (int g = 0; g < ngpu; g++) {
			reg[g * ndev + d] = all || plan[g * ndev + d];
			have += plan[g * ndev + d] && gbufs[g].allocated;
		}
		for (int g = 0; g < ngpu && have < 2; g++)
			if (!reg[g * ndev + d] && gbufs[g].allocated) {
				reg[g * ndev + d] = true;
				have++;
			}
	}
}

/*
 * A device thread's memory: the host buffer it registers (2 x bytes) and
 * its expect/got scratch. Handed from device to device rather than freed:
 * a node of hundreds of RDMA devices faults in as many sets as run at
 * once, not one set a device.
 */
struct scratch {
	uint8_t *host, *expect, *got;
	bool busy;
};

struct scratch_pool {
	pthread_mutex_t lock;
	struct scratch slot[REG_DEVICES_MAX];	/* >= the pair loop's width */
};

/*
 * The pair loop runs a thread per RDMA device (par_for): a device's
 * context, PD, host buffer and QPs are its thread's own. What the devices
 * share is the GPU buffers, which a transfer fills, moves and checks (and
 * the doubles read and write the memory they register): a GPU's lock is
 * held for all of one pair's work and for a GPU-to-GPU transfer, so a
 * buffer holds one pair's contents at a time and its history is never
 * written by two threads. Results land in slots fixed before the threads
 * start (pair d x g at d * ngpu + g, device d at d): the report is the
 * serial loop's whatever order the threads run in.
 */
struct pairs_run {
	const struct reg_run *rr;
	struct scratch_pool *pool;
	struct gpu_buf *gbufs, *vbufs;
	struct ibv_device **list;
	int ngpu, ndev;
	const bool *plan, *reg;	/* ngpu x ndev, plan_transfers/_registrations */
	const bool *full;	/* per pair slot: a full bandwidth burst */
	pthread_mutex_t *gpu_lock;	/* one per GPU */
	pthread_mutex_t *sr_lock;	/* rr->sr's, for a thread without its own */
};

/* The MRs of a device's two lowest GPUs with one, for GPU-to-GPU. */
struct keep {
	int n, gpu[2];
	struct ibv_mr *mr[2];
	enum dp_path path[2];
};

/*
 * Offer GPU @g's MR: the two lowest GPUs' are kept (what the serial loop,
 * in GPU order, kept first), any other is deregistered.
 */
static void keep_offer(const struct reg_run *rr, struct keep *k, int g,
		       struct ibv_mr *mr, enum dp_path path)
{
	int at = k->n;

	while (at > 0 && k->gpu[at - 1] > g)
		at--;
	if (at >= 2) {
		dereg(rr, mr);
		return;
	}
	if (k->n == 2)
		dereg(rr, k->mr[1]);
	else
		k->n++;
	for (int i = k->n - 1; i > at; i--) {
		k->gpu[i] = k->gpu[i - 1];
		k->mr[i] = k->mr[i - 1];
		k->path[i] = k->path[i - 1];
	}
	k->gpu[at] = g;
	k->mr[at] = mr;
	k->path[at] = path;
}

/* Pair d x g: its registrations and transfers. GPU g's lock is held. */
static void pair_work(const struct pairs_run *pr, struct reg_run *rr,
		      struct nic_res *nr, int d, int g, struct keep *k)
{
	int slot = d * pr->ngpu + g, cell = g * pr->ndev + d;
	struct reg_pair *pp = &rr->rf->pairs[slot];
	struct gpu_buf *gb = &pr->gbufs[g];
	struct ibv_mr *pmr, *dmr;

	if (!gb->allocated) {
		snprintf(pp->skip, sizeof(pp->skip),
			 "no GPU buffer (%s failed: %s)", gb->fail_fn,
			 gb->fail.name);
		pp->gpu_rc = gb->fail.rc;
		/* A CUDA call's name: gpu_fn holds the longest. */
		snprintf(pp->gpu_fn, sizeof(pp->gpu_fn), "%.*s",
			 (int)sizeof(pp->gpu_fn) - 1, gb->fail_fn);
		return;
	}
	if (!nr->pd) {
		snprintf(pp->skip, sizeof(pp->skip), "device not usable (%s)",
			 rr->rf->nics[d].open_err ? "ibv_open_device failed" :
			 "ibv_alloc_pd failed");
		return;
	}
	if (rr->sr_lock)
		pthread_mutex_lock(rr->sr_lock);
	choose_port(rr, nr, pp);
	if (rr->sr_lock)
		pthread_mutex_unlock(rr->sr_lock);
	if (!pr->reg[cell]) {
		pp->reg_inferred = true;
		return;
	}
	rr->full_burst = pr->full[slot];
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(gb->ctx);
	pmr = reg_timed(rr, nr->pd, (void *)(uintptr_t)gb->ptr, rr->bytes, -1,
			0, &pp->peermem);
	pp->export_flags = export_flags(rr, nr, gb->ordinal);
	dmr = reg_dmabuf(rr, nr, gb, &pp->export_call, &pp->dmabuf,
			 pp->export_flags);
	/* Only what would have been transferred is "off rail". */
	pp->dp_off_rail = pp->port && nr->host_mr && !rr->opt->no_datapath &&
			  !pr->plan[cell];
	prove_paths(rr, nr, pp, gb, d, false, pmr, dmr);
	if (pr->vbufs[g].allocated)
		vmm_pair(rr, nr, pp, &pr->vbufs[g], d);
	if ((dmr || pmr) && pp->port) {
		if (dmr && pmr)
			dereg(rr, pmr);
		keep_offer(rr, k, g, dmr ? dmr : pmr,
			   dmr ? DPP_DMABUF : DPP_PEERMEM);
		return;
	}
	dereg(rr, pmr);
	dereg(rr, dmr);
}

/* A free slot, its buffers made on first use (NULL where malloc failed);
 * NULL if none is free. */
static struct scratch *scratch_take(struct scratch_pool *pool, size_t bytes)
{
	struct scratch *s = NULL;

	pthread_mutex_lock(&pool->lock);
	for (int i = 0; i < REG_DEVICES_MAX && !s; i++)
		if (!pool->slot[i].busy)
			s = &pool->slot[i];
	if (s)
		s->busy = true;
	pthread_mutex_unlock(&pool->lock);
	if (!s)
		return NULL;
	if (!s->host && posix_memalign((void **)&s->host, PAGE, 2 * bytes))
		s->host = NULL;
	if (!s->expect)
		s->expect = malloc(bytes);
	if (!s->got)
		s->got = malloc(bytes);
	return s;
}

static void scratch_put(struct scratch_pool *pool, struct scratch *s)
{
	pthread_mutex_lock(&pool->lock);
	s->busy = false;
	pthread_mutex_unlock(&pool->lock);
}

static void scratch_free(struct scratch *s)
{
	free(s->host);
	free(s->expect);
	free(s->got);
	memset(s, 0, sizeof(*s));
}

static void gpu_lock(const struct pairs_run *pr, const struct reg_run *rr,
		     int g)
{
	/* Named while queued; a hang is named by the item that hangs. */
	stage_wait(rr->st, "waiting for a GPU buffer");
	pthread_mutex_lock(&pr->gpu_lock[g]);
}

/*
 * Device d's pairs, on a thread of its own: its set-up, its pairs (those
 * it transfers with first: they hold their GPU longest, and each device's
 * rails are other GPUs than its neighbours', so the threads start apart),
 * the GPU-to-GPU transfer, its release. Buffers from the pool's slot
 * this thread holds.
 */
static void nic_item(void *arg, int d)
{
	const struct pairs_run *pr = arg;
	struct reg_run mine = *pr->rr;
	struct reg_facts *rf = mine.rf;
	struct nic_res nr = { 0 };
	struct keep k = { .n = 0 };
	struct scratch *sc;
	struct sysroot *own;

	/* A sysroot's caches are one thread's (access/sysroot.h): a reader
	 * of its own for the port states and GIDs, or the run's, locked. */
	own = mine.sr ? sysroot_new(sysroot_get(mine.sr)) : NULL;
	if (own) {
		sysroot_guard_fd(own);
		mine.sr = own;
	} else {
		mine.sr_lock = pr->sr_lock;
	}
	/* par_for_width runs at most pairs_width() <= REG_DEVICES_MAX items
	 * at once, so a slot is free; were none, no memory is reported. */
	sc = scratch_take(pr->pool, mine.bytes);
	mine.expect = sc ? sc->expect : NULL;
	mine.got = sc ? sc->got : NULL;
	nr.host = sc ? sc->host : NULL;
	nr.data_direct = nic_data_direct(&mine, rf->nics[d].nic);
	nic_setup(&mine, pr->list[d], &nr, &rf->nics[d]);
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < pr->ngpu; g++) {
			if (d * pr->ngpu + g >= rf->npairs)
				break;	/* past the capacity: untried */
			if (pr->plan[g * pr->ndev + d] != !pass)
				continue;
			gpu_lock(pr, &mine, g);
			pair_work(pr, &mine, &nr, d, g, &k);
			pthread_mutex_unlock(&pr->gpu_lock[g]);
		}
	if (k.n == 2 && nr.host_mr && !mine.opt->no_datapath) {
		/* Lowest GPU first: no two threads wait for each other. */
		gpu_lock(pr, &mine, k.gpu[0]);
		gpu_lock(pr, &mine, k.gpu[1]);
		gpu_to_gpu(&mine, &nr, &rf->pairs[d * pr->ngpu + k.gpu[1]], d,
			   k.path[0], &pr->gbufs[k.gpu[0]], k.mr[0],
			   &pr->gbufs[k.gpu[1]], k.mr[1], &rf->nics[d]);
		pthread_mutex_unlock(&pr->gpu_lock[k.gpu[1]]);
		pthread_mutex_unlock(&pr->gpu_lock[k.gpu[0]]);
	}
	for (int i = 0; i < k.n; i++)
		dereg(&mine, k.mr[i]);
	nic_release(&mine, &nr);
	if (mine.cu && pr->ngpu) {
		/* The thread's current context: none, as it started. */
		enter(mine.st, "cuCtxSetCurrent");
		mine.cu->ctx_set_current(NULL);
	}
	if (sc)
		scratch_put(pr->pool, sc);
	sysroot_free(own);
}

/*
 * Whether device @name may carry a transfer, as far as is known before its
 * thread starts: the verbs stage did not fail to open it and sysfs shows a
 * port ACTIVE. A device down or unopenable would otherwise spend full
 * bursts that pairs able to transfer then lack (the serial loop gave them
 * to pairs that got there).
 */
static bool may_burst(const struct reg_run *rr, const char *name)
{
	const struct verbs_nic *vn = verbs_nic_named(rr, name);

	if (vn && !vn->opened)
		return false;
	for (int port = 1; port <= 16; port++)
		if (ib_port_state(rr->sr, name, port) == IBV_PORT_ACTIVE)
			return true;
	return false;
}

/*
 * Before the threads: the device and pair slots, each pair's fixed fields,
 * and which pairs burst in full: the first BW_FULL_BURSTS the plan gives a
 * transfer on a device that may carry it (may_burst), in report order,
 * whichever thread gets there first (a fixed choice: the report does not
 * depend on the threads' order).
 */
static void pairs_prepare(struct reg_run *rr, const struct pairs_run *pr,
			  bool *full)
{
	struct reg_facts *rf = rr->rf;
	int nnics = pr->ndev < rr->vf->cap.nics ? pr->ndev : rr->vf->cap.nics;
	int ranked = 0;

	/* More devices than the node showed before the worker started (the
	 * capacities): the rest are untried, and the report says so. */
	rf->pairs_truncated = pr->ndev > nnics ||
			      (long long)nnics * pr->ngpu > rr->vf->cap.pairs;
	rf->nnics = nnics;
	rf->npairs = (long long)nnics * pr->ngpu > rr->vf->cap.pairs ?
		     rr->vf->cap.pairs : nnics * pr->ngpu;
	for (int d = 0; d < nnics; d++) {
		struct reg_nic *rn = &rf->nics[d];
		const char *name;
		bool may;

		enter(rr->st, "ibv_get_device_name");
		name = rr->ibv->get_device_name(pr->list[d]);
		snprintf(rn->nic, sizeof(rn->nic), "%s", name ? name : "?");
		may = ranked < BW_FULL_BURSTS && may_burst(rr, rn->nic);
		for (int g = 0; g < pr->ngpu && d * pr->ngpu + g < rf->npairs;
		     g++) {
			int slot = d * pr->ngpu + g;
			struct reg_pair *pp = &rf->pairs[slot];

			pp->gpu = pr->gbufs[g].ordinal;
			memcpy(pp->nic, rn->nic, sizeof(pp->nic));
			pp->gid_index = -1;
			pp->dp_peermem.wc_status = -1;
			pp->dp_dmabuf.wc_status = -1;
			pp->dp_vmm_peermem.wc_status = -1;
			pp->dp_vmm_dmabuf.wc_status = -1;
			full[slot] = may && pr->plan[g * pr->ndev + d] &&
				     pr->gbufs[g].allocated &&
				     ranked++ < BW_FULL_BURSTS;
		}
	}
}

static int pairs_width(size_t bytes)
{
	unsigned long long n = REG_LOOP_BYTES / (4 * (unsigned long long)bytes);

	return n < 1 ? 1 : n > REG_DEVICES_MAX ? REG_DEVICES_MAX : (int)n;
}

static void run_pairs(struct reg_run *rr, struct gpu_buf *gbufs,
		      struct gpu_buf *vbufs, int ngpu, struct ibv_device **list,
		      int ndev)
{
	size_t cells = (size_t)(ngpu ? ngpu : 1) * (size_t)(ndev ? ndev : 1);
	bool *plan = calloc(3 * cells, sizeof(*plan)), *reg = plan + cells;
	pthread_mutex_t *locks = calloc(ngpu ? (size_t)ngpu : 1,
					sizeof(*locks));
	pthread_mutex_t sr_lock = PTHREAD_MUTEX_INITIALIZER;
	struct scratch_pool pool = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct pairs_run pr = {
		.rr = rr, .pool = &pool, .gbufs = gbufs, .vbufs = vbufs,
		.list = list,
		.ngpu = ngpu, .ndev = ndev, .plan = plan, .reg = reg,
		.full = reg + cells, .gpu_lock = locks, .sr_lock = &sr_lock,
	};
	int g = 0;

	if (!plan || !locks)
		goto out;
	for (g = 0; g < ngpu; g++)
		if (pthread_mutex_init(&locks[g], NULL))
			goto out;
	plan_transfers(rr, gbufs, ngpu, list, ndev, plan);
	plan_registrations(gbufs, ngpu, ndev, plan, reg);
	pairs_prepare(rr, &pr, reg + cells);
	par_for_width(rr->st, rr->rf->nnics, pairs_width(rr->bytes), nic_item,
		      &pr);
	for (int i = 0; i < REG_DEVICES_MAX; i++)
		scratch_free(&pool.slot[i]);
out:
	while (locks && g-- > 0)
		pthread_mutex_destroy(&locks[g]);
	free(locks);
	free(plan);
}

struct setup_run {
	const struct reg_run *rr;
	struct gpu_buf *gbufs, *vbufs;
};

/*
 * One GPU's buffers: its context, cuMemAlloc and the VMM buffer. On a
 * thread of its own (par_for): it writes only gbufs[g], vbufs[g] and
 * rf->vmm[g], and poisons through a scratch buffer of its own.
 */
static void setup_item(void *arg, int g)
{
	struct setup_run *sr = arg;
	struct reg_run mine = *sr->rr;
	struct reg_vmm_gpu *v = &mine.rf->vmm[g];

	mine.expect = malloc(mine.bytes);
	mine.got = NULL;
	v->skip = VMMS_NOT_RUN;
	if (gpu_setup(&mine, &sr->gbufs[g],
		      mine.vf->cuda.gpus[g].ordinal) == 0) {
		v->skip = VMMS_TRIED;
		(void)vmm_setup(&mine, &sr->vbufs[g], &sr->gbufs[g], v);
	}
	enter(mine.st, "cuCtxSetCurrent");
	mine.cu->ctx_set_current(NULL);
	free(mine.expect);
}

/* Every GPU's buffers, in parallel; then what the serial loop counted. */
static void gpus_setup(struct reg_run *rr, struct gpu_buf *gbufs,
		       struct gpu_buf *vbufs, int ngpu)
{
	struct setup_run sr = { .rr = rr, .gbufs = gbufs, .vbufs = vbufs };

	if (cuda_primary_reserve(ngpu))
		par_for(rr->st, ngpu, setup_item, &sr);
	else		/* no memory for the table up front: one at a time */
		for (int g = 0; g < ngpu; g++)
			setup_item(&sr, g);
	for (int g = 0; g < ngpu; g++) {
		if (gbufs[g].allocated) {
			rr->rf->gpus_allocated++;
		} else if (!rr->rf->alloc_fail.called) {
			rr->rf->alloc_fail = gbufs[g].fail;
			snprintf(rr->rf->alloc_fn, sizeof(rr->rf->alloc_fn),
				 "%s", gbufs[g].fail_fn);
		}
	}
}

void reg_stage(const struct vendor_options *opt, struct vendor_facts *vf,
	       struct stage_status *st)
{
	struct reg_run rr = {
		.opt = opt, .rf = &vf->reg, .st = st, .sr = opt->sysroot,
		.bytes = opt->reg_bytes ? opt->reg_bytes : REG_DEFAULT_BYTES,
	};
	struct gpu_buf *gbufs = NULL, *vbufs = NULL;
	struct ibv_device **list = NULL;
	uint64_t *base = NULL;
	int ngpu = 0, ndev = 0, kfd;

	rr.ibv = verbs_api(opt, vf, st);
	if (!rr.ibv)
		return;
	rr.vf = vf;
	rr.dv = mlx5_api(opt, vf, st);
	/* Without CUDA the host-memory control still runs; GPUs do not. */
	rr.cu = cuda_api(opt, vf, st);
	rr.rf->ran = true;
	rr.rf->cuda = rr.cu != NULL;
	rr.rf->bytes = rr.bytes;
	/* A page of poison at each end (an eighth of a small buffer). */
	rr.guard = rr.bytes / 8 < PAGE ? rr.bytes / 8 : PAGE;
	rr.seed = run_seed();
	rr.pat_base = base = pattern_base(rr.bytes, &rr.pat_words);
	/* Scratch (expect, got) is each thread's own: setup_item, nic_item. */
	kfd = kmsg_open(opt->sysroot, rr.rf);

	ngpu = rr.cu ? vf->cuda.gpus_recorded : 0;
	gbufs = calloc(ngpu ? (size_t)ngpu : 1, sizeof(*gbufs));
	vbufs = calloc(ngpu ? (size_t)ngpu : 1, sizeof(*vbufs));
	if (!gbufs || !vbufs)
		goto out;
	gpus_setup(&rr, gbufs, vbufs, ngpu);
	enter(st, "ibv_get_device_list");
	list = rr.ibv->get_device_list(&ndev);
	if (list)
		run_pairs(&rr, gbufs, vbufs, ngpu, list, ndev);
out:
	if (list) {
		enter(st, "ibv_free_device_list");
		rr.ibv->free_device_list(list);
	}
	for (int g = 0; vbufs && g < ngpu; g++)
		vmm_release(&rr, &vbufs[g]);
	for (int g = 0; gbufs && g < ngpu; g++)
		gpu_release(&rr, &gbufs[g]);
	free(vbufs);
	free(gbufs);
	free(base);
	kmsg_collect(rr.rf, kfd);
}
