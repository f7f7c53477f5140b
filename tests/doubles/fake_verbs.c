// SPDX-License-Identifier: MIT
/*
 * Scenario-driven test double of libibverbs.so.1. Objects use the real
 * <infiniband/verbs.h> layouts; no real libibverbs code runs. Exports are
 * versioned like rdma-core's (IBVERBS_1.1, 1.8, 1.11, 1.12) via .symver on
 * fake_* internals, which the version script then makes local.
 *
 * Modelled: device list, open/close, query device/port/gid, PD, host and
 * dma-buf MR registration (including the kernel's EFAULT for inaccessible
 * memory, EINVAL for REMOTE_WRITE without LOCAL_WRITE or for an iova whose
 * page offset differs from the address's / dma-buf offset's, EBUSY for a PD
 * with live MRs), CQ/QP lifetime, the QP state machine with the kernel's
 * required/optional attribute masks (ib_modify_qp_is_ok) and an RC data
 * path for a QP connected to itself (NCCL's flush QP, gdrcheck's loopback).
 *
 * Data path (RC only): post_send takes IBV_WR_RDMA_WRITE and
 * IBV_WR_RDMA_READ with 0..max_send_sge SGEs (IBV_SEND_INLINE for WRITE),
 * runs them at post time with memmove (outside the double's lock, so the QPs
 * of two threads move bytes at once; one post_send per QP at a time) and
 * queues completions in order on the send CQ, each after its bytes landed;
 * poll_cq hands them out. As on hardware: posting outside RTS/ERR
 * is EINVAL, more outstanding WRs than max_send_wr is ENOMEM (a WR's slot is
 * freed when its own or a later CQE of the QP is polled), only
 * IBV_SEND_SIGNALED WRs (or all with sq_sig_all) complete successfully
 * with a CQE while errors always do, the first error moves the QP to ERR and
 * every later WR completes with IBV_WC_WR_FLUSH_ERR. Checks, in order:
 *   port not ACTIVE, dest_qp_num != own qp_num, or an address that does not
 *   lead back to this port (IB: dlid != port lid; GRH: dgid not one of the
 *   port's GIDs)                                      -> IBV_WC_RETRY_EXC_ERR
 *   message > max_msg_sz (1 GiB)                      -> IBV_WC_LOC_LEN_ERR
 *   local SGE: lkey not an MR of the QP's PD, range outside it, READ into an
 *   MR without LOCAL_WRITE                            -> IBV_WC_LOC_PROT_ERR
 *   responder: QP without REMOTE_WRITE (WRITE) or REMOTE_READ (READ), READ
 *   with max_dest_rd_atomic 0 (rxe's behaviour)       -> IBV_WC_REM_INV_REQ_ERR
 *   remote: rkey not an MR of the PD, range outside it, MR without
 *   REMOTE_WRITE / REMOTE_READ                        -> IBV_WC_REM_ACCESS_ERR
 * MR address spaces: ibv_reg_mr: the virtual address; ibv_reg_mr_iova2 and
 * ibv_reg_dmabuf_mr: the iova (lkey- and rkey-relative addresses are both
 * iova-based). The bytes live at addr for host MRs (re-checked with the
 * pipe trick at registration, with mincore before each access: memory
 * unmapped under a live MR gives a protection error, not a crash) and, for dma-buf MRs, in the double's own
 * MAP_SHARED mmap of the fd at @offset made at registration, so the caller
 * may close the fd at once. mr->addr of a dma-buf MR is @offset, as
 * rdma-core sets it. Modify to RESET drops the QP's CQEs and outstanding
 * WRs (as mlx5 cleans the CQ); modify to ERR flushes outstanding WRs.
 * A CQ that overflows loses that CQE and every later one (HW stops
 * writing), with a note on stderr.
 * Not modelled: SEND/receive, atomics, UC/UD traffic (EOPNOTSUPP), SRQs,
 * req_notify_cq/completion channels (EOPNOTSUPP), SQD/SQE states, two
 * distinct QPs talking to each other, transport timing (RETRY_EXC_ERR is
 * immediate), the initiator depth (max_rd_atomic 0 still reads).
 *
 * Scenario (env FAKE_VERBS_SCENARIO), keys [defaults]; I = device index,
 * P = 1-based port number, G = gid index:
 *   device_count [0]          at most 4096 (SR-IOV nodes: PFs + VFs); the
 *                             device table is allocated for the count
 *   list_errno [0]            ibv_get_device_list: NULL with this errno
 *   devI.name ["mlx5_I"]
 *   devI.open_errno [0]       ibv_open_device: NULL with this errno
 *   devI.ports [1]            phys_port_cnt
 *   devI.fw_ver ["28.39.1002"], devI.vendor_id [0x02c9],
 *   devI.vendor_part_id [4129]
 *   devI.portP.state [4]      IBV_PORT_ACTIVE
 *   devI.portP.link_layer [2] 2 Ethernet, 1 InfiniBand (lid = I + 1)
 *   devI.portP.active_mtu [IB 5, Ethernet 3], devI.portP.active_width [2],
 *   devI.portP.active_speed [64], devI.portP.phys_state [5 if ACTIVE, else 3]
 *   devI.portP.gid_tbl_len [16]
 *   devI.portP.gidG           IPv6-style text [gid0: fe80::0e42:a1ff:fe00:IIPP;
 *                             on Ethernet ports gid1: the RoCE v2 GID
 *                             ::ffff:10.I/256.I%256.P; others ::]; "::"
 *                             empties one
 *   devI.reg_mr_errno [0]     ibv_reg_mr / ibv_reg_mr_iova2
 *   devI.dmabuf_errno [9]     ibv_reg_dmabuf_mr with fd < 0; 0 = an MR
 *   devI.dmabuf_reg_errno [0] ibv_reg_dmabuf_mr with a real fd
 *   devI.dmabuf_check_real [0] 1: a fd that is not "/dmabuf:" is EINVAL
 *   devI.wc_status [0]        every RDMA WR on device I completes with this
 *                             ibv_wc_status (4 LOC_PROT_ERR, 10
 *                             REM_ACCESS_ERR, 12 RETRY_EXC_ERR, ...) and
 *                             moves no data; the QP goes to ERR
 *   devI.wc_corrupt [0]       1: WRs complete successfully but every byte
 *                             they deposit is XORed (0xff by a WRITE, 0x55
 *                             by a READ, so a round trip cannot cancel out)
 *   devI.wc_drop [0]          1: WRs vanish: no data, no CQE, and the RC
 *                             send queue stalls behind them (later WRs never
 *                             complete either) until modify to ERR flushes
 *                             them or RESET/destroy discards them
 *   devI.silent_drop [0]      bit 1: RDMA WRITEs, bit 2: RDMA READs pass every
 *                             check and complete with IBV_WC_SUCCESS (byte_len
 *                             as asked) but move no byte: DMA lost without an
 *                             error, which only a data check can see
 *   devI.read_stale [0]       1: RDMA READs return what the remote range held
 *                             when its MR was registered (a stale copy kept
 *                             by the double), not what it holds now
 *   devI.wc_short [0]         N > 0: successful WRs move only their first N
 *                             bytes (a truncated DMA), completion as asked
 *   devI.wc_overrun [0]       N > 0: a successful RDMA WRITE also sets the N
 *                             bytes after its remote range to 0xee (clipped
 *                             to the MR): a DMA that spills over
 * Fault keys (fake_scenario.h): fail/hang/crash/exit.NAME[.I]; I is the
 * device the call is about (via its device, context, PD, MR, CQ or QP).
 * The data path's names are "ibv_post_send" (fail.: that return value, the
 * WR is rejected through *bad_wr, errno untouched as in rdma-core's
 * providers) and "ibv_poll_cq" (fail.ibv_poll_cq = V: returns -V).
 * Ledger rows: devlist, device, pd, mr, cq, qp.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/doubles/fake_scenario.h"

#define SYMVER(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@@" node)

#define FAKE_MAGIC 0x66616b65u	/* catches objects not made by this double */
#define PAGE 4096ul
#define MAX_SGE 30
#define MAX_QP_WR (1 << 15)
#define MAX_CQE ((1 << 22) - 1)
#define MAX_INLINE 512
#define MAX_RD_ATOM 16
#define MAX_MSG (1u << 30)

