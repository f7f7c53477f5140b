// SPDX-License-Identifier: MIT
/*
 * Two-node transfers in the worker (peer_run.h). Each unit (a rail and a
 * mechanism) goes the same way on both sides, message for message, so a
 * side that cannot go on says so (PEER_ERROR) where the other expects its
 * next message and both move to the next unit together:
 *
 *   set-up      GPU buffer, MR (DMA-BUF or peermem), RC QP in INIT
 *   ENDPOINT    both ways: QP number, PSN, GID/LID, MTU, rkey, address,
 *               the key of the pattern its source region holds
 *   connect     RTR/RTS against the other's endpoint; RESULT both ways
 *   two phases  the actor (the connector first) WRITEs its source into
 *               the other's target, READs the other's source back into
 *               its own target and checks it, runs a bounded bandwidth
 *               burst and an 8-byte latency probe, then says so (RESULT);
 *               the other checks its target held the actor's pattern and
 *               answers (RESULT)
 *
 * Every QP, CQ, MR, PD, device context, GPU buffer and fd taken here is
 * released on every path.
 */
#include "access/peer_run.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "access/cuda.h"
#include "access/reg.h"
#include "access/verbs.h"

#define PAGE		4096ull
#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define SQ_DEPTH	32
#define BW_INFLIGHT	16
#define LAT_ROUNDS	32
/* Local ACK timeout 4.096 us x 2^14 = 67 ms, 6 retries: a far end that
 * never answers gives IBV_WC_RETRY_EXC_ERR after about half a second
 * (484 ms on soft-RoCE; NCCL's default, NCCL_IB_TIMEOUT=20, would take half
 * a minute). Not 7: soft-RoCE (6.1) retries a retry_cnt of 7 forever. */
#define QP_TIMEOUT	14
#define QP_RETRY	6
/* A completion later than this is not coming (above the retry time). */
#define POLL_MS		3000.0
#define POISON		0xa5

struct unit {
	const struct peer_plan_rail *pr;
	unsigned int mech;		/* PEER_MECH_* */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_port_attr pa;
	CUdeviceptr ptr;		/* target region, then source region */
	bool allocated;
	uint8_t *host;			/* staging for cuMemcpy */
	uint8_t *want;
};

struct prun {
	const struct vendor_options *opt;
	const struct peer_plan *plan;
	const struct cuda_table *cu;
	const struct verbs_table *ibv;
	struct stage_status *st;
	struct peer_stage_facts *pf;
	struct ibv_device **list;
	int ndev;
	struct peer_conn conn;		/* the plan's, with our own deadline */
	bool broken;			/* the channel failed: no more units */
	uint8_t payload[PEER_MAX_PAYLOAD];
	size_t len;
};

static void enter(struct stage_status *st, const char *call)
{
	snprintf(st->call, sizeof(st->call), "%s", call);
}

unsigned int peer_mtu_bytes(unsigned int mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

static int fail(struct peer_xfer *x, const char *step, int err)
{
	if (!x->step[0])
		snprintf(x->step, sizeof(x->step), "%.47s", step);
	if (!x->err)
		x->err = err ? err : EIO;
	return -1;
}

/* --- patterns ------------------------------------------------------------ */

static uint32_t fresh_key(void)
{
	uint32_t k = 0;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != sizeof(k))
		k = (uint32_t)(now_ms() * 1e3) ^ (uint32_t)getpid();
	return k | 1;
}

/* The bytes of pattern @key: xorshift64*, so no two keys agree for long. */
static void fill(uint8_t *p, size_t n, uint32_t key)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * ((uint64_t)key + 1);

	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;

		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		v = s * 0x2545f4914f6cdd1dull;
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

/* What a region holds against the pattern it should (enum dp_fault). */
static int judge(const uint8_t *got, const uint8_t *want, size_t n)
{
	size_t same = 0, poison = 0;

	for (size_t i = 0; i < n; i++) {
		same += got[i] == want[i];
		poison += got[i] == POISON;
	}
	if (same == n)
		return DPF_NONE;
	if (poison == n)
		return DPF_NOT_LANDED;
	return same + poison == n ? DPF_PARTIAL : DPF_CORRUPT;
}

