// SPDX-License-Identifier: MIT
/*
 * Layers 6 and 7 in the worker: real registrations of GPU memory and a
 * verified loopback transfer. Every allocation, MR, QP, CQ, PD, context and
 * fd taken here is released on every path (single cleanup exits).
 */
#include "access/reg.h"

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "access/cuda.h"
#include "access/ibsysfs.h"
#include "access/symtab.h"
#include "access/sysroot.h"
#include "access/verbs.h"

#define PAGE		4096ull
/* A completion that has not come in 2 s is not coming (an eighth of the
 * stage deadline when --timeout is short). */
#define POLL_DEADLINE_MS 2000.0
#define BW_MAX_ITERS	64
#define BW_BATCH	8

/* NCCL registers GPU buffers with these rights. */
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)

struct gpu_buf {
	int ordinal;
	CUcontext ctx;
	CUdeviceptr ptr;
	bool allocated;
};

struct nic_res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *host_mr;
	uint8_t *host;		/* 2 x bytes: source, then READ target */
	int verbs_index;
};

struct reg_run {
	const struct cuda_table *cu;
	const struct verbs_table *ibv;
	const struct vendor_options *opt;
	struct reg_facts *rf;
	struct stage_status *st;
	size_t bytes;
};

static void enter(struct stage_status *st, const char *call)
{
	snprintf(st->call, sizeof(st->call), "%s", call);
}

/* A pattern that differs per byte and per buffer, never all equal. */
static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131u + seed * 17u + (i >> 9)) & 0xff);
}

static bool check_pattern(const uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)((i * 131u + seed * 17u + (i >> 9)) & 0xff))
			return false;
	return true;
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
		enter(rr->st, fd >= 0 ? "ibv_reg_dmabuf_mr" :
		      rr->ibv->reg_mr_iova2 ? "ibv_reg_mr_iova2" : "ibv_reg_mr");
		snprintf(m->call, sizeof(m->call), "%s", rr->st->call);
		errno = 0;
		t0 = now_ms();
		if (fd >= 0)
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

/*
 * RDMA WRITE host -> GPU MR, check GPU memory with cuMemcpyDtoH, RDMA READ
 * GPU MR -> host, check; then a bounded WRITE bandwidth run.
 */
static void datapath(const struct reg_run *rr, struct nic_res *nr,
		     const struct reg_pair *pp, const struct gpu_buf *gb,
		     const struct ibv_mr *gmr, unsigned int seed,
		     struct dp_result *d)
{
	struct loopback lb = { 0 };
	uint8_t *src = nr->host, *dst = nr->host + rr->bytes, *check = NULL;
	uint64_t remote = (uint64_t)gb->ptr;
	double t0;
	int iters, done = 0, ret;

	d->tried = true;
	d->wc_status = -1;
	d->bytes = rr->bytes;
	if (loopback_create(rr, nr, pp, &lb, d))
		goto out;

	fill_pattern(src, rr->bytes, seed);
	memset(dst, 0, rr->bytes);
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(&lb, IBV_WR_RDMA_WRITE, src, nr->host_mr->lkey, remote,
			gmr->rkey, rr->bytes, true, 1);
	if (ret) {
		fail_step(d, "ibv_post_send(WRITE)", ret);
		goto out;
	}
	if (wait_one(rr, &lb, d, "RDMA WRITE"))
		goto out;
	d->write_ok = true;
	if (rr->cu->memcpy_dtoh) {
		check = malloc(rr->bytes);
		if (!check) {
			fail_step(d, "malloc", ENOMEM);
			goto out;
		}
		enter(rr->st, "cuMemcpyDtoH_v2");
		t0 = now_ms();
		ret = rr->cu->memcpy_dtoh(check, gb->ptr, rr->bytes);
		if (ret != CUDA_SUCCESS) {
			/* The check itself failed: that is no data mismatch. */
			cuda_call_record(&d->dtoh, ret, t0);
			snprintf(d->step, sizeof(d->step), "cuMemcpyDtoH_v2");
			goto out;
		}
		d->verified_gpu = check_pattern(check, rr->bytes, seed);
	}
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(&lb, IBV_WR_RDMA_READ, dst, nr->host_mr->lkey, remote,
			gmr->rkey, rr->bytes, true, 2);
	if (ret) {
		fail_step(d, "ibv_post_send(READ)", ret);
		goto out;
	}
	if (wait_one(rr, &lb, d, "RDMA READ"))
		goto out;
	d->read_ok = true;
	d->verified_read = check_pattern(dst, rr->bytes, seed);