enum { L_DEVLIST, L_DEVICE, L_PD, L_MR, L_CQ, L_QP };
static const char *const ledger_rows[] = {
	"devlist", "device", "pd", "mr", "cq", "qp"
};

struct fake_dev {
	struct ibv_device dev;
	int idx;
};

struct fake_ctx {
	struct ibv_context ctx;
	unsigned int magic;
	int idx;
};

struct fake_pd {
	struct ibv_pd pd;
	unsigned int magic;
	int idx;
	int users;	/* MRs and QPs: dealloc with users is EBUSY */
};

struct fake_mr {
	struct ibv_mr mr;
	unsigned int magic;
	struct fake_pd *pd;
	int access;
	uint64_t iova;		/* what lkey/rkey-relative addresses refer to */
	char *bytes;		/* host address of iova; NULL: no storage */
	bool user_mem;		/* bytes is the caller's: check before use */
	void *map;		/* dma-buf: our own mapping of the fd */
	size_t map_len;
	char *stale;		/* read_stale: the bytes at registration */
	struct fake_mr *next;
};

/* A completion waiting in a CQ. */
struct fake_cqe {
	struct ibv_wc wc;
	struct fake_qp *qp;
	uint64_t seq;		/* the WR's position in its QP's send queue */
	struct fake_cqe *next;
};

struct fake_cq {
	struct ibv_cq cq;
	unsigned int magic;
	int idx;
	int users;	/* QPs */
	struct fake_cqe *head, *tail;
	int count;
	bool overrun;
};

/* A WR swallowed by wc_drop (or stalled behind one). */
struct fake_pending {
	uint64_t wr_id, seq;
	enum ibv_wc_opcode opcode;
	struct fake_pending *next;
};

struct fake_qp {
	struct ibv_qp qp;
	unsigned int magic;
	int idx;
	struct fake_pd *pd;
	struct fake_cq *scq, *rcq;
	/* caps */
	uint32_t max_send_wr, max_send_sge, max_inline;
	bool sig_all;
	/* attributes, from modify_qp */
	unsigned int port;
	uint16_t pkey_index;
	unsigned int access;
	enum ibv_mtu path_mtu;
	uint32_t dest_qpn;
	struct ibv_ah_attr ah;
	uint8_t max_dest_rd_atomic, max_rd_atomic;
	/* send queue */
	uint64_t posted, retired;	/* outstanding = posted - retired */
	bool stalled;
	struct fake_pending *pend_head, *pend_tail;
	pthread_mutex_t post_lock;	/* one post_send at a time, as the SQ */
};

/* Internal names: .symver gives them their public, versioned ones. */
struct ibv_device **fake_get_device_list(int *num);
void fake_free_device_list(struct ibv_device **list);
const char *fake_get_device_name(struct ibv_device *dev);
struct ibv_context *fake_open_device(struct ibv_device *dev);
int fake_close_device(struct ibv_context *ctx);
int fake_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int fake_query_port(struct ibv_context *ctx, uint8_t port,
		    struct ibv_port_attr *attr);
int fake_query_gid(struct ibv_context *ctx, uint8_t port, int index,
		   union ibv_gid *gid);
int fake_query_gid_ex(struct ibv_context *ctx, uint32_t port,
		      uint32_t index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size);
struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx);
int fake_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			   int access);
struct ibv_mr *fake_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t iova, unsigned int access);
#ifndef FAKE_VERBS_OLD
struct ibv_mr *fake_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t len, uint64_t iova, int fd,
				  int access);
#endif
int fake_dereg_mr(struct ibv_mr *mr);
struct ibv_cq *fake_create_cq(struct ibv_context *ctx, int cqe,
			      void *cq_context,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int fake_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *fake_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *init);
int fake_destroy_qp(struct ibv_qp *qp);
int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);

SYMVER(fake_get_device_list, ibv_get_device_list, "IBVERBS_1.1");
SYMVER(fake_free_device_list, ibv_free_device_list, "IBVERBS_1.1");
SYMVER(fake_get_device_name, ibv_get_device_name, "IBVERBS_1.1");
SYMVER(fake_open_device, ibv_open_device, "IBVERBS_1.1");
SYMVER(fake_close_device, ibv_close_device, "IBVERBS_1.1");
SYMVER(fake_query_device, ibv_query_device, "IBVERBS_1.1");
SYMVER(fake_query_port, ibv_query_port, "IBVERBS_1.1");
SYMVER(fake_query_gid, ibv_query_gid, "IBVERBS_1.1");
SYMVER(fake_alloc_pd, ibv_alloc_pd, "IBVERBS_1.1");
SYMVER(fake_dealloc_pd, ibv_dealloc_pd, "IBVERBS_1.1");
SYMVER(fake_reg_mr, ibv_reg_mr, "IBVERBS_1.1");
SYMVER(fake_dereg_mr, ibv_dereg_mr, "IBVERBS_1.1");
SYMVER(fake_create_cq, ibv_create_cq, "IBVERBS_1.1");
SYMVER(fake_destroy_cq, ibv_destroy_cq, "IBVERBS_1.1");
SYMVER(fake_create_qp, ibv_create_qp, "IBVERBS_1.1");
SYMVER(fake_destroy_qp, ibv_destroy_qp, "IBVERBS_1.1");
SYMVER(fake_modify_qp, ibv_modify_qp, "IBVERBS_1.1");
SYMVER(fake_reg_mr_iova2, ibv_reg_mr_iova2, "IBVERBS_1.8");
SYMVER(fake_query_gid_ex, _ibv_query_gid_ex, "IBVERBS_1.11");
#ifndef FAKE_VERBS_OLD
SYMVER(fake_reg_dmabuf_mr, ibv_reg_dmabuf_mr, "IBVERBS_1.12");
#endif

static int ndev;
static struct fake_dev *devs;
static uint32_t next_key = 0x1000, next_qpn = 0x100;
/* MR table, CQ contents and send queues; one lock, as nothing here is hot. */
static pthread_mutex_t dp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_mr *mrs;

static void __attribute__((noreturn)) bad_scenario(const char *what)
{
	fprintf(stderr, "fake libibverbs: %s\n", what);
	abort();
}

static void __attribute__((constructor)) fake_verbs_init(void)
{
	fake_scenario_load("FAKE_VERBS_SCENARIO");
	fake_ledger_init("verbs", ledger_rows, 6);
	ndev = (int)fake_get_ll("device_count", 0);
	if (ndev < 0 || ndev > 4096)
		bad_scenario("device_count out of range");
	devs = calloc((size_t)ndev + 1, sizeof(*devs));
	if (!devs)
		bad_scenario("out of memory");
	for (int i = 0; i < ndev; i++) {
		struct ibv_device *d = &devs[i].dev;
		const char *name = fake_getf("dev%d.name", i);

		devs[i].idx = i;
		d->node_type = IBV_NODE_CA;
		d->transport_type = IBV_TRANSPORT_IB;
		if (name)
			snprintf(d->name, sizeof(d->name), "%s", name);
		else
			snprintf(d->name, sizeof(d->name), "mlx5_%d", i);
		snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%d", i);
		snprintf(d->dev_path, sizeof(d->dev_path),
			 "/sys/class/infiniband_verbs/uverbs%d", i);
		snprintf(d->ibdev_path, sizeof(d->ibdev_path),
			 "/sys/class/infiniband/%s", d->name);
	}
}

/*
 * Fault entry. Pointer-returning calls: NULL with errno = value;
 * int-returning calls: the value itself, errno style (errno set too).
 */
#define FAULT_PTR(name, idx) do {					\
	long long v_;							\
	if (fake_fault(name, idx, &v_)) {				\
		errno = (int)v_;					\
		return NULL;						\
	}								\
} while (0)

#define FAULT_INT(name, idx) do {					\
	long long v_;							\
	if (fake_fault(name, idx, &v_)) {				\
		errno = (int)v_;					\
		return (int)v_;						\
	}								\
} while (0)

