/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_VERBS_H
#define GDRCHECK_VERBS_H

#include "access/vendor.h"

#define LIBIBVERBS_DEFAULT "libibverbs.so.1"

#include <infiniband/verbs.h>

/*
 * libibverbs' entry points, bound by version node. post_send and poll_cq
 * are not here: they are the inline ibv_post_send()/ibv_poll_cq() of
 * <infiniband/verbs.h>, which call through the provider's ops.
 */
struct verbs_table {
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx,
			    struct ibv_device_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr,
				       size_t len, uint64_t iova,
				       unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t len, uint64_t iova, int fd,
					int access);
	void *query_gid_ex;	/* presence only */
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len,
				 int access);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int mask);
	int (*query_port)(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr);
	int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index,
			 union ibv_gid *gid);
};

/* Load libibverbs once per worker; the table, or NULL (facts recorded). */
const struct verbs_table *verbs_api(const struct vendor_options *opt,
				    struct vendor_facts *vf,
				    struct stage_status *st);

/* Worker stage: library, device list, open, DMA-BUF provider probe. */
void verbs_stage_probe(const struct vendor_options *opt,
		       struct vendor_facts *vf, struct stage_status *st);

#endif