static const char *fault_words(int f)
{
	switch (f) {
	case DPF_NOT_LANDED:
		return "nothing landed (the buffer still held its poison)";
	case DPF_PARTIAL:
		return "part of the pattern landed, the rest is poison";
	default:
		return "other bytes landed than were sent";
	}
}

/* --- the channel, bounded per step --------------------------------------- */

static void channel_broke(struct prun *p, int ret)
{
	p->broken = true;
	p->pf->conn_err = ret;
	snprintf(p->pf->conn_error, sizeof(p->pf->conn_error), "%s",
		 p->conn.err[0] ? p->conn.err : strerror(-ret));
}

/* A second before the run's deadline, so a stalled peer is this stage's
 * finding (PEER_TIMEOUT), not a worker killed at the deadline. */
#define DEADLINE_MARGIN_MS 1000.0

static void step_deadline(struct prun *p)
{
	double until = now_ms() + p->plan->step_ms;
	double run = p->opt->run_deadline_ms - DEADLINE_MARGIN_MS;

	p->conn.deadline_ms = p->opt->run_deadline_ms > 0 && run < until ?
			      run : until;
}

static int chan_send(struct prun *p, uint16_t type, const struct peer_buf *b)
{
	int ret;

	if (p->broken)
		return -EPIPE;
	enter(p->st, "peer: send");
	step_deadline(p);
	ret = peer_send(&p->conn, type, b);
	if (ret)
		channel_broke(p, ret);
	return ret;
}

/*
 * The peer's next message, which must be @want or PEER_ERROR (then its
 * reason goes to x->peer_error and -ECANCELED comes back).
 */
static int chan_recv(struct prun *p, uint16_t want, struct peer_xfer *x)
{
	struct peer_error e;
	uint16_t type;
	int ret;

	if (p->broken)
		return -EPIPE;
	enter(p->st, "peer: wait");
	step_deadline(p);
	ret = peer_recv(&p->conn, &type, p->payload, &p->len);
	if (ret) {
		channel_broke(p, ret);
		return ret;
	}
	if (type == PEER_ERROR && !peer_error_decode(p->payload, p->len, &e)) {
		snprintf(x->peer_error, sizeof(x->peer_error), "%s",
			 e.reason[0] ? e.reason : "the peer stopped");
		return -ECANCELED;
	}
	if (type != want) {
		snprintf(p->conn.err, sizeof(p->conn.err), "the peer sent "
			 "message type %u where %u was due", type, want);
		channel_broke(p, -EPROTO);
		return -EPROTO;
	}
	return 0;
}

static int send_error(struct prun *p, const struct peer_xfer *x)
{
	struct peer_error e = { .code = -(x->err ? x->err : EIO) };
	struct peer_buf b = { .len = 0 };

	snprintf(e.reason, sizeof(e.reason), "%s failed: %s%s%s", x->step,
		 x->cu.called ? x->cu.name : strerror(x->err),
		 x->wc_status >= 0 && x->wc_status ? " (completion " : "",
		 x->wc_status >= 0 && x->wc_status ?
		 wc_status_meaning(x->wc_status) : "");
	if (x->wc_status > 0)
		strncat(e.reason, ")", sizeof(e.reason) - strlen(e.reason) - 1);
	peer_error_encode(&e, &b);
	return chan_send(p, PEER_ERROR, &b);
}

static int send_result(struct prun *p, const struct peer_result *r)
{
	struct peer_buf b = { .len = 0 };

	peer_result_encode(r, &b);
	return chan_send(p, PEER_RESULT, &b);
}

static int recv_result(struct prun *p, struct peer_xfer *x,
		       struct peer_result *r)
{
	int ret = chan_recv(p, PEER_RESULT, x);

	if (!ret && peer_result_decode(p->payload, p->len, r)) {
		snprintf(p->conn.err, sizeof(p->conn.err),
			 "the peer's RESULT does not decode");
		channel_broke(p, -EPROTO);
		return -EPROTO;
	}
	return ret;
}

/*
 * Both sides say how a step went, then hear the other: 0 when both went
 * on, else the unit ends here (on both sides, as both heard both).
 */