	/* Bandwidth: batches of WRITEs, the last of each batch signaled. */
	iters = (int)((64ull << 20) / rr->bytes);
	iters = iters < BW_BATCH ? BW_BATCH : iters > BW_MAX_ITERS ? BW_MAX_ITERS :
		iters / BW_BATCH * BW_BATCH;
	t0 = now_ms();
	while (done < iters) {
		for (int i = 0; i < BW_BATCH; i++) {
			enter(rr->st, "ibv_post_send");
			ret = post_rdma(&lb, IBV_WR_RDMA_WRITE, src,
					nr->host_mr->lkey, remote, gmr->rkey,
					rr->bytes, i == BW_BATCH - 1,
					(uint64_t)(done + i));
			if (ret) {
				fail_step(d, "ibv_post_send(bandwidth)", ret);
				goto out;
			}
		}
		if (wait_one(rr, &lb, d, "RDMA WRITE (bandwidth)"))
			goto out;
		done += BW_BATCH;
	}
	d->iters = done;
	d->gbps = (double)rr->bytes * done * 8 / ((now_ms() - t0) * 1e6);
	d->ok = d->verified_read && (d->verified_gpu || !rr->cu->memcpy_dtoh);
	if (!d->ok)
		snprintf(d->step, sizeof(d->step), "data check");
out:
	free(check);
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
	uint8_t *pattern;
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
		if (!rr->rf->alloc_fail.called) {
			cuda_call_record(&rr->rf->alloc_fail, rc, t0);
			snprintf(rr->rf->alloc_fn, sizeof(rr->rf->alloc_fn), "%s",
				 rr->st->call);
		}
		return -1;
	}
	gb->allocated = true;
	/* Zero the buffer so a check cannot pass on stale data. */
	if (rr->cu->memcpy_htod) {
		pattern = calloc(1, rr->bytes);
		if (pattern) {
			enter(rr->st, "cuMemcpyHtoD_v2");
			rr->cu->memcpy_htod(gb->ptr, pattern, rr->bytes);
			free(pattern);
		}
	}
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
	free(nr->host);
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
	if (posix_memalign((void **)&nr->host, PAGE, 2 * rr->bytes)) {
		nr->host = NULL;
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

		if (ib_port_state(pp->nic, port) != IBV_PORT_ACTIVE)
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
		ib_scan_gids(pp->nic, port, &gs);
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

/* DMA-BUF: export the page-aligned range holding the buffer, register it. */
static struct ibv_mr *reg_dmabuf(const struct reg_run *rr, struct nic_res *nr,
				 const struct gpu_buf *gb, struct reg_pair *pp)
{
	CUdeviceptr base = gb->ptr & ~(CUdeviceptr)(PAGE - 1);
	size_t span = (size_t)((gb->ptr + rr->bytes - base + PAGE - 1) &
			       ~(PAGE - 1));
	struct ibv_mr *mr;
	double t0;
	int fd = -1, rc;

	if (!rr->cu->mem_get_handle_for_address_range || !rr->ibv->reg_dmabuf_mr)
		return NULL;
	enter(rr->st, "cuMemGetHandleForAddressRange");
	t0 = now_ms();
	rc = rr->cu->mem_get_handle_for_address_range(&fd, base, span,
			CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	cuda_call_record(&pp->export_call, rc, t0);
	if (rc != CUDA_SUCCESS || fd < 0)
		return NULL;
	mr = reg_timed(rr, nr->pd, (void *)(uintptr_t)gb->ptr, rr->bytes, fd,
		       (uint64_t)(gb->ptr - base), &pp->dmabuf);
	/* The MR holds its own reference: the fd can go now. */
	close(fd);
	return mr;
}

/* GPU A's MR -> GPU B's MR through the NIC, checked on B with DtoH. */
static void gpu_to_gpu(const struct reg_run *rr, struct nic_res *nr,
		       const struct reg_pair *pp, struct gpu_buf *a,
		       struct ibv_mr *amr, struct gpu_buf *b,
		       struct ibv_mr *bmr, struct reg_nic *rn)
{
	struct dp_result d = { 0 };
	struct loopback lb = { 0 };
	uint8_t *buf = malloc(rr->bytes);
	int ret;

	rn->g2g_tried = true;
	rn->g2g_src = a->ordinal;
	rn->g2g_dst = b->ordinal;
	if (!buf || !rr->cu->memcpy_htod || !rr->cu->memcpy_dtoh) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error),
			 "cannot stage the pattern (cuMemcpy unavailable)");
		goto out;
	}
	fill_pattern(buf, rr->bytes, 77);
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(a->ctx);
	enter(rr->st, "cuMemcpyHtoD_v2");
	rr->cu->memcpy_htod(a->ptr, buf, rr->bytes);
	d.wc_status = -1;
	if (loopback_create(rr, nr, pp, &lb, &d)) {
		snprintf(rn->g2g_error, sizeof(rn->g2g_error), "%s: %s", d.step,
			 strerror(d.err));
		goto out;
	}
	enter(rr->st, "ibv_post_send");
	ret = post_rdma(&lb, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)a->ptr,
			amr->lkey, (uint64_t)b->ptr, bmr->rkey, rr->bytes, true, 9);
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
	memset(buf, 0, rr->bytes);
	enter(rr->st, "cuCtxSetCurrent");
	rr->cu->ctx_set_current(b->ctx);
	enter(rr->st, "cuMemcpyDtoH_v2");
	rn->g2g_ok = rr->cu->memcpy_dtoh(buf, b->ptr, rr->bytes) == CUDA_SUCCESS &&
		     check_pattern(buf, rr->bytes, 77);
	if (!rn->g2g_ok)
		snprintf(rn->g2g_error, sizeof(rn->g2g_error),
			 "data in the destination GPU does not match");