#define FAIL_PTR(e) do { errno = (e); return NULL; } while (0)
#define FAIL_INT(e) do { errno = (e); return (e); } while (0)

static int dev_idx(const struct ibv_device *d)
{
	for (int i = 0; i < ndev; i++)
		if (d == &devs[i].dev)
			return i;
	return -1;
}

/* Our context, or NULL; gives a fault index of -1 for strangers. */
static struct fake_ctx *to_ctx(struct ibv_context *c)
{
	struct fake_ctx *fc = (struct fake_ctx *)c;

	return fc && fc->magic == FAKE_MAGIC ? fc : NULL;
}

static struct fake_pd *to_pd(struct ibv_pd *p)
{
	struct fake_pd *fp = (struct fake_pd *)p;

	return fp && fp->magic == FAKE_MAGIC ? fp : NULL;
}

#define CTX_IDX(c)	(to_ctx(c) ? to_ctx(c)->idx : -1)
#define PD_IDX(p)	(to_pd(p) ? to_pd(p)->idx : -1)

struct ibv_device **fake_get_device_list(int *num)
{
	struct ibv_device **list;
	long long e;

	FAULT_PTR("ibv_get_device_list", -1);
	e = fake_get_ll("list_errno", 0);
	if (e)
		FAIL_PTR((int)e);
	list = calloc((size_t)ndev + 1, sizeof(*list));
	if (!list)
		FAIL_PTR(ENOMEM);
	for (int i = 0; i < ndev; i++)
		list[i] = &devs[i].dev;
	if (num)
		*num = ndev;
	fake_ledger_acquire(L_DEVLIST);
	return list;
}

/* fail.ibv_free_device_list has nothing to return; it is ignored. */
void fake_free_device_list(struct ibv_device **list)
{
	long long v;

	(void)fake_fault("ibv_free_device_list", -1, &v);
	if (!list)
		return;
	free(list);
	fake_ledger_release(L_DEVLIST);
}

const char *fake_get_device_name(struct ibv_device *dev)
{
	int i = dev ? dev_idx(dev) : -1;

	FAULT_PTR("ibv_get_device_name", i);
	if (i < 0)
		FAIL_PTR(EINVAL);
	return dev->name;
}

static int dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad);
static int dp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

/* Receives, SRQs and completion events are not modelled. */
static int no_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	*bad = wr;
	return EOPNOTSUPP;
}

static int no_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad)
{
	*bad = wr;
	return EOPNOTSUPP;
}

static int no_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return EOPNOTSUPP;
}

struct ibv_context *fake_open_device(struct ibv_device *dev)
{
	int i = dev ? dev_idx(dev) : -1;
	struct fake_ctx *fc;
	long long e;

	FAULT_PTR("ibv_open_device", i);
	if (i < 0)
		FAIL_PTR(EINVAL);
	e = fake_getf_ll(0, "dev%d.open_errno", i);
	if (e)
		FAIL_PTR((int)e);
	fc = calloc(1, sizeof(*fc));
	if (!fc)
		FAIL_PTR(ENOMEM);
	fc->magic = FAKE_MAGIC;
	fc->idx = i;
	fc->ctx.device = dev;
	fc->ctx.cmd_fd = -1;
	fc->ctx.async_fd = -1;
	fc->ctx.num_comp_vectors = 1;
	pthread_mutex_init(&fc->ctx.mutex, NULL);
	/* abi_compat stays NULL: not a verbs_context, no extended ops. */
	fc->ctx.ops.post_send = dp_post_send;
	fc->ctx.ops.post_recv = no_post_recv;
	fc->ctx.ops.post_srq_recv = no_post_srq_recv;
	fc->ctx.ops.poll_cq = dp_poll_cq;
	fc->ctx.ops.req_notify_cq = no_req_notify_cq;
	fake_ledger_acquire(L_DEVICE);
	return &fc->ctx;
}

/* Like the kernel, closing with live objects succeeds; the ledger shows it. */
int fake_close_device(struct ibv_context *ctx)
{
	struct fake_ctx *fc = to_ctx(ctx);

	FAULT_INT("ibv_close_device", CTX_IDX(ctx));
	if (!fc)
		FAIL_INT(EINVAL);
	fc->magic = 0;
	pthread_mutex_destroy(&fc->ctx.mutex);
	free(fc);
	fake_ledger_release(L_DEVICE);
	return 0;
}

int fake_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	struct fake_ctx *fc = to_ctx(ctx);
	const char *fw;
	int i;

	FAULT_INT("ibv_query_device", CTX_IDX(ctx));
	if (!fc || !attr)
		FAIL_INT(EINVAL);
	i = fc->idx;
	memset(attr, 0, sizeof(*attr));
	fw = fake_getf("dev%d.fw_ver", i);
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s",
		 fw ? fw : "28.39.1002");
	attr->node_guid = htobe64(0x0c42a10300000000ull | (uint64_t)i);
	attr->sys_image_guid = attr->node_guid;
	attr->max_mr_size = ~0ull;
	attr->page_size_cap = ~(PAGE - 1);
	attr->vendor_id = (uint32_t)fake_getf_ll(0x02c9, "dev%d.vendor_id", i);
	attr->vendor_part_id =
		(uint32_t)fake_getf_ll(4129, "dev%d.vendor_part_id", i);
	attr->max_qp = 1 << 17;
	attr->max_qp_wr = MAX_QP_WR;
	attr->max_sge = MAX_SGE;
	attr->max_qp_rd_atom = MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = MAX_RD_ATOM;
	attr->max_res_rd_atom = MAX_RD_ATOM << 17;
	attr->max_cq = 1 << 24;
	attr->max_cqe = MAX_CQE;
	attr->max_mr = 1 << 24;
	attr->max_pd = 1 << 24;
	attr->phys_port_cnt = (uint8_t)fake_getf_ll(1, "dev%d.ports", i);
	return 0;
}

/*
 * The real libibverbs answers from the kernel, which sysfs shows: with
 * FAKE_SYSROOT (the scenario's tree) a port key the scenario does not set
 * comes from /sys/class/infiniband/<dev>/ports/<N>/ there, so a port the
 * tree shows DOWN is DOWN here too (NCCL's IB plugin, run by
 * tools/nccl-oracle on these doubles, skips it as on a real node).
 */
static bool sysfs_port(int i, unsigned int port, const char *attr, char *buf,
		       size_t len)
{
	const char *root = getenv("FAKE_SYSROOT"), *name;
	char path[512];
	FILE *f;
	bool ok;

	name = fake_getf("dev%d.name", i);
	if (!root || !*root || !name)
		return false;
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%u/%s",
		 root, name, port, attr);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* "4: ACTIVE", "5: LinkUp": the number before the colon. */
static long long sysfs_port_num(int i, unsigned int port, const char *attr,
				long long dflt)
{
	char buf[64], *end;
	long long v;

	if (!sysfs_port(i, port, attr, buf, sizeof(buf)))
		return dflt;
	v = strtoll(buf, &end, 10);
	return end == buf ? dflt : v;
}