static int step_both(struct prun *p, struct peer_xfer *x, uint32_t rail,
		     int mine, const char *what)
{
	struct peer_result me = { .rail = rail, .status = mine }, them;

	if (mine)
		snprintf(me.detail, sizeof(me.detail), "%s failed: %s",
			 x->step, strerror(x->err));
	else
		snprintf(me.detail, sizeof(me.detail), "%s", what);
	if (send_result(p, &me) || recv_result(p, x, &them))
		return -1;
	if (them.status && !x->peer_error[0])
		snprintf(x->peer_error, sizeof(x->peer_error), "%s",
			 them.detail);
	return mine || them.status ? -1 : 0;
}

/* --- verbs and CUDA ------------------------------------------------------- */

static struct ibv_device *find_device(const struct prun *p, const char *name)
{
	for (int i = 0; p->list && i < p->ndev; i++)
		if (!strcmp(p->ibv->get_device_name(p->list[i]), name))
			return p->list[i];
	return NULL;
}

static int gpu_copy(struct prun *p, struct peer_xfer *x, bool to_gpu,
		    CUdeviceptr at, uint8_t *host)
{
	double t0 = now_ms();
	size_t n = p->plan->bytes;
	int rc;

	enter(p->st, to_gpu ? "cuMemcpyHtoD_v2" : "cuMemcpyDtoH_v2");
	rc = to_gpu ? p->cu->memcpy_htod(at, host, n) :
		      p->cu->memcpy_dtoh(host, at, n);
	if (rc != CUDA_SUCCESS) {
		cuda_call_record(&x->cu, rc, t0);
		return fail(x, p->st->call, EIO);
	}
	return 0;
}