out:
	loopback_destroy(rr, &lb);
	free(buf);
}

/* --- kernel log window --------------------------------------------------- */

static int kmsg_open(struct reg_facts *rf)
{
	/* Confined to the sysroot like every other /dev lookup. */
	int fd = sysroot_open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		rf->kmsg_errno = -fd;
		return -1;
	}
	/* Only what is logged from now on is ours to report. */
	lseek(fd, 0, SEEK_END);
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

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip ahead */
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

static void run_pairs(struct reg_run *rr, struct gpu_buf *gbufs, int ngpu,
		      struct ibv_device **list, int ndev)
{
	struct reg_facts *rf = rr->rf;

	for (int d = 0; d < ndev && rf->nnics < VF_MAX_NICS; d++) {
		struct reg_nic *rn = &rf->nics[rf->nnics++];
		struct nic_res nr = { 0 };
		struct ibv_mr *keep_mr[2] = { NULL, NULL };
		int keep_gpu[2] = { -1, -1 }, kept = 0, keep_pair = -1;
		const char *name;

		enter(rr->st, "ibv_get_device_name");
		name = rr->ibv->get_device_name(list[d]);
		snprintf(rn->nic, sizeof(rn->nic), "%s", name ? name : "?");
		nic_setup(rr, list[d], &nr, rn);
		for (int g = 0; g < ngpu; g++) {
			struct reg_pair *pp;
			struct ibv_mr *pmr = NULL, *dmr = NULL;

			if (rf->npairs >= REG_MAX_PAIRS) {
				rf->pairs_truncated = true;
				break;
			}
			pp = &rf->pairs[rf->npairs++];
			pp->gpu = gbufs[g].ordinal;
			memcpy(pp->nic, rn->nic, sizeof(pp->nic));
			pp->gid_index = -1;
			pp->dp_peermem.wc_status = -1;
			pp->dp_dmabuf.wc_status = -1;
			if (!gbufs[g].allocated) {
				snprintf(pp->skip, sizeof(pp->skip),
					 "no GPU buffer (%s failed: %s)",
					 rf->alloc_fn, rf->alloc_fail.name);
				continue;
			}
			if (!nr.pd) {
				snprintf(pp->skip, sizeof(pp->skip),
					 "device not usable (%s)",
					 rn->open_err ? "ibv_open_device failed" :
					 "ibv_alloc_pd failed");
				continue;
			}
			choose_port(rr, &nr, pp);
			enter(rr->st, "cuCtxSetCurrent");
			rr->cu->ctx_set_current(gbufs[g].ctx);
			pmr = reg_timed(rr, nr.pd, (void *)(uintptr_t)gbufs[g].ptr,
					rr->bytes, -1, 0, &pp->peermem);
			dmr = reg_dmabuf(rr, &nr, &gbufs[g], pp);
			if (pp->port && nr.host_mr && !rr->opt->no_datapath) {
				if (pmr)
					datapath(rr, &nr, pp, &gbufs[g], pmr,
						 (unsigned int)(2 * g + 1),
						 &pp->dp_peermem);
				if (dmr)
					datapath(rr, &nr, pp, &gbufs[g], dmr,
						 (unsigned int)(2 * g + 2),
						 &pp->dp_dmabuf);
			}
			/* Keep one MR each of two GPUs for GPU-to-GPU. */
			if (kept < 2 && (dmr || pmr) && pp->port) {
				keep_mr[kept] = dmr ? dmr : pmr;
				keep_gpu[kept++] = g;
				keep_pair = rf->npairs - 1;
				if (dmr && pmr)
					dereg(rr, pmr);
				continue;
			}
			dereg(rr, pmr);
			dereg(rr, dmr);
		}
		if (kept == 2 && nr.host_mr && !rr->opt->no_datapath) {
			const struct reg_pair *pp = &rf->pairs[keep_pair];

			gpu_to_gpu(rr, &nr, pp, &gbufs[keep_gpu[0]], keep_mr[0],
				   &gbufs[keep_gpu[1]], keep_mr[1], rn);
		}
		for (int k = 0; k < kept; k++)
			dereg(rr, keep_mr[k]);
		nic_release(rr, &nr);
	}
}

