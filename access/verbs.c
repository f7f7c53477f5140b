// SPDX-License-Identifier: MIT
/*
 * libibverbs through a dlopen'd function table. Symbols are bound by version
 * node with dlvsym, as rdma-core exports them: the IBVERBS_1.1 ABI for the
 * base calls, IBVERBS_1.8 for ibv_reg_mr_iova2, IBVERBS_1.12 for
 * ibv_reg_dmabuf_mr (rdma-core >= 34). Only the headers are used at build
 * time; the binary does not link libibverbs.
 */
#include "access/verbs.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "access/mlx5.h"
#include "access/symtab.h"


#define VSYM(n, ver, field, req) { .name = n, .version = ver, \
	.offset = offsetof(struct verbs_table, field), .required = req }

static const struct sym_entry verbs_syms[] = {
	VSYM("ibv_get_device_list", "IBVERBS_1.1", get_device_list, true),
	VSYM("ibv_free_device_list", "IBVERBS_1.1", free_device_list, true),
	VSYM("ibv_get_device_name", "IBVERBS_1.1", get_device_name, true),
	VSYM("ibv_open_device", "IBVERBS_1.1", open_device, true),
	VSYM("ibv_close_device", "IBVERBS_1.1", close_device, true),
	VSYM("ibv_query_device", "IBVERBS_1.1", query_device, true),
	VSYM("ibv_alloc_pd", "IBVERBS_1.1", alloc_pd, true),
	VSYM("ibv_dealloc_pd", "IBVERBS_1.1", dealloc_pd, true),
	VSYM("ibv_dereg_mr", "IBVERBS_1.1", dereg_mr, true),
	VSYM("ibv_reg_mr", "IBVERBS_1.1", reg_mr, true),
	VSYM("ibv_create_cq", "IBVERBS_1.1", create_cq, true),
	VSYM("ibv_destroy_cq", "IBVERBS_1.1", destroy_cq, true),
	VSYM("ibv_create_qp", "IBVERBS_1.1", create_qp, true),
	VSYM("ibv_destroy_qp", "IBVERBS_1.1", destroy_qp, true),
	VSYM("ibv_modify_qp", "IBVERBS_1.1", modify_qp, true),
	VSYM("ibv_query_port", "IBVERBS_1.1", query_port, true),
	VSYM("ibv_query_gid", "IBVERBS_1.1", query_gid, true),
	VSYM("ibv_reg_mr_iova2", "IBVERBS_1.8", reg_mr_iova2, false),
	VSYM("_ibv_query_gid_ex", "IBVERBS_1.11", query_gid_ex, false),
	VSYM("ibv_reg_dmabuf_mr", "IBVERBS_1.12", reg_dmabuf_mr, false),
};

static struct verbs_table ibv;
static void *verbs_handle;

static void enter(struct stage_status *st, const char *call)
{
	snprintf(st->call, sizeof(st->call), "%s", call);
}

/*
 * NCCL's provider probe: register fd -1. A provider that implements
 * dma-buf MRs rejects the fd (EBADF); EOPNOTSUPP means the provider (or the
 * library) lacks it, EPROTONOSUPPORT that the kernel does.
 */
static void probe_dmabuf(const struct mlx5_table *dv, struct ibv_device *dev,
			 struct ibv_context *ctx, struct verbs_nic *n,
			 struct stage_status *st)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr = NULL;

	enter(st, "ibv_alloc_pd");
	errno = 0;
	pd = ibv.alloc_pd(ctx);
	if (!pd) {
		n->pd_errno = errno ? errno : EIO;
		return;
	}
	if (ibv.reg_dmabuf_mr) {
		enter(st, "ibv_reg_dmabuf_mr");
		errno = 0;
		mr = ibv.reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
		n->probe_run = true;
		n->probe_errno = errno;
	}
	if (mr) {
		n->probe_returned_mr = true;
		enter(st, "ibv_dereg_mr");
		ibv.dereg_mr(mr);
	}
	/* libmlx5: Data Direct (NCCL's ncclMlx5dvDmaBufCapable after it). */
	mlx5_probe_device(dv, ibv.dereg_mr, dev, ctx, pd, n, st);
	enter(st, "ibv_dealloc_pd");
	ibv.dealloc_pd(pd);
}

const struct verbs_table *verbs_api(const struct vendor_options *opt,
				    struct vendor_facts *vf,
				    struct stage_status *st)
{
	struct verbs_facts *v = &vf->verbs;

	if (!verbs_handle) {
		memset(&v->lib, 0, sizeof(v->lib));
		enter(st, "dlopen");
		verbs_handle = symtab_load(opt->libibverbs ? opt->libibverbs :
					   LIBIBVERBS_DEFAULT, verbs_syms,
					   sizeof(verbs_syms) / sizeof(verbs_syms[0]),
					   &ibv, &v->lib);
	}
	return verbs_handle ? &ibv : NULL;
}

void verbs_stage_probe(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st)
{
	struct verbs_facts *v = &vf->verbs;
	const struct mlx5_table *dv;
	struct ibv_device **list;
	int num = 0;

	if (!verbs_api(opt, vf, st))
		return;
	/* After libibverbs: the real libmlx5 needs it (DT_NEEDED). */
	dv = mlx5_api(opt, vf, st);
	v->have_reg_dmabuf_mr = ibv.reg_dmabuf_mr != NULL;
	v->have_reg_mr_iova2 = ibv.reg_mr_iova2 != NULL;
	v->have_query_gid_ex = ibv.query_gid_ex != NULL;

	enter(st, "ibv_get_device_list");
	errno = 0;
	list = ibv.get_device_list(&num);
	v->list_called = true;
	if (!list) {
		v->list_errno = errno ? errno : EIO;
		return;
	}
	v->count = num;
	for (int i = 0; i < num && i < vf->cap.nics; i++) {
		struct verbs_nic *n = &v->nics[i];
		struct ibv_device_attr attr;
		struct ibv_context *ctx;
		const char *name;

		n->phys_ports = -1;
		n->mlx5 = -1;
		enter(st, "ibv_get_device_name");
		errno = 0;
		name = ibv.get_device_name(list[i]);
		if (!name)
			v->name_errno = errno ? errno : EIO;
		snprintf(n->name, sizeof(n->name), "%s", name ? name : "?");
		enter(st, "ibv_open_device");
		errno = 0;
		ctx = ibv.open_device(list[i]);
		if (!ctx) {
			n->open_errno = errno ? errno : EIO;
			continue;
		}
		n->opened = true;
		enter(st, "ibv_query_device");
		memset(&attr, 0, sizeof(attr));
		if (ibv.query_device(ctx, &attr) == 0)
			n->phys_ports = attr.phys_port_cnt;
		if (ibv.reg_dmabuf_mr || dv)
			probe_dmabuf(dv, list[i], ctx, n, st);
		enter(st, "ibv_close_device");
		ibv.close_device(ctx);
	}
	enter(st, "ibv_free_device_list");
	ibv.free_device_list(list);
}
