// SPDX-License-Identifier: MIT
/*
 * rc_pair: one RC QP on each of two RDMA devices of this host, connected
 * to each other, and RDMA WRITEs and READs between them, every verbs call
 * and completion reported with its errno / status and how long it took.
 * The peer cases' verbs-level probe (tests/vm/cases/40-peer-wire.sh): it
 * shows what a fault on the wire between two soft-RoCE ends (MTU, GID
 * family, a firewall, a peer that goes away) does to the calls gdrcheck's
 * peer mode makes, with the timeout and retry count the caller chooses.
 * Built by build-initramfs.sh into the guest as /usr/bin/rc_pair; not part
 * of gdrcheck.
 *
 *   rc_pair -a rxe0:1 -b rxe1:1 [-m MTU_A[:MTU_B]] [-t TIMEOUT] [-r RETRY]
 *           [-s BYTES] [-n ITERS] [-k ITER] [-w SECS]
 *
 * -a/-b DEV:GID_INDEX  the two ends (port 1);
 * -m    path MTU of A's and B's QP (default: each port's active_mtu);
 * -t    local ACK timeout exponent (4.096 us * 2^t, default 14: 67 ms);
 * -r    retry count (default 7); -s bytes per transfer (default 65536);
 * -n    iterations (default 4) of: A WRITEs B, A READs B back, B WRITEs A;
 * -k    destroy B's QP before iteration ITER (the peer goes away);
 * -w    seconds to wait for one completion (default 30).
 *
 * One line per step on stdout; the last line starts with "result:".
 * Exit: 0 all transfers verified, 1 a verbs call failed, 2 an error
 * completion, 3 no completion within -w, 4 data not as written, 5 usage
 * or setup.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct end {
	const char *name;
	char dev[64];
	int gidx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	union ibv_gid gid;
	enum ibv_mtu active_mtu, mtu;
	uint32_t psn;
};

static size_t bytes = 65536;
static int timeout_exp = 14, retry = 7, iters = 4, kill_at = -1, wait_s = 30;
static struct timespec t_start;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t_start.tv_sec) * 1e3 +
	       (t.tv_nsec - t_start.tv_nsec) / 1e6;
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

static enum ibv_mtu mtu_enum(int b)
{
	switch (b) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

static void gid_str(const union ibv_gid *g, char *s, size_t n)
{
	snprintf(s, n, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g->raw[0], g->raw[1], g->raw[2], g->raw[3], g->raw[4], g->raw[5],
		 g->raw[6], g->raw[7], g->raw[8], g->raw[9], g->raw[10], g->raw[11],
		 g->raw[12], g->raw[13], g->raw[14], g->raw[15]);
}

static int parse_end(struct end *e, const char *arg)
{
	const char *c = strrchr(arg, ':');

	if (!c || c == arg || (size_t)(c - arg) >= sizeof(e->dev))
		return -1;
	memcpy(e->dev, arg, (size_t)(c - arg));
	e->dev[c - arg] = 0;
	e->gidx = atoi(c + 1);
	return 0;
}

static int setup(struct end *e)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qia;
	char g[64];

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), e->dev))
			e->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!e->ctx) {
		printf("%s: cannot open %s\n", e->name, e->dev);
		return -1;
	}
	if (ibv_query_port(e->ctx, 1, &pa) || ibv_query_gid(e->ctx, 1, e->gidx, &e->gid)) {
		printf("%s: query port/gid: %s\n", e->name, strerror(errno));
		return -1;
	}
	e->active_mtu = pa.active_mtu;
	if (!e->mtu)
		e->mtu = pa.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 16, NULL, NULL, 0) : NULL;
	e->buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	e->mr = e->cq && e->buf ? ibv_reg_mr(e->pd, e->buf, bytes,
					     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ) : NULL;
	memset(&qia, 0, sizeof(qia));
	qia.send_cq = qia.recv_cq = e->cq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = qia.cap.max_recv_wr = 4;
	qia.cap.max_send_sge = qia.cap.max_recv_sge = 1;
	e->qp = e->mr ? ibv_create_qp(e->pd, &qia) : NULL;
	if (!e->qp) {
		printf("%s: pd/cq/mr/qp setup failed: %s\n", e->name, strerror(errno));
		return -1;
	}
	e->psn = (uint32_t)(rand() & 0xffffff);
	gid_str(&e->gid, g, sizeof(g));
	printf("%s: %s port 1 state %d active_mtu %d, gid[%d] %s, qpn %u, path_mtu %d\n",
	       e->name, e->dev, pa.state, mtu_bytes(pa.active_mtu), e->gidx, g,
	       e->qp->qp_num, mtu_bytes(e->mtu));
	return 0;
}

/* INIT, RTR (toward o), RTS; 0 or the errno of the failing ibv_modify_qp. */
static int connect_qp(struct end *e, const struct end *o)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if ((err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))) {
		printf("%s: ibv_modify_qp INIT failed: errno %d (%s)\n", e->name, err, strerror(err));
		return err;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->mtu;
	a.dest_qp_num = o->qp->qp_num;
	a.rq_psn = o->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = o->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)e->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	double t0 = now_ms();
	if ((err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))) {
		printf("%s: ibv_modify_qp RTR failed after %.1f ms: errno %d (%s)\n",
		       e->name, now_ms() - t0, err, strerror(err));
		return err;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)timeout_exp;
	a.retry_cnt = (uint8_t)retry;
	a.rnr_retry = 7;
	a.sq_psn = e->psn;
	a.max_rd_atomic = 1;
	if ((err = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))) {
		printf("%s: ibv_modify_qp RTS failed: errno %d (%s)\n", e->name, err, strerror(err));
		return err;
	}
	printf("%s: QP INIT/RTR/RTS ok (RTR %.1f ms)\n", e->name, now_ms() - t0);
	return 0;
}