/* "400 Gb/sec (4X NDR)" -> IBV width and speed enums. */
static void sysfs_port_rate(int i, unsigned int port, long long *width,
			    long long *speed)
{
	static const char *const speeds[] = { "SDR", "DDR", "QDR", "FDR10",
					      "FDR", "EDR", "HDR", "NDR",
					      "XDR" };
	static const int speed_enum[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
	char buf[64], *paren;
	int lanes;

	if (!sysfs_port(i, port, "rate", buf, sizeof(buf)))
		return;
	paren = strchr(buf, '(');
	if (!paren || sscanf(paren + 1, "%dX", &lanes) != 1)
		return;
	*width = lanes == 1 ? 1 : lanes == 4 ? 2 : lanes == 8 ? 4 :
		 lanes == 12 ? 8 : lanes == 2 ? 16 : *width;
	for (size_t k = sizeof(speeds) / sizeof(speeds[0]); k-- > 0;) {
		const char *hit = strstr(paren, speeds[k]);

		if (hit && hit[strlen(speeds[k])] == ')') {
			*speed = speed_enum[k];
			break;
		}
	}
}

static bool bad_port(struct fake_ctx *fc, unsigned int port)
{
	return port < 1 || port > fake_getf_ll(1, "dev%d.ports", fc->idx);
}

static int link_layer(int i, unsigned int port)
{
	char buf[32];
	long long dflt = IBV_LINK_LAYER_ETHERNET;

	if (sysfs_port(i, port, "link_layer", buf, sizeof(buf)))
		dflt = !strcmp(buf, "InfiniBand") ? IBV_LINK_LAYER_INFINIBAND :
		       IBV_LINK_LAYER_ETHERNET;
	return (int)fake_getf_ll(dflt, "dev%d.port%u.link_layer", i, port);
}

static int gid_tbl_len(int i, unsigned int port)
{
	return (int)fake_getf_ll(16, "dev%d.port%u.gid_tbl_len", i, port);
}

int fake_query_port(struct ibv_context *ctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct fake_ctx *fc = to_ctx(ctx);
	long long width, speed;
	int i, ll;

	FAULT_INT("ibv_query_port", CTX_IDX(ctx));
	if (!fc || !attr || bad_port(fc, port))
		FAIL_INT(EINVAL);
	i = fc->idx;
	ll = link_layer(i, port);
	memset(attr, 0, sizeof(*attr));
	attr->state = (enum ibv_port_state)fake_getf_ll(
		sysfs_port_num(i, port, "state", IBV_PORT_ACTIVE),
		"dev%d.port%u.state", i, port);
	attr->max_mtu = IBV_MTU_4096;
	/* RoCE on a 1500-byte netdev runs 1024-byte IB MTU. */
	attr->active_mtu = (enum ibv_mtu)fake_getf_ll(
		ll == IBV_LINK_LAYER_INFINIBAND ? IBV_MTU_4096 : IBV_MTU_1024,
		"dev%d.port%u.active_mtu", i, port);
	attr->gid_tbl_len = gid_tbl_len(i, port);
	attr->max_msg_sz = MAX_MSG;
	attr->pkey_tbl_len = 128;
	if (ll == IBV_LINK_LAYER_INFINIBAND) {
		attr->lid = (uint16_t)(i + 1);
		attr->sm_lid = 1;
	}
	width = 2;
	speed = 64;
	sysfs_port_rate(i, port, &width, &speed);
	attr->active_width = (uint8_t)fake_getf_ll(width,
						   "dev%d.port%u.active_width",
						   i, port);
	attr->active_speed = (uint8_t)fake_getf_ll(speed,
						   "dev%d.port%u.active_speed",
						   i, port);
	attr->phys_state = (uint8_t)fake_getf_ll(
		sysfs_port_num(i, port, "phys_state",
			       attr->state == IBV_PORT_ACTIVE ? 5 : 3),
		"dev%d.port%u.phys_state", i, port);
	attr->link_layer = (uint8_t)ll;
	return 0;
}

/* devI.portP.gidG as an IPv6-style string; default: a link-local gid 0. */
static void gid_value(int i, unsigned int port, int index, union ibv_gid *gid)
{
	const char *s = fake_getf("dev%d.port%u.gid%d", i, port, index);

	memset(gid, 0, sizeof(*gid));
	if (s) {
		if (inet_pton(AF_INET6, s, gid->raw) != 1)
			bad_scenario("gid is not an IPv6-style address");
		return;
	}
	if (index == 0) {
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		gid->global.interface_id =
			htobe64(0x0c42a1fffe000000ull | (uint64_t)(i << 8) | port);
	} else if (index == 1 && link_layer(i, port) == IBV_LINK_LAYER_ETHERNET) {
		/* RoCE v2 over IPv4: ::ffff:10.I/256.I%256.P (unique per device) */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		gid->raw[12] = 10;
		gid->raw[13] = (uint8_t)(i >> 8);
		gid->raw[14] = (uint8_t)i;
		gid->raw[15] = (uint8_t)port;
	}
}

static bool gid_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid, &zero, sizeof(zero));
}

/* Is @gid one of port's populated GIDs? */
static bool gid_is_ours(int i, unsigned int port, const union ibv_gid *gid)
{
	union ibv_gid g;
	int n = gid_tbl_len(i, port);

	if (gid_zero(gid))
		return false;
	for (int k = 0; k < n; k++) {
		gid_value(i, port, k, &g);
		if (!memcmp(&g, gid, sizeof(g)))
			return true;
	}
	return false;
}

int fake_query_gid(struct ibv_context *ctx, uint8_t port, int index,
		   union ibv_gid *gid)
{
	struct fake_ctx *fc = to_ctx(ctx);

	FAULT_INT("ibv_query_gid", CTX_IDX(ctx));
	if (!fc || !gid || bad_port(fc, port) || index < 0 ||
	    index >= gid_tbl_len(fc->idx, port))
		FAIL_INT(EINVAL);
	/* Unused entries read as zero, as sysfs shows them. */
	gid_value(fc->idx, port, index, gid);
	return 0;
}

int fake_query_gid_ex(struct ibv_context *ctx, uint32_t port,
		      uint32_t index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct fake_ctx *fc = to_ctx(ctx);

	FAULT_INT("_ibv_query_gid_ex", CTX_IDX(ctx));
	if (!fc || !entry || flags || entry_size < sizeof(*entry) ||
	    port > 255 || bad_port(fc, port) ||
	    index >= (uint32_t)gid_tbl_len(fc->idx, port))
		FAIL_INT(EINVAL);
	memset(entry, 0, sizeof(*entry));
	gid_value(fc->idx, port, (int)index, &entry->gid);
	/* rdma-core reports an empty table slot as ENODATA. */
	if (gid_zero(&entry->gid))
		FAIL_INT(ENODATA);
	entry->gid_index = index;
	entry->port_num = port;
	entry->gid_type = link_layer(fc->idx, port) == IBV_LINK_LAYER_INFINIBAND ?
		IBV_GID_TYPE_IB : IBV_GID_TYPE_ROCE_V2;
	return 0;
}

struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx)
{
	struct fake_ctx *fc = to_ctx(ctx);
	struct fake_pd *fp;

	FAULT_PTR("ibv_alloc_pd", CTX_IDX(ctx));
	if (!fc)
		FAIL_PTR(EINVAL);
	fp = calloc(1, sizeof(*fp));
	if (!fp)
		FAIL_PTR(ENOMEM);
	fp->magic = FAKE_MAGIC;
	fp->idx = fc->idx;
	fp->pd.context = ctx;
	fp->pd.handle = next_key++;
	fake_ledger_acquire(L_PD);
	return &fp->pd;
}

int fake_dealloc_pd(struct ibv_pd *pd)
{
	struct fake_pd *fp = to_pd(pd);

	FAULT_INT("ibv_dealloc_pd", PD_IDX(pd));
	if (!fp)
		FAIL_INT(EINVAL);
	/* The kernel refuses while MRs or QPs still use the PD. */
	if (fp->users)
		FAIL_INT(EBUSY);
	fp->magic = 0;
	free(fp);
	fake_ledger_release(L_PD);
	return 0;
}