static int register_gpu(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	size_t span = 2 * p->plan->bytes;
	CUdeviceptr base = u->ptr & ~(CUdeviceptr)(PAGE - 1);
	double t0;
	int fd = -1, rc;

	if (u->mech == PEER_MECH_PEERMEM) {
		enter(p->st, "ibv_reg_mr");
		errno = 0;
		u->mr = p->ibv->reg_mr(u->pd, (void *)(uintptr_t)u->ptr, span,
				       MR_ACCESS);
		return u->mr ? 0 : fail(x, "ibv_reg_mr", errno);
	}
	if (!p->cu->mem_get_handle_for_address_range || !p->ibv->reg_dmabuf_mr)
		return fail(x, "DMA-BUF API", ENOSYS);
	enter(p->st, "cuMemGetHandleForAddressRange");
	t0 = now_ms();
	rc = p->cu->mem_get_handle_for_address_range(&fd, base,
			(span + (size_t)(u->ptr - base) + PAGE - 1) &
			~(size_t)(PAGE - 1),
			CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (rc != CUDA_SUCCESS || fd < 0) {
		cuda_call_record(&x->cu, rc, t0);
		return fail(x, "cuMemGetHandleForAddressRange", EIO);
	}
	enter(p->st, "ibv_reg_dmabuf_mr");
	errno = 0;
	u->mr = p->ibv->reg_dmabuf_mr(u->pd, (uint64_t)(u->ptr - base), span,
				      (uintptr_t)u->ptr, fd, MR_ACCESS);
	rc = errno;
	close(fd);		/* the MR holds its own reference */
	return u->mr ? 0 : fail(x, "ibv_reg_dmabuf_mr", rc);
}

static int gpu_buffer(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	CUcontext cctx;
	double t0 = now_ms();
	int rc;

	rc = cuda_primary_ctx(u->pr->ordinal, &cctx, &x->cu, p->st);
	if (rc != CUDA_SUCCESS)
		return fail(x, "cuDevicePrimaryCtxRetain", EIO);
	enter(p->st, "cuCtxSetCurrent");
	rc = p->cu->ctx_set_current(cctx);
	if (rc == CUDA_SUCCESS) {
		enter(p->st, "cuMemAlloc_v2");
		t0 = now_ms();
		rc = p->cu->mem_alloc(&u->ptr, 2 * p->plan->bytes);
	}
	if (rc != CUDA_SUCCESS) {
		cuda_call_record(&x->cu, rc, t0);
		return fail(x, p->st->call, EIO);
	}
	u->allocated = true;
	return 0;
}

static int make_qp(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_qp_attr a = { 0 };

	enter(p->st, "ibv_create_cq");
	errno = 0;
	u->cq = p->ibv->create_cq(u->ctx, 2 * SQ_DEPTH, NULL, NULL, 0);
	if (!u->cq)
		return fail(x, "ibv_create_cq", errno);
	init.send_cq = u->cq;
	init.recv_cq = u->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = SQ_DEPTH;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	enter(p->st, "ibv_create_qp");
	errno = 0;
	u->qp = p->ibv->create_qp(u->pd, &init);
	if (!u->qp)
		return fail(x, "ibv_create_qp", errno);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)u->pr->port;
	a.qp_access_flags = MR_ACCESS;
	enter(p->st, "ibv_modify_qp");
	if (p->ibv->modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail(x, "ibv_modify_qp(INIT)", errno);
	return 0;
}

/* Everything up to a QP in INIT over a registered GPU buffer. */
static int unit_setup(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	struct ibv_device *dev = find_device(p, u->pr->nic);

	if (!dev)
		return fail(x, "ibv_get_device_list", ENODEV);
	enter(p->st, "ibv_open_device");
	errno = 0;
	u->ctx = p->ibv->open_device(dev);
	if (!u->ctx)
		return fail(x, "ibv_open_device", errno);
	enter(p->st, "ibv_alloc_pd");
	errno = 0;
	u->pd = p->ibv->alloc_pd(u->ctx);
	if (!u->pd)
		return fail(x, "ibv_alloc_pd", errno);
	enter(p->st, "ibv_query_port");
	if (p->ibv->query_port(u->ctx, (uint8_t)u->pr->port, &u->pa))
		return fail(x, "ibv_query_port", errno);
	u->host = malloc(p->plan->bytes);
	u->want = malloc(p->plan->bytes);
	if (!u->host || !u->want)
		return fail(x, "malloc", ENOMEM);
	if (gpu_buffer(p, u, x) || register_gpu(p, u, x) || make_qp(p, u, x))
		return -1;
	return 0;
}

static void unit_release(struct prun *p, struct unit *u)
{
	if (u->qp) {
		enter(p->st, "ibv_destroy_qp");
		p->ibv->destroy_qp(u->qp);
	}
	if (u->cq) {
		enter(p->st, "ibv_destroy_cq");
		p->ibv->destroy_cq(u->cq);
	}
	if (u->mr) {
		enter(p->st, "ibv_dereg_mr");
		p->ibv->dereg_mr(u->mr);
	}
	if (u->pd) {
		enter(p->st, "ibv_dealloc_pd");
		p->ibv->dealloc_pd(u->pd);
	}
	if (u->ctx) {
		enter(p->st, "ibv_close_device");
		p->ibv->close_device(u->ctx);
	}
	if (u->allocated) {
		enter(p->st, "cuMemFree_v2");
		p->cu->mem_free(u->ptr);
	}
	if (p->cu) {
		enter(p->st, "cuCtxSetCurrent");
		p->cu->ctx_set_current(NULL);
	}
	free(u->host);
	free(u->want);
	memset(u, 0, sizeof(*u));
}

static void local_endpoint(struct prun *p, struct unit *u, uint32_t rail,
			   struct peer_endpoint *e)
{
	union ibv_gid gid;

	memset(e, 0, sizeof(*e));
	e->rail = rail;
	snprintf(e->nic, sizeof(e->nic), "%s", u->pr->nic);
	e->port = (uint8_t)u->pr->port;
	e->link_layer = u->pa.link_layer;
	e->lid = u->pa.lid;
	e->mtu = (uint8_t)u->pa.active_mtu;
	e->mech = (uint8_t)u->mech;
	e->gid_index = (uint8_t)(u->pr->gid_index >= 0 ? u->pr->gid_index : 0);
	enter(p->st, "ibv_query_gid");
	if (!p->ibv->query_gid(u->ctx, (uint8_t)u->pr->port, e->gid_index,
			       &gid))
		memcpy(e->gid, gid.raw, sizeof(e->gid));
	e->qpn = u->qp->qp_num;
	e->psn = fresh_key() & 0xffffff;
	e->rkey = u->mr->rkey;
	e->addr = u->ptr;
	e->len = 2 * p->plan->bytes;
	e->pattern = fresh_key();
}

static int qp_connect(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	const struct peer_endpoint *me = &x->local, *r = &x->remote;
	struct ibv_qp_attr a = { 0 };
	static const uint8_t zero[16];

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)(me->mtu < r->mtu ? me->mtu : r->mtu);
	if (!a.path_mtu)
		a.path_mtu = IBV_MTU_1024;
	x->path_mtu = peer_mtu_bytes(a.path_mtu);
	a.dest_qp_num = r->qpn;
	a.rq_psn = r->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)u->pr->port;
	a.ah_attr.dlid = r->lid;
	if (u->pa.link_layer == IBV_LINK_LAYER_ETHERNET ||
	    (u->pr->gid_index >= 0 && memcmp(r->gid, zero, 16))) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
		a.ah_attr.grh.sgid_index = me->gid_index;
		a.ah_attr.grh.hop_limit = 255;
	}
	enter(p->st, "ibv_modify_qp");
	errno = 0;
	if (p->ibv->modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER))
		return fail(x, "ibv_modify_qp(RTR)", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = QP_TIMEOUT;
	a.retry_cnt = QP_RETRY;
	a.rnr_retry = QP_RETRY;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 1;
	errno = 0;
	if (p->ibv->modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail(x, "ibv_modify_qp(RTS)", errno);
	x->connected = true;
	return 0;
}

/* --- the transfers -------------------------------------------------------- */

static int post(struct unit *u, enum ibv_wr_opcode op, uint64_t local,
		uint64_t remote, uint32_t rkey, size_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = local, .length = (uint32_t)len, .lkey = u->mr->lkey,
	};
	struct ibv_send_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(u->qp, &wr, &bad);
}