void reg_stage(const struct vendor_options *opt, struct vendor_facts *vf,
	       struct stage_status *st)
{
	struct reg_run rr = {
		.opt = opt, .rf = &vf->reg, .st = st,
		.bytes = opt->reg_bytes ? opt->reg_bytes : REG_DEFAULT_BYTES,
	};
	struct gpu_buf *gbufs = NULL;
	struct ibv_device **list = NULL;
	int ngpu = 0, ndev = 0, kfd;

	rr.ibv = verbs_api(opt, vf, st);
	if (!rr.ibv)
		return;
	/* Without CUDA the host-memory control still runs; GPUs do not. */
	rr.cu = cuda_api(opt, vf, st);
	rr.rf->ran = true;
	rr.rf->cuda = rr.cu != NULL;
	rr.rf->bytes = rr.bytes;
	kfd = kmsg_open(rr.rf);

	ngpu = rr.cu ? vf->cuda.gpus_recorded : 0;
	gbufs = calloc(ngpu ? (size_t)ngpu : 1, sizeof(*gbufs));
	if (!gbufs)
		goto out;
	for (int g = 0; g < ngpu; g++) {
		if (gpu_setup(&rr, &gbufs[g], vf->cuda.gpus[g].ordinal) == 0)
			rr.rf->gpus_allocated++;
		enter(st, "cuCtxSetCurrent");
		rr.cu->ctx_set_current(NULL);
	}
	enter(st, "ibv_get_device_list");
	list = rr.ibv->get_device_list(&ndev);
	if (list)
		run_pairs(&rr, gbufs, ngpu, list, ndev);
out:
	if (list) {
		enter(st, "ibv_free_device_list");
		rr.ibv->free_device_list(list);
	}
	for (int g = 0; gbufs && g < ngpu; g++)
		gpu_release(&rr, &gbufs[g]);
	free(gbufs);
	kmsg_collect(rr.rf, kfd);
}