/* ib_check_mr_access: remote write or atomic needs local write. */
static bool access_ok(int access)
{
	return !(access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
	       (access & IBV_ACCESS_LOCAL_WRITE);
}

/*
 * @bytes: where iova's bytes live (NULL: none). Takes ownership of @map.
 * Caller holds no lock.
 */
static struct ibv_mr *new_mr(struct fake_pd *fp, void *addr, size_t len,
			     int access, uint64_t iova, char *bytes,
			     bool user_mem, void *map, size_t map_len)
{
	struct fake_mr *m = calloc(1, sizeof(*m));

	if (!m) {
		if (map)
			munmap(map, map_len);
		FAIL_PTR(ENOMEM);
	}
	m->magic = FAKE_MAGIC;
	m->pd = fp;
	m->access = access;
	m->iova = iova;
	m->bytes = bytes;
	m->user_mem = user_mem;
	m->map = map;
	m->map_len = map_len;
	/* read_stale: READs will see the range as it is now, forever. */
	if (bytes && fake_getf_ll(0, "dev%d.read_stale", fp->idx)) {
		m->stale = malloc(len);
		if (!m->stale) {
			if (map)
				munmap(map, map_len);
			free(m);
			FAIL_PTR(ENOMEM);
		}
		memcpy(m->stale, bytes, len);
	}
	m->mr.context = fp->pd.context;
	m->mr.pd = &fp->pd;
	m->mr.addr = addr;
	m->mr.length = len;
	pthread_mutex_lock(&dp_lock);
	m->mr.handle = next_key;
	m->mr.lkey = next_key;
	m->mr.rkey = next_key++;
	m->next = mrs;
	mrs = m;
	fp->users++;
	pthread_mutex_unlock(&dp_lock);
	fake_ledger_acquire(L_MR);
	return &m->mr;
}

/*
 * Can the kernel pin [addr, addr + len) (for writing, if @write)? A pipe
 * copies from user memory on write(2) and to it on read(2), so it fails
 * with EFAULT exactly where get_user_pages would. For @write each probed
 * byte is read back into place: its value does not change.
 */
static bool pipe_range_ok(uintptr_t p, uintptr_t end, bool write_too)
{
	bool ok = true;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return true;	/* cannot tell: do not invent a failure */
	while (p < end && ok) {
		char c;

		ok = write(fds[1], (const void *)p, 1) == 1;
		if (ok)
			ok = read(fds[0], write_too ? (void *)p : &c, 1) == 1;
		p = (p & ~(PAGE - 1)) + PAGE;
	}
	close(fds[0]);
	close(fds[1]);
	return ok;
}

/*
 * The same probe a byte a page, up to IOV_MAX pages a call: process_vm_readv
 * on ourselves pins each page as get_user_pages does and stops at the first
 * element it cannot (its count comes up short); for @write_too the bytes go
 * back with process_vm_writev, which needs the pages writable. Two calls
 * per 1024 pages where the pipe made two per page: the registrations of a
 * node-sized run were mostly this double's syscalls. Where the calls are
 * not allowed (ENOSYS, EPERM), the pipe answers.
 */
#define PROBE_PAGES 1024

static bool user_range_ok(const void *addr, size_t len, bool write_too)
{
	char probe[PROBE_PAGES];
	struct iovec local = { .iov_base = probe }, remote[PROBE_PAGES];
	uintptr_t p = (uintptr_t)addr, end = p + len;
	bool ok = true;

	while (p < end && ok) {
		size_t n = 0;
		ssize_t got;

		for (; p < end && n < PROBE_PAGES; n++) {
			remote[n] = (struct iovec){ .iov_base = (void *)p,
						    .iov_len = 1 };
			p = (p & ~(PAGE - 1)) + PAGE;
		}
		local.iov_len = n;
		got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
		if (got < 0 && (errno == ENOSYS || errno == EPERM))
			return pipe_range_ok((uintptr_t)addr, end, write_too);
		ok = got == (ssize_t)n;
		if (ok && write_too)
			ok = process_vm_writev(getpid(), &local, 1, remote, n,
					       0) == (ssize_t)n;
	}
	return ok;
}

/*
 * Is [addr, addr + len) still mapped? Checked before each access to a host
 * MR's bytes: one mincore(2) a chunk (ENOMEM: a hole) instead of the pipe
 * trick's two calls a page, which made a node-sized run's transfers
 * mostly this double's syscalls. Pages made read-only after registration
 * are not modelled (the NIC's pinned pages would not care either).
 */
static bool still_mapped(const void *addr, size_t len)
{
	unsigned char vec[1024];
	uintptr_t p = (uintptr_t)addr & ~(PAGE - 1), end = (uintptr_t)addr + len;

	while (p < end) {
		size_t n = (end - p + PAGE - 1) / PAGE;

		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore((void *)p, n * PAGE, vec) && errno == ENOMEM)
			return false;
		p += n * PAGE;
	}
	return true;
}

static bool access_writes(int access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC);
}

static struct ibv_mr *reg_host(const char *name, struct ibv_pd *pd,
			       void *addr, size_t len, uint64_t iova,
			       int access)
{
	struct fake_pd *fp = to_pd(pd);
	long long e;

	FAULT_PTR(name, PD_IDX(pd));
	/* uverbs: start and hca_va must share their offset in the page. */
	if (!fp || !len || (uintptr_t)addr + len < (uintptr_t)addr ||
	    iova + len < iova || !access_ok(access) ||
	    ((uintptr_t)addr ^ iova) % PAGE)
		FAIL_PTR(EINVAL);
	e = fake_getf_ll(0, "dev%d.reg_mr_errno", fp->idx);
	if (e)
		FAIL_PTR((int)e);
	if (!user_range_ok(addr, len, access_writes(access)))
		FAIL_PTR(EFAULT);
	return new_mr(fp, addr, len, access, iova, addr, true, NULL, 0);
}

struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			   int access)
{
	return reg_host("ibv_reg_mr", pd, addr, len, (uintptr_t)addr, access);
}

struct ibv_mr *fake_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t iova, unsigned int access)
{
	return reg_host("ibv_reg_mr_iova2", pd, addr, len, iova, (int)access);
}

#ifndef FAKE_VERBS_OLD
/*
 * Not in the -old build (rdma-core < 34).
 * fd < 0 is NCCL's probe: devI.dmabuf_errno says how the provider answers
 * (an MR made so has no storage: every access to it is a protection error).
 * fd >= 0: the fd must be open (EBADF) and cover offset + len (EINVAL);
 * it need not be a real dma-buf unless devI.dmabuf_check_real = 1, because
 * the libcuda double exports memfds. The double maps [offset, offset + len)
 * of the fd MAP_SHARED for the MR's lifetime: the caller may close the fd.
 */
struct ibv_mr *fake_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t len, uint64_t iova, int fd,
				  int access)
{
	struct fake_pd *fp = to_pd(pd);
	char path[64], link[64];
	uint64_t delta;
	struct stat sb;
	void *map;
	long long e;
	ssize_t n;

	FAULT_PTR("ibv_reg_dmabuf_mr", PD_IDX(pd));
	if (!fp || !access_ok(access))
		FAIL_PTR(EINVAL);
	if (fd < 0) {
		e = fake_getf_ll(EBADF, "dev%d.dmabuf_errno", fp->idx);
		if (e)
			FAIL_PTR((int)e);
		return new_mr(fp, (void *)(uintptr_t)offset, len, access, iova,
			      NULL, false, NULL, 0);
	}
	if (fstat(fd, &sb))
		FAIL_PTR(EBADF);
	if (!len || offset + len < offset || iova + len < iova ||
	    offset + len > (uint64_t)sb.st_size || (offset ^ iova) % PAGE)
		FAIL_PTR(EINVAL);
	if (fake_getf_ll(0, "dev%d.dmabuf_check_real", fp->idx)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (strncmp(link, "/dmabuf:", 8))
			FAIL_PTR(EINVAL);
	}
	e = fake_getf_ll(0, "dev%d.dmabuf_reg_errno", fp->idx);
	if (e)
		FAIL_PTR((int)e);
	delta = offset % PAGE;
	map = mmap(NULL, len + delta, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)(offset - delta));
	if (map == MAP_FAILED) {
		e = errno;
		fprintf(stderr, "fake libibverbs: cannot map dma-buf fd %d: %s\n",
			fd, strerror((int)e));
		FAIL_PTR((int)e);
	}
	return new_mr(fp, (void *)(uintptr_t)offset, len, access, iova,
		      (char *)map + delta, false, map, len + delta);
}

#endif

static struct fake_mr *to_mr(struct ibv_mr *mr)
{
	struct fake_mr *m = (struct fake_mr *)mr;

	return m && m->magic == FAKE_MAGIC ? m : NULL;
}

