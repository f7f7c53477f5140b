// SPDX-License-Identifier: MIT
/*
 * Scenario-driven test double of libibverbs.so.1. Objects use the real
 * <infiniband/verbs.h> layouts; no real libibverbs code runs. Exports are
 * versioned like rdma-core's (IBVERBS_1.1, 1.8, 1.11, 1.12) via .symver on
 * fake_* internals, which the version script then makes local.
 *
 * Modelled: device list, open/close, query device/port/gid, PD, host and
 * dma-buf MR registration (including the kernel's EFAULT for inaccessible
 * memory and EBUSY for a PD with live MRs), CQ/QP lifetime and the QP state
 * machine. Not modelled: the data path. The context's post_send, post_recv,
 * post_srq_recv, req_notify_cq and poll_cq fail with EOPNOTSUPP; no
 * completions ever appear.
 *
 * Scenario (env FAKE_VERBS_SCENARIO), keys [defaults]; I = device index,
 * P = 1-based port number, G = gid index:
 *   device_count [0]          at most 256
 *   list_errno [0]            ibv_get_device_list: NULL with this errno
 *   devI.name ["mlx5_I"]
 *   devI.open_errno [0]       ibv_open_device: NULL with this errno
 *   devI.ports [1]            phys_port_cnt
 *   devI.fw_ver ["28.39.1002"], devI.vendor_id [0x02c9],
 *   devI.vendor_part_id [4129]
 *   devI.portP.state [4]      IBV_PORT_ACTIVE
 *   devI.portP.link_layer [2] 2 Ethernet, 1 InfiniBand
 *   devI.portP.active_mtu [IB 5, Ethernet 3], devI.portP.active_width [2],
 *   devI.portP.active_speed [64], devI.portP.phys_state [5 if ACTIVE, else 3]
 *   devI.portP.gid_tbl_len [16]
 *   devI.portP.gidG           IPv6-style text [gid0: fe80::..., others ::]
 *   devI.reg_mr_errno [0]     ibv_reg_mr / ibv_reg_mr_iova2
 *   devI.dmabuf_errno [9]     ibv_reg_dmabuf_mr with fd < 0; 0 = an MR
 *   devI.dmabuf_reg_errno [0] ibv_reg_dmabuf_mr with a real fd
 *   devI.dmabuf_check_real [0] 1: a fd that is not "/dmabuf:" is EINVAL
 * Fault keys (fake_scenario.h): fail/hang/crash/exit.NAME[.I]; I is the
 * device the call is about (via its device, context, PD, MR, CQ or QP).
 * Ledger rows: devlist, device, pd, mr, cq, qp.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/doubles/fake_scenario.h"

#define SYMVER(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@@" node)

#define FAKE_MAGIC 0x66616b65u	/* catches objects not made by this double */
#define PAGE 4096ul

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
};

struct fake_cq {
	struct ibv_cq cq;
	unsigned int magic;
	int idx;
	int users;	/* QPs */
};

struct fake_qp {
	struct ibv_qp qp;
	unsigned int magic;
	int idx;
	struct fake_pd *pd;
	struct fake_cq *scq, *rcq;
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
	if (ndev < 0 || ndev > 256)
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

/* The data path is not modelled: say so instead of pretending. */
static int no_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad)
{
	*bad = wr;
	return EOPNOTSUPP;
}

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

static int no_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return -EOPNOTSUPP;
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
	fc->ctx.ops.post_send = no_post_send;
	fc->ctx.ops.post_recv = no_post_recv;
	fc->ctx.ops.post_srq_recv = no_post_srq_recv;
	fc->ctx.ops.poll_cq = no_poll_cq;
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
	attr->max_qp_wr = 1 << 15;
	attr->max_sge = 30;
	attr->max_cq = 1 << 24;
	attr->max_cqe = (1 << 22) - 1;
	attr->max_mr = 1 << 24;
	attr->max_pd = 1 << 24;
	attr->phys_port_cnt = (uint8_t)fake_getf_ll(1, "dev%d.ports", i);
	return 0;
}

static bool bad_port(struct fake_ctx *fc, unsigned int port)
{
	return port < 1 || port > fake_getf_ll(1, "dev%d.ports", fc->idx);
}

static int link_layer(int i, unsigned int port)
{
	return (int)fake_getf_ll(IBV_LINK_LAYER_ETHERNET, "dev%d.port%u.link_layer",
				 i, port);
}

static int gid_tbl_len(int i, unsigned int port)
{
	return (int)fake_getf_ll(16, "dev%d.port%u.gid_tbl_len", i, port);
}

