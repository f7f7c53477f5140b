/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_VENDOR_H
#define GDRCHECK_VENDOR_H

/*
 * Facts gathered from the vendor libraries (libcuda, libibverbs).
 *
 * The worker process writes them into a shared anonymous mapping, so the
 * structure holds no pointers: fixed arrays only. The parent reads them
 * after the worker finished, timed out or crashed.
 */
#include <stdbool.h>
#include <stdint.h>

#define VF_MAX_GPUS	128
#define VF_MAX_NICS	128
#define VF_NAME		96
#define VF_TEXT		256

/* Outcome of one worker stage. */
enum stage_state {
	STAGE_NOT_RUN = 0,
	STAGE_RUNNING,
	STAGE_DONE,
	STAGE_TIMEOUT,
	STAGE_CRASHED,
	STAGE_FAILED,		/* the worker could not be started */
};

struct stage_status {
	enum stage_state state;
	char call[VF_NAME];	/* vendor call in progress (for hang/crash) */
	int signal;		/* STAGE_CRASHED */
	double seconds;		/* wall time of the stage */
};

/* A library loaded through a function table. */
struct lib_facts {
	bool attempted;
	bool loaded;
	char path[VF_TEXT];		/* what was dlopen'd */
	char error[VF_TEXT];		/* dlerror() when not loaded */
	char missing_required[VF_TEXT];	/* space separated symbol names */
	char missing_optional[VF_TEXT];
};

/* A CUDA call's outcome: rc plus the driver's own error name. */
struct cu_call {
	bool called;
	int rc;
	char name[48];
	double ms;
};

#define CU_ATTR_UNKNOWN INT32_MIN

struct cuda_gpu {
	int ordinal;
	char name[VF_NAME];
	char pci[32];			/* normalised 0000:bb:dd.f */
	int cc_major, cc_minor;
	unsigned long long total_mem;
	int attr_gdr;			/* CU_ATTR_UNKNOWN if the query failed */
	int attr_dmabuf;
	int attr_flush;
	int attr_ordering;
	int attr_vmm_gdr;
	struct cu_call attr_call;	/* last failing attribute query */

	/* The DMA-BUF export check (mechanism layer). */
	struct cu_call ctx_retain;
	struct cu_call alloc;
	struct cu_call export_call;
	unsigned long long export_size;
	int ptr_gdr_capable;		/* CU_ATTR_UNKNOWN if not asked */
	bool fd_checked;
	bool fd_is_dmabuf;		/* readlink gave "/dmabuf:..." */
	char fd_link[64];
	char fd_exp_name[32];
	long long fd_size;		/* -1 if fdinfo had no size */
};

struct cuda_facts {
	struct lib_facts lib;
	bool have_export_fn;		/* cuMemGetHandleForAddressRange */
	struct cu_call init;
	int driver_version;		/* 0 if unknown */
	struct cu_call count_call;
	int count;			/* GPUs CUDA enumerated */
	int gpus_recorded;		/* entries valid in gpus[] */
	struct cuda_gpu gpus[VF_MAX_GPUS];
};

struct verbs_nic {
	char name[64];
	int open_errno;			/* 0 = ibv_open_device worked */
	bool opened;
	int phys_ports;			/* from ibv_query_device, -1 unknown */
	bool probe_run;			/* DMA-BUF provider probe */
	int probe_errno;		/* errno of ibv_reg_dmabuf_mr(fd=-1) */
	bool probe_returned_mr;		/* provider accepted fd -1 (!) */
	int pd_errno;			/* ibv_alloc_pd failure */
};

struct verbs_facts {
	struct lib_facts lib;
	bool have_reg_dmabuf_mr;	/* ibv_reg_dmabuf_mr@IBVERBS_1.12 */
	bool have_reg_mr_iova2;		/* ibv_reg_mr_iova2@IBVERBS_1.8 */
	bool have_query_gid_ex;		/* _ibv_query_gid_ex@IBVERBS_1.11 */
	bool list_called;
	int list_errno;			/* ibv_get_device_list NULL -> errno */
	int count;
	struct verbs_nic nics[VF_MAX_NICS];
};

enum worker_stage {
	WSTAGE_CUDA = 0,	/* libcuda: init, attributes */
	WSTAGE_CUDA_EXPORT,	/* libcuda: allocate + DMA-BUF export */
	WSTAGE_VERBS,		/* libibverbs: devices, provider probe */
	WSTAGE_COUNT,
};

struct vendor_facts {
	struct stage_status stage[WSTAGE_COUNT];
	struct cuda_facts cuda;
	struct verbs_facts verbs;
};

/* What the worker needs to know (copied into the child before fork). */
struct vendor_options {
	const char *libcuda;		/* NULL = default soname */
	const char *libibverbs;
	double stage_timeout;		/* seconds */
	bool skip_cuda;
	bool skip_verbs;
	bool no_alloc;
};

const char *stage_name(enum worker_stage s);

/*
 * Run every vendor stage in one isolated worker process (restarting it past
 * a stage that hung or crashed). Fills *vf; never fails: what could not be
 * learnt is recorded in the stage states.
 */
void vendor_collect(const struct vendor_options *opt, struct vendor_facts *vf);

#endif