int fake_dereg_mr(struct ibv_mr *mr)
{
	struct fake_mr *m = to_mr(mr), **pp;

	FAULT_INT("ibv_dereg_mr", m ? m->pd->idx : -1);
	if (!m)
		FAIL_INT(EINVAL);
	pthread_mutex_lock(&dp_lock);
	for (pp = &mrs; *pp && *pp != m; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = m->next;
	m->pd->users--;
	m->magic = 0;
	pthread_mutex_unlock(&dp_lock);
	if (m->map)
		munmap(m->map, m->map_len);
	free(m->stale);
	free(m);
	fake_ledger_release(L_MR);
	return 0;
}

struct ibv_cq *fake_create_cq(struct ibv_context *ctx, int cqe,
			      void *cq_context,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct fake_ctx *fc = to_ctx(ctx);
	struct fake_cq *c;

	FAULT_PTR("ibv_create_cq", CTX_IDX(ctx));
	if (!fc || cqe < 1 || cqe > MAX_CQE || comp_vector < 0 ||
	    comp_vector >= ctx->num_comp_vectors)
		FAIL_PTR(EINVAL);
	c = calloc(1, sizeof(*c));
	if (!c)
		FAIL_PTR(ENOMEM);
	c->magic = FAKE_MAGIC;
	c->idx = fc->idx;
	c->cq.context = ctx;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	pthread_mutex_init(&c->cq.mutex, NULL);
	pthread_cond_init(&c->cq.cond, NULL);
	pthread_mutex_lock(&dp_lock);
	c->cq.handle = next_key++;
	pthread_mutex_unlock(&dp_lock);
	fake_ledger_acquire(L_CQ);
	return &c->cq;
}

static struct fake_cq *to_cq(struct ibv_cq *cq)
{
	struct fake_cq *c = (struct fake_cq *)cq;

	return c && c->magic == FAKE_MAGIC ? c : NULL;
}

int fake_destroy_cq(struct ibv_cq *cq)
{
	struct fake_cq *c = to_cq(cq);
	struct fake_cqe *e;

	FAULT_INT("ibv_destroy_cq", c ? c->idx : -1);
	if (!c)
		FAIL_INT(EINVAL);
	pthread_mutex_lock(&dp_lock);
	if (c->users) {
		pthread_mutex_unlock(&dp_lock);
		FAIL_INT(EBUSY);
	}
	c->magic = 0;
	while ((e = c->head)) {
		c->head = e->next;
		free(e);
	}
	pthread_mutex_unlock(&dp_lock);
	pthread_mutex_destroy(&c->cq.mutex);
	pthread_cond_destroy(&c->cq.cond);
	free(c);
	fake_ledger_release(L_CQ);
	return 0;
}

struct ibv_qp *fake_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *init)
{
	struct fake_pd *fp = to_pd(pd);
	struct fake_cq *scq, *rcq;
	struct ibv_qp_cap *cap;
	struct fake_qp *q;

	FAULT_PTR("ibv_create_qp", PD_IDX(pd));
	if (!fp || !init)
		FAIL_PTR(EINVAL);
	scq = to_cq(init->send_cq);
	rcq = to_cq(init->recv_cq);
	cap = &init->cap;
	/* SRQs are not modelled. */
	if (!scq || !rcq || init->srq)
		FAIL_PTR(EINVAL);
	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD)
		FAIL_PTR(EOPNOTSUPP);
	if (cap->max_send_wr > MAX_QP_WR || cap->max_recv_wr > MAX_QP_WR ||
	    cap->max_send_sge > MAX_SGE || cap->max_recv_sge > MAX_SGE ||
	    cap->max_inline_data > MAX_INLINE)
		FAIL_PTR(EINVAL);
	q = calloc(1, sizeof(*q));
	if (!q)
		FAIL_PTR(ENOMEM);
	/* A send WQE always has room for one data segment. */
	if (!cap->max_send_sge)
		cap->max_send_sge = 1;
	q->magic = FAKE_MAGIC;
	q->idx = fp->idx;
	q->max_send_wr = cap->max_send_wr;
	q->max_send_sge = cap->max_send_sge;
	q->max_inline = cap->max_inline_data;
	q->sig_all = init->sq_sig_all != 0;
	q->qp.context = pd->context;
	q->qp.qp_context = init->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = init->send_cq;
	q->qp.recv_cq = init->recv_cq;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = init->qp_type;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	pthread_mutex_init(&q->post_lock, NULL);
	q->pd = fp;
	q->scq = scq;
	q->rcq = rcq;
	pthread_mutex_lock(&dp_lock);
	q->qp.handle = next_key++;
	/* QP numbers differ between processes, as between two HCAs: a QP
	 * connected to another process's (gdrcheck --peer on one host)
	 * reaches nobody, and its first transfer ends in RETRY_EXC_ERR. */
	if (next_qpn == 0x100)
		next_qpn = 0x100 + ((uint32_t)getpid() % 0x3fff) * 0x100;
	q->qp.qp_num = next_qpn++;
	fp->users++;
	scq->users++;
	rcq->users++;
	pthread_mutex_unlock(&dp_lock);
	fake_ledger_acquire(L_QP);
	return &q->qp;
}

static struct fake_qp *to_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	return q && q->magic == FAKE_MAGIC ? q : NULL;
}

/* Drop @q's CQEs from @c (mlx5 cleans the CQ on QP reset/destroy). */
static void cq_clean(struct fake_cq *c, struct fake_qp *q)
{
	struct fake_cqe **pp = &c->head, *e;

	c->tail = NULL;
	while ((e = *pp)) {
		if (e->qp == q) {
			*pp = e->next;
			c->count--;
			free(e);
			continue;
		}
		c->tail = e;
		pp = &e->next;
	}
}

/* Forget the send queue: CQEs, swallowed WRs, counters. Lock held. */
static void sq_discard(struct fake_qp *q)
{
	struct fake_pending *p;

	cq_clean(q->scq, q);
	if (q->rcq != q->scq)
		cq_clean(q->rcq, q);
	while ((p = q->pend_head)) {
		q->pend_head = p->next;
		free(p);
	}
	q->pend_tail = NULL;
	q->posted = q->retired = 0;
	q->stalled = false;
}

int fake_destroy_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = to_qp(qp);

	FAULT_INT("ibv_destroy_qp", q ? q->idx : -1);
	if (!q)
		FAIL_INT(EINVAL);
	pthread_mutex_lock(&dp_lock);
	sq_discard(q);
	q->pd->users--;
	q->scq->users--;
	q->rcq->users--;
	q->magic = 0;
	pthread_mutex_unlock(&dp_lock);
	pthread_mutex_destroy(&q->qp.mutex);
	pthread_cond_destroy(&q->qp.cond);
	pthread_mutex_destroy(&q->post_lock);
	free(q);
	fake_ledger_release(L_QP);
	return 0;
}

/* --- completions ---------------------------------------------------------- */

/* Queue a CQE on the send CQ. Lock held. */
static void cq_push(struct fake_qp *q, uint64_t wr_id, uint64_t seq,
		    enum ibv_wc_status status, enum ibv_wc_opcode opcode,
		    uint32_t byte_len)
{
	struct fake_cq *c = q->scq;
	struct fake_cqe *e;

	if (c->overrun)
		return;
	if (c->count >= c->cq.cqe) {
		/* Hardware stops writing: this and every later CQE are lost. */
		c->overrun = true;
		fprintf(stderr, "fake libibverbs: CQ overrun (cqe %d): "
			"completions lost from now on\n", c->cq.cqe);
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		c->overrun = true;
		return;
	}
	e->qp = q;
	e->seq = seq;
	e->wc.wr_id = wr_id;
	e->wc.status = status;
	e->wc.opcode = opcode;
	e->wc.byte_len = byte_len;
	e->wc.qp_num = q->qp.qp_num;
	/* mlx5 reports a syndrome with every error. */
	e->wc.vendor_err = status == IBV_WC_SUCCESS ? 0 : 0x80u + status;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	c->count++;
}

/* To ERR: swallowed WRs complete with IBV_WC_WR_FLUSH_ERR. Lock held. */
static void qp_to_err(struct fake_qp *q)
{
	struct fake_pending *p;

	q->qp.state = IBV_QPS_ERR;
	q->stalled = false;
	while ((p = q->pend_head)) {
		q->pend_head = p->next;
		cq_push(q, p->wr_id, p->seq, IBV_WC_WR_FLUSH_ERR, p->opcode, 0);
		free(p);
	}
	q->pend_tail = NULL;
}