/* One RDMA op from e into o's buffer; returns the exit code class. */
static int xfer(struct end *e, struct end *o, enum ibv_wr_opcode op, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = (uint32_t)bytes, .lkey = e->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int n, err;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)o->buf;
	wr.wr.rdma.rkey = o->mr->rkey;
	double t0 = now_ms();
	if ((err = ibv_post_send(e->qp, &wr, &bad))) {
		printf("%s: ibv_post_send failed: errno %d (%s)\n", what, err, strerror(err));
		printf("result: post_send errno %d (%s)\n", err, strerror(err));
		return 1;
	}
	while ((n = ibv_poll_cq(e->cq, 1, &wc)) == 0) {
		if (now_ms() - t0 > wait_s * 1e3) {
			printf("%s: no completion after %d s\n", what, wait_s);
			printf("result: no completion after %d s\n", wait_s);
			return 3;
		}
		usleep(100);
	}
	if (n < 0) {
		printf("result: ibv_poll_cq failed\n");
		return 1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		printf("%s: completion status %d (%s) vendor_err 0x%x after %.1f ms\n", what,
		       wc.status, ibv_wc_status_str(wc.status), wc.vendor_err, now_ms() - t0);
		printf("result: wc status %d (%s) on %s after %.1f ms\n", wc.status,
		       ibv_wc_status_str(wc.status), what, now_ms() - t0);
		return 2;
	}
	printf("%s: ok, %zu bytes in %.1f ms\n", what, bytes, now_ms() - t0);
	return 0;
}

static void fill(unsigned char *b, unsigned seed)
{
	for (size_t i = 0; i < bytes; i++)
		b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

int main(int argc, char **argv)
{
	struct end a = { .name = "A" }, b = { .name = "B" };
	char what[64];
	int c, rc;

	clock_gettime(CLOCK_MONOTONIC, &t_start);
	srand((unsigned)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "a:b:m:t:r:s:n:k:w:")) != -1) {
		switch (c) {
		case 'a': if (parse_end(&a, optarg)) return 5; break;
		case 'b': if (parse_end(&b, optarg)) return 5; break;
		case 'm': {
			char *col = strchr(optarg, ':');
			a.mtu = mtu_enum(atoi(optarg));
			b.mtu = col ? mtu_enum(atoi(col + 1)) : a.mtu;
			break;
		}
		case 't': timeout_exp = atoi(optarg); break;
		case 'r': retry = atoi(optarg); break;
		case 's': bytes = (size_t)strtoul(optarg, NULL, 0); break;
		case 'n': iters = atoi(optarg); break;
		case 'k': kill_at = atoi(optarg); break;
		case 'w': wait_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: rc_pair -a DEV:GIDX -b DEV:GIDX [-m MTU[:MTU]] [-t T] [-r R] [-s BYTES] [-n N] [-k ITER] [-w SECS]\n");
			return 5;
		}
	}
	if (!a.dev[0] || !b.dev[0] || !bytes) {
		fprintf(stderr, "rc_pair: -a and -b are required\n");
		return 5;
	}
	printf("timeout %d (%.1f ms), retry_cnt %d, %zu bytes x %d\n", timeout_exp,
	       4.096e-3 * (double)(1UL << timeout_exp), retry, bytes, iters);
	if (setup(&a) || setup(&b)) {
		printf("result: setup failed\n");
		return 5;
	}
	if ((rc = connect_qp(&a, &b)) || (rc = connect_qp(&b, &a))) {
		printf("result: ibv_modify_qp errno %d (%s)\n", rc, strerror(rc));
		return 1;
	}
	for (int i = 0; i < iters; i++) {
		if (i == kill_at) {
			rc = ibv_destroy_qp(b.qp);
			printf("B: QP destroyed before iteration %d (%s)\n", i, rc ? strerror(rc) : "ok");
			b.qp = NULL;
		}
		fill(a.buf, 2 * i + 1);
		snprintf(what, sizeof(what), "iter %d A WRITE -> B", i);
		if ((rc = xfer(&a, &b, IBV_WR_RDMA_WRITE, what)))
			return rc;
		memset(a.buf, 0, bytes);
		snprintf(what, sizeof(what), "iter %d A READ <- B", i);
		if ((rc = xfer(&a, &b, IBV_WR_RDMA_READ, what)))
			return rc;
		unsigned char *want = malloc(bytes);
		fill(want, 2 * i + 1);
		if (memcmp(want, a.buf, bytes) || memcmp(want, b.buf, bytes)) {
			printf("result: iteration %d: data read back differs from what was written\n", i);
			return 4;
		}
		free(want);
		if (!b.qp)
			continue;
		fill(b.buf, 2 * i + 2);
		snprintf(what, sizeof(what), "iter %d B WRITE -> A", i);
		if ((rc = xfer(&b, &a, IBV_WR_RDMA_WRITE, what)))
			return rc;
		if (memcmp(a.buf, b.buf, bytes)) {
			printf("result: iteration %d: B's write not in A's buffer\n", i);
			return 4;
		}
	}
	printf("result: ok, %d iterations verified\n", iters);
	return 0;
}