int fake_query_port(struct ibv_context *ctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct fake_ctx *fc = to_ctx(ctx);
	int i, ll;

	FAULT_INT("ibv_query_port", CTX_IDX(ctx));
	if (!fc || !attr || bad_port(fc, port))
		FAIL_INT(EINVAL);
	i = fc->idx;
	ll = link_layer(i, port);
	memset(attr, 0, sizeof(*attr));
	attr->state = (enum ibv_port_state)
		fake_getf_ll(IBV_PORT_ACTIVE, "dev%d.port%u.state", i, port);
	attr->max_mtu = IBV_MTU_4096;
	/* RoCE on a 1500-byte netdev runs 1024-byte IB MTU. */
	attr->active_mtu = (enum ibv_mtu)fake_getf_ll(
		ll == IBV_LINK_LAYER_INFINIBAND ? IBV_MTU_4096 : IBV_MTU_1024,
		"dev%d.port%u.active_mtu", i, port);
	attr->gid_tbl_len = gid_tbl_len(i, port);
	attr->max_msg_sz = 1u << 30;
	attr->pkey_tbl_len = 128;
	if (ll == IBV_LINK_LAYER_INFINIBAND) {
		attr->lid = (uint16_t)(i + 1);
		attr->sm_lid = 1;
	}
	attr->active_width = (uint8_t)fake_getf_ll(2, "dev%d.port%u.active_width",
						   i, port);
	attr->active_speed = (uint8_t)fake_getf_ll(64, "dev%d.port%u.active_speed",
						   i, port);
	attr->phys_state = (uint8_t)fake_getf_ll(
		attr->state == IBV_PORT_ACTIVE ? 5 : 3,
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
	}
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
	static const union ibv_gid zero;
	struct fake_ctx *fc = to_ctx(ctx);

	FAULT_INT("_ibv_query_gid_ex", CTX_IDX(ctx));
	if (!fc || !entry || flags || entry_size < sizeof(*entry) ||
	    port > 255 || bad_port(fc, port) ||
	    index >= (uint32_t)gid_tbl_len(fc->idx, port))
		FAIL_INT(EINVAL);
	memset(entry, 0, sizeof(*entry));
	gid_value(fc->idx, port, (int)index, &entry->gid);
	/* rdma-core reports an empty table slot as ENODATA. */
	if (!memcmp(&entry->gid, &zero, sizeof(zero)))
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

static struct ibv_mr *new_mr(struct fake_pd *fp, void *addr, size_t len)
{
	struct fake_mr *m = calloc(1, sizeof(*m));

	if (!m)
		FAIL_PTR(ENOMEM);
	m->magic = FAKE_MAGIC;
	m->pd = fp;
	m->mr.context = fp->pd.context;
	m->mr.pd = &fp->pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.handle = next_key;
	m->mr.lkey = next_key;
	m->mr.rkey = next_key++;
	fp->users++;
	fake_ledger_acquire(L_MR);
	return &m->mr;
}

/*
 * Can the kernel pin [addr, addr + len)? A pipe write copies from user
 * memory, so it fails with EFAULT exactly where get_user_pages would.
 */
static bool user_range_ok(const void *addr, size_t len)
{
	uintptr_t p = (uintptr_t)addr, end = p + len;
	bool ok = true;
	int fds[2];
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return true;	/* cannot tell: do not invent a failure */
	while (p < end && ok) {
		ok = write(fds[1], (const void *)p, 1) == 1;
		if (ok && read(fds[0], &c, 1) != 1)
			ok = false;
		p = (p & ~(PAGE - 1)) + PAGE;
	}
	close(fds[0]);
	close(fds[1]);
	return ok;
}

static struct ibv_mr *reg_host(const char *name, struct ibv_pd *pd,
			       void *addr, size_t len)
{
	struct fake_pd *fp = to_pd(pd);
	long long e;

	FAULT_PTR(name, PD_IDX(pd));
	if (!fp || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		FAIL_PTR(EINVAL);
	e = fake_getf_ll(0, "dev%d.reg_mr_errno", fp->idx);
	if (e)
		FAIL_PTR((int)e);
	if (!user_range_ok(addr, len))
		FAIL_PTR(EFAULT);
	return new_mr(fp, addr, len);
}

struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			   int access)
{
	return reg_host("ibv_reg_mr", pd, addr, len);
}

struct ibv_mr *fake_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t iova, unsigned int access)
{
	return reg_host("ibv_reg_mr_iova2", pd, addr, len);
}

#ifndef FAKE_VERBS_OLD
/*
 * Not in the -old build (rdma-core < 34).
 * fd < 0 is NCCL's probe: devI.dmabuf_errno says how the provider answers.
 * fd >= 0: the fd must be open (EBADF) and cover offset + len (EINVAL);
 * it need not be a real dma-buf unless devI.dmabuf_check_real = 1, because
 * the libcuda double exports memfds.
 */