static int dp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fake_cq *c = to_cq(cq);
	struct fake_cqe *e;
	long long v;
	int got = 0;

	if (fake_fault("ibv_poll_cq", c ? c->idx : -1, &v))
		return v > 0 ? (int)-v : (int)v;
	if (!c || n < 0 || (n && !wc))
		return -EINVAL;
	pthread_mutex_lock(&dp_lock);
	while (got < n && (e = c->head)) {
		c->head = e->next;
		if (!c->head)
			c->tail = NULL;
		c->count--;
		wc[got++] = e->wc;
		/* Polling a CQE frees its WR's send-queue slot and earlier ones. */
		if (e->qp->retired < e->seq + 1)
			e->qp->retired = e->seq + 1;
		free(e);
	}
	pthread_mutex_unlock(&dp_lock);
	return got;
}

/* --- RC data path ------------------------------------------------------------ */

static long long dev_key(int i, const char *what)
{
	return fake_getf_ll(0, "dev%d.%s", i, what);
}

/* MR of @pd with @key holding [addr, addr + len), or NULL. Lock held. */
static struct fake_mr *mr_lookup(struct fake_pd *pd, uint32_t key,
				 uint64_t addr, uint64_t len)
{
	for (struct fake_mr *m = mrs; m; m = m->next) {
		if (m->pd != pd || m->mr.lkey != key)
			continue;
		if (addr < m->iova || len > m->mr.length ||
		    addr - m->iova > m->mr.length - len)
			return NULL;
		return m;
	}
	return NULL;
}

/* Host address of [addr, addr + len) in @m, if it can be touched now. */
static char *mr_bytes(struct fake_mr *m, uint64_t addr, uint64_t len,
		      bool write_too)
{
	char *p;

	if (!m->bytes)
		return NULL;
	p = m->bytes + (addr - m->iova);
	(void)write_too;
	if (m->user_mem && !still_mapped(p, len)) {
		fprintf(stderr, "fake libibverbs: MR 0x%x: memory at %p is no "
			"longer mapped\n", m->mr.lkey, (void *)p);
		return NULL;
	}
	return p;
}

/* Does the QP's address vector lead back to its own port? */
static bool reaches_self(const struct fake_qp *q)
{
	if (q->dest_qpn != q->qp.qp_num)
		return false;	/* nobody else answers */
	if (link_layer(q->idx, q->port) == IBV_LINK_LAYER_INFINIBAND) {
		if (q->ah.dlid != (uint16_t)(q->idx + 1))
			return false;
		if (!q->ah.is_global)
			return true;
	}
	return gid_is_ours(q->idx, q->port, &q->ah.grh.dgid);
}

/*
 * What a WR's DMA does once its checks passed: the bytes of each SGE, XORed
 * with @mask (wc_corrupt), after @spill_len bytes of 0xee past the target
 * (wc_overrun). Resolved under the lock, run outside it (dma_run), so the
 * QPs of two threads move bytes at once, as two NICs' engines do.
 */
struct dma_op {
	int n;
	char *dst[MAX_SGE];
	const char *src[MAX_SGE];
	uint32_t len[MAX_SGE];
	uint8_t mask;
	char *spill;
	size_t spill_len;
};

static void dma_run(const struct dma_op *op)
{
	if (op->spill)
		memset(op->spill, 0xee, op->spill_len);
	for (int k = 0; k < op->n; k++) {
		memmove(op->dst[k], op->src[k], op->len[k]);
		if (op->mask)
			for (uint32_t b = 0; b < op->len[k]; b++)
				op->dst[k][b] = (char)(op->dst[k][b] ^ op->mask);
	}
}

/*
 * Check one RDMA WR on an RTS QP; returns its completion status and, on
 * success, fills @op with the data it moves. Lock held.
 */
static enum ibv_wc_status execute(struct fake_qp *q, const struct ibv_send_wr *wr,
				  uint64_t total, struct dma_op *op)
{
	bool rd = wr->opcode == IBV_WR_RDMA_READ;
	bool inl = !rd && (wr->send_flags & IBV_SEND_INLINE);
	char *local[MAX_SGE], *remote;
	struct fake_mr *m;
	long long st, room, spill;
	uint8_t mask;

	st = dev_key(q->idx, "wc_status");
	if (st)
		return (enum ibv_wc_status)st;
	if (fake_getf_ll(IBV_PORT_ACTIVE, "dev%d.port%u.state", q->idx,
			 q->port) != IBV_PORT_ACTIVE || !reaches_self(q))
		return IBV_WC_RETRY_EXC_ERR;
	if (total > MAX_MSG)
		return IBV_WC_LOC_LEN_ERR;
	/* Requester: the local SGEs. */
	for (int k = 0; k < wr->num_sge; k++) {
		const struct ibv_sge *sg = &wr->sg_list[k];

		local[k] = NULL;
		if (!sg->length)
			continue;
		if (inl) {
			local[k] = (char *)(uintptr_t)sg->addr;
			continue;
		}
		m = mr_lookup(q->pd, sg->lkey, sg->addr, sg->length);
		if (!m || (rd && !(m->access & IBV_ACCESS_LOCAL_WRITE)))
			return IBV_WC_LOC_PROT_ERR;
		local[k] = mr_bytes(m, sg->addr, sg->length, rd);
		if (!local[k])
			return IBV_WC_LOC_PROT_ERR;
	}
	/* Responder (the same QP): is the operation enabled at all? */
	if (!(q->access & (rd ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE)) ||
	    (rd && !q->max_dest_rd_atomic))
		return IBV_WC_REM_INV_REQ_ERR;
	/* A zero-length RDMA op checks no rkey. */
	if (!total)
		return IBV_WC_SUCCESS;
	m = mr_lookup(q->pd, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, total);
	if (!m || !(m->access & (rd ? IBV_ACCESS_REMOTE_READ :
				      IBV_ACCESS_REMOTE_WRITE)))
		return IBV_WC_REM_ACCESS_ERR;
	remote = mr_bytes(m, wr->wr.rdma.remote_addr, total, !rd);
	if (!remote)
		return IBV_WC_REM_ACCESS_ERR;
	/* A lost DMA: the checks passed, the completion says success. */
	if (dev_key(q->idx, "silent_drop") & (rd ? 2 : 1))
		return IBV_WC_SUCCESS;
	if (rd && m->stale)
		remote = m->stale + (wr->wr.rdma.remote_addr - m->iova);
	mask = dev_key(q->idx, "wc_corrupt") ? (rd ? 0x55 : 0xff) : 0;
	room = dev_key(q->idx, "wc_short");
	if (room <= 0 || (uint64_t)room > total)
		room = (long long)total;
	spill = rd ? 0 : dev_key(q->idx, "wc_overrun");
	if (spill > 0) {
		uint64_t end = wr->wr.rdma.remote_addr + total;
		uint64_t left = m->iova + m->mr.length - end;
		char *after;

		if ((uint64_t)spill > left)
			spill = (long long)left;
		after = spill ? mr_bytes(m, end, (uint64_t)spill, true) : NULL;
		if (after) {
			op->spill = after;
			op->spill_len = (size_t)spill;
		}
	}
	op->mask = mask;
	for (int k = 0; k < wr->num_sge && room > 0; k++) {
		uint32_t len = wr->sg_list[k].length;

		if ((long long)len > room)
			len = (uint32_t)room;
		room -= len;
		if (!len)
			continue;
		op->dst[op->n] = rd ? local[k] : remote;
		op->src[op->n] = rd ? remote : local[k];
		op->len[op->n++] = len;
		remote += len;
	}
	return IBV_WC_SUCCESS;
}

/* The completion a WR gets once its bytes moved. */
struct late_cqe {
	bool due;
	uint64_t wr_id, seq;
	enum ibv_wc_opcode op;
	uint32_t byte_len;
};

/*
 * Validate one WR and resolve its DMA into @dma; a successful signaled WR's
 * completion goes to @late, for after the bytes moved. 0 or the errno
 * post_send returns. Lock held.
 */
static int post_one(struct fake_qp *q, const struct ibv_send_wr *wr,
		    struct dma_op *dma, struct late_cqe *late)
{
	enum ibv_wc_opcode op;
	enum ibv_wc_status st;
	struct fake_pending *p;
	uint64_t total = 0, seq;
	bool sig;