/* Up to @max completions, at least one, bounded: the count or -1. */
static int reap(struct prun *p, struct unit *u, struct peer_xfer *x,
		const char *what, int max)
{
	const struct timespec pause = { 0, 20000 };
	double until = now_ms() + POLL_MS;
	struct ibv_wc wc[BW_INFLIGHT];
	int n;

	enter(p->st, "ibv_poll_cq");
	for (;;) {
		n = ibv_poll_cq(u->cq, max < BW_INFLIGHT ? max : BW_INFLIGHT,
				wc);
		if (n < 0)
			return fail(x, "ibv_poll_cq", -n);
		if (n > 0)
			break;
		if (now_ms() > until) {
			x->timeout = true;
			return fail(x, what, ETIMEDOUT);
		}
		nanosleep(&pause, NULL);
	}
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			x->wc_status = (int)wc[i].status;
			return fail(x, what, EIO);
		}
	return n;
}

static int one_op(struct prun *p, struct unit *u, struct peer_xfer *x,
		  enum ibv_wr_opcode op, uint64_t local, uint64_t remote,
		  size_t len, const char *what)
{
	int ret;

	enter(p->st, "ibv_post_send");
	ret = post(u, op, local, remote, x->remote.rkey, len, 1);
	if (ret)
		return fail(x, "ibv_post_send", ret);
	return reap(p, u, x, what, 1) < 0 ? -1 : 0;
}