struct ibv_mr *fake_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t len, uint64_t iova, int fd,
				  int access)
{
	struct fake_pd *fp = to_pd(pd);
	char path[64], link[64];
	struct stat sb;
	long long e;
	ssize_t n;

	FAULT_PTR("ibv_reg_dmabuf_mr", PD_IDX(pd));
	if (!fp)
		FAIL_PTR(EINVAL);
	if (fd < 0) {
		e = fake_getf_ll(EBADF, "dev%d.dmabuf_errno", fp->idx);
		if (e)
			FAIL_PTR((int)e);
		return new_mr(fp, (void *)(uintptr_t)iova, len);
	}
	if (fstat(fd, &sb))
		FAIL_PTR(EBADF);
	if (offset + len < offset || offset + len > (uint64_t)sb.st_size)
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
	return new_mr(fp, (void *)(uintptr_t)iova, len);
}

#endif

int fake_dereg_mr(struct ibv_mr *mr)
{
	struct fake_mr *m = (struct fake_mr *)mr;

	if (m && m->magic != FAKE_MAGIC)
		m = NULL;
	FAULT_INT("ibv_dereg_mr", m ? m->pd->idx : -1);
	if (!m)
		FAIL_INT(EINVAL);
	m->pd->users--;
	m->magic = 0;
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
	if (!fc || cqe < 1 || comp_vector < 0 ||
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
	c->cq.handle = next_key++;
	c->cq.cqe = cqe;
	pthread_mutex_init(&c->cq.mutex, NULL);
	pthread_cond_init(&c->cq.cond, NULL);
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

	FAULT_INT("ibv_destroy_cq", c ? c->idx : -1);
	if (!c)
		FAIL_INT(EINVAL);
	if (c->users)
		FAIL_INT(EBUSY);
	c->magic = 0;
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
	struct fake_qp *q;

	FAULT_PTR("ibv_create_qp", PD_IDX(pd));
	if (!fp || !init)
		FAIL_PTR(EINVAL);
	scq = to_cq(init->send_cq);
	rcq = to_cq(init->recv_cq);
	/* SRQs are not modelled. */
	if (!scq || !rcq || init->srq)
		FAIL_PTR(EINVAL);
	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD)
		FAIL_PTR(EOPNOTSUPP);
	q = calloc(1, sizeof(*q));
	if (!q)
		FAIL_PTR(ENOMEM);
	q->magic = FAKE_MAGIC;
	q->idx = fp->idx;
	q->qp.context = pd->context;
	q->qp.qp_context = init->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = init->send_cq;
	q->qp.recv_cq = init->recv_cq;
	q->qp.handle = next_key++;
	q->qp.qp_num = next_qpn++;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = init->qp_type;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	q->pd = fp;
	q->scq = scq;
	q->rcq = rcq;
	fp->users++;
	scq->users++;
	rcq->users++;
	fake_ledger_acquire(L_QP);
	return &q->qp;
}

static struct fake_qp *to_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	return q && q->magic == FAKE_MAGIC ? q : NULL;
}

int fake_destroy_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = to_qp(qp);

	FAULT_INT("ibv_destroy_qp", q ? q->idx : -1);
	if (!q)
		FAIL_INT(EINVAL);
	q->pd->users--;
	q->scq->users--;
	q->rcq->users--;
	q->magic = 0;
	pthread_mutex_destroy(&q->qp.mutex);
	pthread_cond_destroy(&q->qp.cond);
	free(q);
	fake_ledger_release(L_QP);
	return 0;
}

/*
 * Only the state machine is modelled (RESET -> INIT -> RTR -> RTS, any ->
 * RESET/ERR, INIT->INIT, RTS->RTS); attributes are not checked. A call
 * without IBV_QP_STATE is EINVAL here, not a silent success.
 */
int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_qp *q = to_qp(qp);
	enum ibv_qp_state from, to;
	bool ok;

	FAULT_INT("ibv_modify_qp", q ? q->idx : -1);
	if (!q || !attr || !(mask & IBV_QP_STATE))
		FAIL_INT(EINVAL);
	from = qp->state;
	to = attr->qp_state;
	switch (to) {
	case IBV_QPS_RESET:
	case IBV_QPS_ERR:
		ok = true;
		break;
	case IBV_QPS_INIT:
		ok = from == IBV_QPS_RESET || from == IBV_QPS_INIT;
		break;
	case IBV_QPS_RTR:
		ok = from == IBV_QPS_INIT;
		break;
	case IBV_QPS_RTS:
		ok = from == IBV_QPS_RTR || from == IBV_QPS_RTS;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		FAIL_INT(EINVAL);
	qp->state = to;
	return 0;
}