	/* rdma-core's providers: EINVAL below RTS; ERR flushes. */
	if (q->qp.state != IBV_QPS_RTS && q->qp.state != IBV_QPS_ERR)
		return EINVAL;
	if (q->qp.qp_type != IBV_QPT_RC)
		return EOPNOTSUPP;	/* UC/UD traffic is not modelled */
	if (wr->opcode == IBV_WR_RDMA_WRITE)
		op = IBV_WC_RDMA_WRITE;
	else if (wr->opcode == IBV_WR_RDMA_READ)
		op = IBV_WC_RDMA_READ;
	else
		return EOPNOTSUPP;	/* sends, atomics: not modelled */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	for (int k = 0; k < wr->num_sge; k++)
		total += wr->sg_list[k].length;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    (op == IBV_WC_RDMA_READ || total > q->max_inline))
		return EINVAL;
	if (q->posted - q->retired >= q->max_send_wr)
		return ENOMEM;	/* send queue full */
	seq = q->posted++;
	sig = q->sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	if (q->qp.state == IBV_QPS_ERR) {
		cq_push(q, wr->wr_id, seq, IBV_WC_WR_FLUSH_ERR, op, 0);
		return 0;
	}
	if (q->stalled || dev_key(q->idx, "wc_drop")) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return ENOMEM;
		p->wr_id = wr->wr_id;
		p->seq = seq;
		p->opcode = op;
		if (q->pend_tail)
			q->pend_tail->next = p;
		else
			q->pend_head = p;
		q->pend_tail = p;
		q->stalled = true;
		return 0;
	}
	st = execute(q, wr, total, dma);
	if (st != IBV_WC_SUCCESS) {
		*dma = (struct dma_op){ .n = 0 };
		cq_push(q, wr->wr_id, seq, st, op, 0);
		qp_to_err(q);
	} else if (sig) {
		*late = (struct late_cqe){ .due = true, .wr_id = wr->wr_id,
					   .seq = seq, .op = op,
					   .byte_len = (uint32_t)total };
	}
	return 0;
}

static int dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	struct fake_qp *q = to_qp(qp);
	long long v;
	int rc = 0;

	if (fake_fault("ibv_post_send", q ? q->idx : -1, &v)) {
		*bad = wr;
		return (int)v;
	}
	if (!q) {
		*bad = wr;
		return EINVAL;
	}
	/* Per WR: checks under the lock, the bytes outside it, then the
	 * completion, so a CQE never shows before its data landed. */
	pthread_mutex_lock(&q->post_lock);
	for (; wr; wr = wr->next) {
		struct dma_op dma = { .n = 0 };
		struct late_cqe late = { .due = false };

		pthread_mutex_lock(&dp_lock);
		rc = post_one(q, wr, &dma, &late);
		pthread_mutex_unlock(&dp_lock);
		if (rc) {
			*bad = wr;
			break;
		}
		dma_run(&dma);
		if (late.due) {
			pthread_mutex_lock(&dp_lock);
			cq_push(q, late.wr_id, late.seq, IBV_WC_SUCCESS,
				late.op, late.byte_len);
			pthread_mutex_unlock(&dp_lock);
		}
	}
	pthread_mutex_unlock(&q->post_lock);
	return rc;
}

/* --- QP state machine ------------------------------------------------------ */

/*
 * Required and optional attributes of a transition, after the kernel's
 * qp_state_table (ib_modify_qp_is_ok) for RC, UC and UD. False: invalid.
 */
static bool transition(enum ibv_qp_type t, enum ibv_qp_state from,
		       enum ibv_qp_state to, int *req, int *opt)
{
	bool rc = t == IBV_QPT_RC, ud = t == IBV_QPT_UD;

	*req = *opt = 0;
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return from <= IBV_QPS_ERR;
	switch (from) {
	case IBV_QPS_RESET:
		if (to != IBV_QPS_INIT)
			return false;
		*req = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
		return true;
	case IBV_QPS_INIT:
		if (to == IBV_QPS_INIT) {
			*opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
			return true;
		}
		if (to != IBV_QPS_RTR)
			return false;
		if (ud) {
			*opt = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
			return true;
		}
		*req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN;
		if (rc)
			*req |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		*opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		       IBV_QP_PKEY_INDEX;
		return true;
	case IBV_QPS_RTR:
		if (to != IBV_QPS_RTS)
			return false;
		*req = IBV_QP_SQ_PSN;
		if (rc)
			*req |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		*opt = IBV_QP_CUR_STATE | (ud ? IBV_QP_QKEY :
			IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
			IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0));
		return true;
	case IBV_QPS_RTS:
		if (to != IBV_QPS_RTS)
			return false;
		*opt = IBV_QP_CUR_STATE | (ud ? IBV_QP_QKEY :
			IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0));
		return true;
	default:
		return false;	/* SQD, SQE: not modelled */
	}
}

static bool port_ok(const struct fake_qp *q, unsigned int port)
{
	return port >= 1 && port <= fake_getf_ll(1, "dev%d.ports", q->idx);
}

/* The address vector, as uverbs + the provider check it at RTR. */
static bool av_ok(const struct fake_qp *q, const struct ibv_ah_attr *ah)
{
	union ibv_gid g;
	unsigned int port = ah->port_num;

	if (!port_ok(q, port))
		return false;	/* uverbs: dest.port_num must be valid */
	if (link_layer(q->idx, port) == IBV_LINK_LAYER_ETHERNET &&
	    !ah->is_global)
		return false;	/* RoCE needs a GRH */
	if (!ah->is_global)
		return true;
	if (ah->grh.sgid_index >= gid_tbl_len(q->idx, port))
		return false;
	gid_value(q->idx, port, ah->grh.sgid_index, &g);
	return !gid_zero(&g);
}

/*
 * The kernel's checks: the transition, its required and allowed attribute
 * masks, then the values (port, P_Key index, path MTU, AV, RD atomics).
 * A mask without IBV_QP_STATE modifies within the current state.
 */
int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_qp *q = to_qp(qp);
	enum ibv_qp_state from, to;
	int req, opt, have;

	FAULT_INT("ibv_modify_qp", q ? q->idx : -1);
	if (!q || !attr)
		FAIL_INT(EINVAL);
	pthread_mutex_lock(&dp_lock);
	from = qp->state;
	to = mask & IBV_QP_STATE ? attr->qp_state : from;
	have = mask & ~IBV_QP_STATE;
	if (!transition(qp->qp_type, from, to, &req, &opt) ||
	    (have & req) != req || (have & ~(req | opt)) ||
	    ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != from) ||
	    ((mask & IBV_QP_PORT) && !port_ok(q, attr->port_num)) ||
	    ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= 128) ||
	    ((mask & IBV_QP_PATH_MTU) && (attr->path_mtu < IBV_MTU_256 ||
					  attr->path_mtu > IBV_MTU_4096)) ||
	    ((mask & IBV_QP_AV) && !av_ok(q, &attr->ah_attr)) ||
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > MAX_RD_ATOM) ||
	    ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > MAX_RD_ATOM)) {
		pthread_mutex_unlock(&dp_lock);
		FAIL_INT(EINVAL);
	}
	if (mask & IBV_QP_PORT)
		q->port = attr->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		q->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->access = attr->qp_access_flags;
	if (mask & IBV_QP_PATH_MTU)
		q->path_mtu = attr->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qpn = attr->dest_qp_num;
	if (mask & IBV_QP_AV)
		q->ah = attr->ah_attr;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = attr->max_rd_atomic;
	if (to == IBV_QPS_RESET) {
		sq_discard(q);
		q->port = 0;
		q->pkey_index = 0;
		q->access = 0;
		q->path_mtu = 0;
		q->dest_qpn = 0;
		memset(&q->ah, 0, sizeof(q->ah));
		q->max_dest_rd_atomic = q->max_rd_atomic = 0;
		qp->state = IBV_QPS_RESET;
	} else if (to == IBV_QPS_ERR) {
		qp_to_err(q);
	} else {
		qp->state = to;
	}
	pthread_mutex_unlock(&dp_lock);
	return 0;
}