/* WRITEs of the whole region for at most plan->bw_ms. */
static int bandwidth(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	size_t n = p->plan->bytes;
	double t0 = now_ms(), t1;
	int inflight = 0, done = 0, posted = 0, ret;

	while (inflight || (now_ms() - t0 < p->plan->bw_ms && posted < 4096)) {
		while (inflight < BW_INFLIGHT && posted < 4096 &&
		       now_ms() - t0 < p->plan->bw_ms) {
			ret = post(u, IBV_WR_RDMA_WRITE, u->ptr + n,
				   x->remote.addr, x->remote.rkey, n, 2);
			if (ret)
				return fail(x, "ibv_post_send", ret);
			inflight++;
			posted++;
		}
		ret = reap(p, u, x, "WRITE (bandwidth)", inflight);
		if (ret < 0)
			return -1;
		inflight -= ret;
		done += ret;
	}
	t1 = now_ms();
	x->bytes = (unsigned long long)done * n;
	x->gbps = t1 > t0 ? x->bytes * 8.0 / ((t1 - t0) * 1e6) : 0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int latency(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	double t[LAT_ROUNDS];

	for (int i = 0; i < LAT_ROUNDS; i++) {
		double t0 = now_ms();

		if (one_op(p, u, x, IBV_WR_RDMA_WRITE, u->ptr + p->plan->bytes,
			   x->remote.addr, 8, "WRITE (latency)"))
			return -1;
		t[i] = (now_ms() - t0) * 1e3;
	}
	qsort(t, LAT_ROUNDS, sizeof(t[0]), cmp_double);
	x->lat_us = t[LAT_ROUNDS / 2];
	return 0;
}

/* Our source region to the peer's target, its source back into ours. */
static int act(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	size_t n = p->plan->bytes;

	/* In the second phase our target holds the peer's pattern already
	 * (its WRITE): poisoned first, a READ that never lands shows. */
	memset(u->host, POISON, n);
	if (gpu_copy(p, x, true, u->ptr, u->host))
		return -1;
	if (one_op(p, u, x, IBV_WR_RDMA_WRITE, u->ptr + n, x->remote.addr, n,
		   "RDMA WRITE"))
		return -1;
	x->write_ok = true;
	if (one_op(p, u, x, IBV_WR_RDMA_READ, u->ptr, x->remote.addr + n, n,
		   "RDMA READ"))
		return -1;
	x->read_ok = true;
	if (gpu_copy(p, x, false, u->ptr, u->host))
		return -1;
	fill(u->want, n, x->remote.pattern);
	x->fault = judge(u->host, u->want, n);
	if (x->fault != DPF_NONE)
		return fail(x, "READ check", EIO);
	x->read_verified = true;
	if (bandwidth(p, u, x) || latency(p, u, x))
		return -1;
	/* Our target takes the peer's WRITE next: poison it again. */
	memset(u->host, POISON, n);
	return gpu_copy(p, x, true, u->ptr, u->host);
}

static int phase_actor(struct prun *p, struct unit *u, struct peer_xfer *x,
		       uint32_t rail)
{
	struct peer_result me = { .rail = rail }, them;
	int ret = act(p, u, x);

	me.status = ret ? (x->wc_status > 0 ? x->wc_status : -x->err) : 0;
	me.bytes = x->bytes;
	me.nsec = x->gbps > 0 ? (uint64_t)(x->bytes * 8.0 / x->gbps) : 0;
	if (ret)
		snprintf(me.detail, sizeof(me.detail), "%s failed: %s",
			 x->step, x->fault ? fault_words(x->fault) :
			 x->wc_status > 0 ?
			 wc_status_meaning(x->wc_status) :
			 strerror(x->err));
	if (send_result(p, &me) || recv_result(p, x, &them))
		return -1;
	/* What the peer found in its target after all our WRITEs. */
	x->write_verified = them.status == 0;
	if (them.status && !x->peer_error[0])
		snprintf(x->peer_error, sizeof(x->peer_error), "%s",
			 them.detail);
	return ret || them.status ? -1 : 0;
}

static int phase_passive(struct prun *p, struct unit *u, struct peer_xfer *x,
			 uint32_t rail)
{
	struct peer_result me = { .rail = rail }, them;
	size_t n = p->plan->bytes;
	int fault;

	if (recv_result(p, x, &them))
		return -1;
	x->peer_read_verified = them.status == 0;
	x->peer_status = them.status;
	x->peer_gbps = them.nsec ? them.bytes * 8.0 / them.nsec : 0;
	if (them.status && !x->peer_error[0])
		snprintf(x->peer_error, sizeof(x->peer_error), "%s",
			 them.detail);
	/* Checked whatever the actor said: a WRITE may land and report
	 * an error, or report none and not land. */
	if (gpu_copy(p, x, false, u->ptr, u->host)) {
		me.status = -EIO;
		snprintf(me.detail, sizeof(me.detail), "cuMemcpyDtoH of the "
			 "target failed: %s", x->cu.name);
	} else {
		fill(u->want, n, x->remote.pattern);
		fault = judge(u->host, u->want, n);
		x->peer_write_verified = fault == DPF_NONE;
		me.status = fault;
		if (fault) {
			x->fault = fault;
			snprintf(me.detail, sizeof(me.detail), "the WRITE into "
				 "%s's GPU memory: %s", x->local.nic,
				 fault_words(fault));
		}
	}
	if (send_result(p, &me))
		return -1;
	return them.status || me.status ? -1 : 0;
}

/* Source loaded with our pattern, target poisoned. */
static int load(struct prun *p, struct unit *u, struct peer_xfer *x)
{
	size_t n = p->plan->bytes;

	fill(u->host, n, x->local.pattern);
	if (gpu_copy(p, x, true, u->ptr + n, u->host))
		return -1;
	memset(u->host, POISON, n);
	return gpu_copy(p, x, true, u->ptr, u->host);
}

static void run_unit(struct prun *p, int i, unsigned int mech,
		     struct peer_xfer *x)
{
	const struct peer_plan_rail *pr = &p->plan->rails[i];
	uint32_t rail = pr->remote.rail;
	struct unit u = { .pr = pr, .mech = mech };
	struct peer_buf b = { .len = 0 };
	int ret;

	x->tried = true;
	x->wc_status = -1;
	if (unit_setup(p, &u, x)) {
		/* The peer sends its endpoint (or its own error): take it. */
		if (!send_error(p, x))
			(void)chan_recv(p, PEER_ENDPOINT, x);
		goto out;
	}
	local_endpoint(p, &u, rail, &x->local);
	peer_endpoint_encode(&x->local, &b);
	if (chan_send(p, PEER_ENDPOINT, &b) ||
	    chan_recv(p, PEER_ENDPOINT, x))
		goto out;
	if (peer_endpoint_decode(p->payload, p->len, &x->remote) ||
	    x->remote.rail != rail || x->remote.mech != mech) {
		snprintf(p->conn.err, sizeof(p->conn.err), "the peer's "
			 "ENDPOINT does not match rail %u / mechanism %u",
			 rail, mech);
		channel_broke(p, -EPROTO);
		goto out;
	}
	x->have_remote = true;
	ret = qp_connect(p, &u, x);
	if (step_both(p, x, rail, ret, "connected"))
		goto out;
	ret = load(p, &u, x);
	if (step_both(p, x, rail, ret, "loaded"))
		goto out;
	for (int phase = 0; phase < 2; phase++) {
		bool actor = (phase == 0) == p->plan->active;

		ret = actor ? phase_actor(p, &u, x, rail) :
			      phase_passive(p, &u, x, rail);
		if (ret)
			goto out;
	}
	x->ok = x->write_verified && x->read_verified &&
		x->peer_write_verified && x->peer_read_verified;
out:
	unit_release(p, &u);
}

void peer_stage(const struct vendor_options *opt, struct vendor_facts *vf,
		struct stage_status *st)
{
	static const unsigned int mechs[PEER_NMECH] = {
		PEER_MECH_DMABUF, PEER_MECH_PEERMEM,
	};
	struct prun *p = calloc(1, sizeof(*p));

	vf->peer.ran = true;
	if (!p)
		return;
	p->opt = opt;
	p->plan = opt->peer_plan;
	p->st = st;
	p->pf = &vf->peer;
	p->conn = *p->plan->conn;
	p->conn.err[0] = '\0';
	p->pf->nrails = p->plan->nrails;
	p->ibv = verbs_api(opt, vf, st);
	p->cu = cuda_api(opt, vf, st);
	if (p->ibv) {
		enter(st, "ibv_get_device_list");
		p->list = p->ibv->get_device_list(&p->ndev);
	}
	for (int i = 0; i < p->plan->nrails && !p->broken; i++)
		for (int m = 0; m < PEER_NMECH && !p->broken; m++) {
			struct peer_xfer *x = &p->pf->rails[i].mech[m];

			if (!(p->plan->rails[i].mechs & mechs[m]))
				continue;
			if (!p->ibv || !p->cu) {
				/* Still in step with the peer: say why. */
				x->tried = true;
				x->wc_status = -1;
				fail(x, p->ibv ? "cuInit" : "libibverbs",
				     ENOSYS);
				if (!send_error(p, x))
					(void)chan_recv(p, PEER_ENDPOINT, x);
				continue;
			}
			run_unit(p, i, mechs[m], x);
		}
	if (p->list) {
		enter(st, "ibv_free_device_list");
		p->ibv->free_device_list(p->list);
	}
	if (p->cu) {
		snprintf(st->call, sizeof(st->call), "CUDA context release");
		cuda_release_all();
	}
	free(p);
}
