/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_VENDOR_H
#define GDRCHECK_VENDOR_H

/*
 * Facts gathered from the vendor libraries (libcuda, libibverbs, NVML).
 *
 * The worker process writes them into a shared anonymous mapping made before
 * it forks (vendor_facts_alloc), so its pointers mean the same in both. The
 * arrays whose length comes from the node (GPUs, RDMA devices, their pairs)
 * are sized by struct vf_caps from what the node shows before the worker
 * starts; the parent reads them after the worker finished, timed out or
 * crashed, with the pointers and capacities it laid out itself.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "access/peer_msg.h"

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
	STAGE_INTERRUPTED,	/* SIGINT/SIGTERM: stopped, not run further */
	STAGE_SKIPPED_DEP,	/* not run: its library hung or crashed before */
	STAGE_DEADLINE,		/* not run: the run's --deadline was spent */
};

/* What a library printed during a stage, kept as evidence (bytes as is). */
#define VF_OUTPUT	2048

struct stage_status {
	enum stage_state state;
	char call[VF_NAME];	/* vendor call in progress (for hang/crash);
				 * STAGE_FAILED: the system call that failed */
	int signal;		/* STAGE_CRASHED */
	int err;		/* STAGE_FAILED: its errno */
	double seconds;		/* wall time of the stage */
	int pid;		/* the worker that ran it */
	double started_ms;	/* now_ms() when the worker entered it */
	double limit;		/* seconds it was allowed (STAGE_TIMEOUT) */
	bool by_deadline;	/* the run's --deadline, not --timeout, cut it */
	/* Filled by the parent from the stage's stdout/stderr pipe: the
	 * first VF_OUTPUT - 1 bytes (NUL bytes dropped), and the total. */
	char output[VF_OUTPUT];
	unsigned long long output_bytes;
	bool output_truncated;
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

/* The device attributes asked of each GPU; bits of cuda_gpu.attr_unanswered. */
enum cu_attr_slot {
	CU_SLOT_CC_MAJOR,
	CU_SLOT_CC_MINOR,
	CU_SLOT_GDR,
	CU_SLOT_DMABUF,
	CU_SLOT_FLUSH,
	CU_SLOT_ORDERING,
	CU_SLOT_VMM_GDR,
	CU_SLOT_COMPUTE_MODE,
};
#define CU_SLOT_BIT(slot) (1u << (slot))

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
	int compute_mode;		/* CU_COMPUTEMODE_*; a capture before it: unknown */
	struct cu_call attr_call;	/* last failing attribute query */
	/*
	 * CU_SLOT_BIT()s of the attributes that gave no value (query failed
	 * or never ran): the values above are then CU_ATTR_UNKNOWN, which a
	 * driver may also return as a value.
	 */
	unsigned int attr_unanswered;

	/* The DMA-BUF export check (mechanism layer). */
	struct cu_call ctx_retain;
	struct cu_call alloc;
	struct cu_call export_call;
	unsigned long long export_size;
	int ptr_gdr_capable;		/* CU_ATTR_UNKNOWN if not asked */
	struct cu_call enum_call;	/* a failed cuDeviceGet/PCIBusId/TotalMem */
	char enum_fn[40];		/* which of them */
	bool complete;			/* every query of this GPU returned */
	struct cu_call setup_call;	/* a failed cuCtxSetCurrent (export) */
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
	struct cu_call version_call;	/* cuDriverGetVersion */
	int driver_version;		/* 0 if unknown */
	struct cu_call count_call;
	int count;			/* GPUs CUDA enumerated */
	int gpus_recorded;		/* entries valid in gpus[] */
	struct cuda_gpu *gpus;		/* vf_caps.gpus entries */
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
	/*
	 * libmlx5 (access/mlx5.c), asked only when it loaded: NCCL's Data
	 * Direct detection (net_ib init.cc, NCCL >= 2.27.3).
	 */
	int mlx5;			/* mlx5dv_is_supported: 1, 0, -1 not asked */
	bool dd_probe_run;		/* mlx5dv_reg_dmabuf_mr(fd -1, 0) */
	int dd_probe_errno;
	bool dd_path_called;		/* mlx5dv_get_data_direct_sysfs_path */
	int dd_path_rc;			/* 0, or the errno it returned */
	char dd_path[VF_TEXT];		/* "/devices/pci.../0000:bb:dd.f" */
};

struct verbs_facts {
	struct lib_facts lib;
	bool have_reg_dmabuf_mr;	/* ibv_reg_dmabuf_mr@IBVERBS_1.12 */
	bool have_reg_mr_iova2;		/* ibv_reg_mr_iova2@IBVERBS_1.8 */
	bool have_query_gid_ex;		/* _ibv_query_gid_ex@IBVERBS_1.11 */
	struct lib_facts mlx5_lib;	/* libmlx5.so.1 (optional) */
	bool have_mlx5_is_supported;	/* mlx5dv_is_supported@MLX5_1.8 */
	bool have_dd_sysfs_path;	/* ..get_data_direct_sysfs_path@MLX5_1.25 */
	bool have_mlx5_reg_dmabuf_mr;	/* mlx5dv_reg_dmabuf_mr@MLX5_1.25 */
	bool list_called;
	int list_errno;			/* ibv_get_device_list NULL -> errno */
	int name_errno;			/* ibv_get_device_name NULL -> errno */
	int count;			/* devices listed; > vf_caps.nics: the
					 * rest not recorded */
	struct verbs_nic *nics;		/* vf_caps.nics entries */
};

/* One memory registration: how it went and what it cost. */
struct mr_result {
	bool tried;
	bool ok;
	int err;		/* errno of the failed registration */
	char call[VF_NAME];	/* which call failed (or "") */
	double ms_cold;		/* first registration */
	double ms_warm;		/* the same range registered again */
	double ms_dereg;
	unsigned int lkey, rkey;
	bool relaxed_ordering;	/* IBV_ACCESS_RELAXED_ORDERING was asked */
	/* mlx5dv_reg_dmabuf_mr(.., MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT)
	 * instead of ibv_reg_dmabuf_mr: a Data Direct device, as NCCL. */
	bool data_direct;
};

/*
 * What a data check found in a transfer's target (see access/reg.c): every
 * transfer writes its own pattern into memory poisoned just before.
 */
enum dp_fault {
	DPF_NONE = 0,
	DPF_NOT_LANDED,		/* the target still holds what it held before */
	DPF_PARTIAL,		/* part of the pattern, the rest still poison */
	DPF_STALE,		/* a READ returned earlier GPU contents */
	DPF_CORRUPT,		/* other bytes */
	DPF_STRAY,		/* bytes landed outside the range asked for */
};

/* The loopback RDMA transfer through one GPU MR. */
struct dp_result {
	bool tried;
	bool ok;
	char step[40];		/* where it failed: "ibv_create_qp", "WRITE" */
	int err;		/* errno of a failed verbs call */
	int wc_status;		/* completion status, -1 when none */
	bool timeout;		/* no completion within the deadline */
	bool write_ok, read_ok;
	bool verified_read;	/* READ returned the pattern */
	bool verified_gpu;	/* cuMemcpyDtoH saw the pattern */
	double gbps;		/* RDMA WRITE bandwidth */
	struct cu_call dtoh;	/* a failed cuMemcpyDtoH of the check */
	struct cu_call htod;	/* a failed cuMemcpyHtoD (poison, pattern) */
	int write_fault;	/* enum dp_fault: the WRITE, seen in GPU memory */
	int read_fault;		/* the READ, seen in host memory */
	int fault_round;	/* verification round of the fault (0-based) */
	bool read_own_pattern;	/* the READ checked a pattern of its own */
	int iters;
	unsigned long long bytes;
};

#define KMSG_MAX_LINES 8

struct reg_pair {
	int gpu;		/* CUDA ordinal */
	char nic[64];
	int port;		/* 0: no usable port */
	int gid_index;		/* RoCE: the RoCE v2 GID used; -1 on IB */
	int link_layer;		/* IBV_LINK_LAYER_* */
	char skip[192];		/* why the pair was not tried, or "" */
	/* Registered, but no transfer: neither on a rail of its GPU nor its
	 * device's nearest GPU (plan_transfers; --every-pair: never). */
	bool dp_off_rail;
	/* Not registered at all: neither a transfer pair (above) nor one of
	 * its device's first two GPUs (GPU-to-GPU); the report infers it from
	 * a proven pair of its GPU (plan_registrations; --every-pair: never). */
	bool reg_inferred;
	int gpu_rc;		/* CUresult that left its GPU without a buffer */
	char gpu_fn[40];	/* the call that returned it */
	struct cu_call export_call;	/* dma-buf export of the range */
	/* cuMemGetHandleForAddressRange flags of both exports:
	 * CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE as NCCL's gdrMode PCI. */
	unsigned int export_flags;
	struct mr_result peermem;	/* ibv_reg_mr on the GPU pointer */
	struct mr_result dmabuf;	/* ibv_reg_dmabuf_mr on the fd */
	struct dp_result dp_peermem;
	struct dp_result dp_dmabuf;
	/* The same on the GPU's VMM buffer (reg_vmm_gpu), when it has one. */
	struct cu_call vmm_export_call;
	struct mr_result vmm_peermem;
	struct mr_result vmm_dmabuf;
	struct dp_result dp_vmm_peermem;
	struct dp_result dp_vmm_dmabuf;
};

/* Why a GPU has no VMM buffer (reg_vmm_gpu.skip). */
enum vmm_skip {
	VMMS_NOT_RUN = 0,	/* no GPU context or buffer (see reg.plan) */
	VMMS_TRIED,		/* set-up ran: see fail_fn / ok */
	VMMS_NO_API,		/* libcuda lacks a cuMem* VMM entry point */
	VMMS_ATTR_FAILED,	/* cuDeviceGetAttribute failed (attr_call) */
	VMMS_UNSUPPORTED,	/* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0 */
	VMMS_GDR_UNSUPPORTED,	/* GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0 */
};

/*
 * A GPU's NCCL-style VMM buffer (cuMemCreate + cuMemMap + cuMemSetAccess,
 * access/reg.c vmm_setup).
 */
struct reg_vmm_gpu {
	int skip;			/* enum vmm_skip */
	char missing[VF_TEXT];		/* VMM_NO_API: the absent symbols */
	int attr;			/* VMM_ATTR_FAILED: which attribute */
	struct cu_call attr_call;
	bool ok;			/* mapped with access set */
	char fail_fn[VF_NAME];		/* the cuMem* call that failed */
	struct cu_call fail;
	unsigned long long granularity;
	unsigned long long size;	/* bytes created and mapped */
	bool gdr_capable_flag;		/* allocFlags.gpuDirectRDMACapable */
};

struct reg_nic {
	char nic[64];
	int open_err;
	int pd_err;
	struct mr_result host;	/* host-memory MR: the control */
	bool g2g_tried;		/* GPU-to-GPU RDMA WRITE between two MRs */
	bool g2g_ok;
	int g2g_src, g2g_dst;	/* CUDA ordinals */
	int g2g_fault;		/* enum dp_fault, when the WRITE completed */
	char g2g_error[96];
};

struct reg_facts {
	bool ran;
	bool cuda;			/* GPUs were part of it */
	unsigned long long bytes;	/* buffer size per GPU */
	int gpus_allocated;
	struct cu_call alloc_fail;	/* first failed GPU set-up call */
	char alloc_fn[VF_NAME];		/* which call that was */
	int npairs;
	bool pairs_truncated;		/* more pairs than vf_caps.pairs */
	struct reg_pair *pairs;		/* vf_caps.pairs entries */
	int nnics;
	struct reg_nic *nics;		/* vf_caps.nics entries */
	/* Per CUDA ordinal (< cuda.gpus_recorded); vf_caps.gpus entries. */
	struct reg_vmm_gpu *vmm;
	bool kmsg_readable;
	int kmsg_errno;
	int kmsg_count;			/* new lines of interest */
	char kmsg[KMSG_MAX_LINES][160];
};

/* NVML: what one NVLink of a GPU answered. */
#define NV_MAX_LINKS	18	/* NVML_NVLINK_MAX_LINKS */
#define NV_UNKNOWN	(-1)

struct nvml_link {
	int state_rc;		/* nvmlDeviceGetNvLinkState; NV_UNKNOWN: not asked */
	int active;		/* 1 active, 0 inactive, NV_UNKNOWN */
	int remote_rc;		/* ..RemotePciInfo_v2; NV_UNKNOWN: not asked */
	char remote_pci[32];	/* normalised 0000:bb:dd.f, or "" */
	unsigned int remote_device_id;	/* pciDeviceId: device << 16 | vendor */
	int type_rc;		/* ..RemoteDeviceType; NV_UNKNOWN: not asked */
	int remote_type;	/* NVML_NVLINK_DEVICE_TYPE_*, NV_UNKNOWN */
};

struct nvml_gpu {
	int index;			/* NVML's own index */
	char uuid[VF_NAME];		/* "GPU-...", or "" */
	char pci[32];			/* normalised 0000:bb:dd.f, or "" */
	struct cu_call fail;		/* first failed query of this GPU */
	char fail_fn[48];		/* which call that was */
	int links_asked;		/* links[] entries filled */
	struct nvml_link links[NV_MAX_LINKS];
	int c2c_rc;			/* nvmlDeviceGetC2cModeInfoV, NV_UNKNOWN */
	int c2c;			/* isC2cEnabled: 1, 0, NV_UNKNOWN */
	bool complete;			/* every query of this GPU returned */
};

/* struct cu_call is reused for NVML calls: rc is an nvmlReturn_t. */
struct nvml_facts {
	struct lib_facts lib;
	bool have_remote_type;		/* nvmlDeviceGetNvLinkRemoteDeviceType */
	bool have_c2c;			/* nvmlDeviceGetC2cModeInfoV */
	struct cu_call init;		/* nvmlInit_v2 */
	char driver_version[80];	/* nvmlSystemGetDriverVersion, or "" */
	struct cu_call count_call;	/* nvmlDeviceGetCount_v2 */
	int count;			/* GPUs NVML enumerated */
	int gpus_recorded;		/* entries valid in gpus[] */
	struct cu_call shutdown;	/* nvmlShutdown */
	struct nvml_gpu *gpus;		/* vf_caps.gpus entries */
};

enum worker_stage {
	WSTAGE_CUDA = 0,	/* libcuda: init, attributes */
	WSTAGE_CUDA_EXPORT,	/* libcuda: allocate + DMA-BUF export */
	WSTAGE_VERBS,		/* libibverbs: devices, provider probe */
	WSTAGE_NVML,		/* NVML: UUIDs, NVLink links and peers, C2C */
	WSTAGE_REGISTRATION,	/* both: MRs on GPU memory, loopback RDMA */
	/* libcuda: release the primary contexts. Bounded like the others,
	 * but listed in the report only when it did not finish. */
	WSTAGE_RELEASE,
	/* both: two-node mode's transfers with the other node (peer_run.c),
	 * in a worker run of its own after the gates (probes/peer_session.c);
	 * last, so a capture's stages keep their places */
	WSTAGE_PEER,
	WSTAGE_COUNT,
};

/*
 * Two-node mode (gdrcheck --listen / --peer): what the transfers over one
 * rail with one mechanism found, on this side (access/peer_run.c). "Ours":
 * what this side posted; "the peer's": what the other side posted, as this
 * side saw it land, or as the other side said (peer_said_*).
 */
#define PEER_MAX_RAILS	64
#define PEER_NMECH	2	/* [0] DMA-BUF, [1] peermem */

struct peer_xfer {
	bool tried;
	bool ok;		/* every step and check passed, both ways */
	char step[48];		/* where it stopped: "ibv_modify_qp(RTR)" */
	int err;		/* errno of a failed call */
	int wc_status;		/* completion status, -1 none */
	bool timeout;		/* no completion in time */
	struct cu_call cu;	/* a failed CUDA call of the set-up or check */
	char peer_error[256];	/* the other side stopped: its words */
	int peer_status;	/* its WRITE/READ: 0, a wc status, -errno */
	bool connected;		/* both QPs reached RTS */
	bool write_ok, read_ok;	/* our WRITE / READ completed */
	bool write_verified;	/* the peer found our pattern in its GPU */
	bool read_verified;	/* our READ brought the peer's pattern */
	bool peer_write_verified;	/* the peer's WRITE landed here */
	bool peer_read_verified;	/* its READ got our pattern (its word) */
	int fault;		/* enum dp_fault of the failed check */
	double gbps;		/* our WRITE bandwidth */
	double peer_gbps;	/* the peer's (its word) */
	double lat_us;		/* median 8-byte WRITE completion */
	unsigned long long bytes;	/* moved by our bandwidth run */
	unsigned int path_mtu;	/* bytes: the smaller of both active MTUs */
	struct peer_endpoint local, remote;
	bool have_remote;
};

struct peer_stage_facts {
	bool ran;
	int nrails;
	struct {
		struct peer_xfer mech[PEER_NMECH];
	} rails[PEER_MAX_RAILS];
	/* The channel broke inside the stage: why (peer_conn.err). */
	int conn_err;
	char conn_error[320];
};

/* Entries of the node-sized arrays of struct vendor_facts. */
struct vf_caps {
	int gpus;	/* cuda.gpus, nvml.gpus, reg.vmm */
	int nics;	/* verbs.nics, reg.nics */
	int pairs;	/* reg.pairs */
};

/* Largest capacities vendor_facts_alloc() accepts. */
#define VF_CAPS_MAX_GPUS	4096
#define VF_CAPS_MAX_NICS	65536
#define VF_CAPS_MAX_PAIRS	(1 << 20)

struct vendor_facts {
	struct vf_caps cap;
	/* The one block the arrays live in (vendor_facts_alloc). */
	void *arena;
	size_t arena_size;
	bool arena_shared;
	struct stage_status stage[WSTAGE_COUNT];
	struct cuda_facts cuda;
	struct verbs_facts verbs;
	struct nvml_facts nvml;
	struct reg_facts reg;
	struct peer_stage_facts peer;
	/* Set by the parent once NVML's worker (which runs beside the main
	 * one) is over, or never started: its answers are final. */
	volatile bool nvml_settled;
	/* Written by a worker that finished its lane's stages, just before it
	 * exits: its pid (index 0 the main lane, 1 NVML's). The parent takes
	 * the lane's facts as final then and reaps the worker after the
	 * report, so the driver's teardown of the process (tens of ms on a
	 * GPU node) overlaps the gates instead of preceding them. */
	int lane_done[2];
	/* Not recorded: how these facts came (access/vendor_json.h). A
	 * --sysroot replay of a capture's vendor facts: the file read. */
	char replayed_from[VF_TEXT];
	/* A capture's vendor facts that could not be replayed: why. */
	char replay_error[VF_TEXT];
};

/*
 * Give *vf (zeroed first) arrays of @caps entries, zero-filled, in one block:
 * a MAP_SHARED anonymous mapping when @shared (for a worker forked after
 * this), else heap memory. 0, or -errno (EINVAL: a capacity out of range).
 */
int vendor_facts_alloc(struct vendor_facts *vf, const struct vf_caps *caps,
		       bool shared);

/* Point the arrays of *vf into its arena again, from its cap, and bound
 * the counts of what they hold by it (after the header was copied from
 * memory a worker could write). */
void vendor_facts_layout(struct vendor_facts *vf);

/* Entries to read of a node-sized array: @count, within [0, @cap]. */
static inline int vf_upto(int count, int cap)
{
	return count < 0 ? 0 : count > cap ? cap : count;
}

/* Release the arrays; *vf is zeroed. */
void vendor_facts_free(struct vendor_facts *vf);

/* What the worker needs to know (copied into the child before fork). */
struct sysroot;

struct vendor_options {
	const char *libcuda;		/* NULL = default soname */
	const char *libibverbs;
	const char *libnvml;
	const char *libmlx5;
	double stage_timeout;		/* seconds */
	/* The whole run's budget (--deadline): now_ms() values; no stage
	 * runs past run_deadline_ms. 0: none. */
	double run_started_ms;
	double run_deadline_ms;
	bool skip_cuda;
	bool skip_export;
	bool skip_verbs;
	bool skip_nvml;
	bool skip_mlx5;
	/* NCCL would expose no `<dev>_dma` device (NCCL_IB_DATA_DIRECT=0,
	 * or an NCCL before 2.27.3): register as plain verbs. */
	bool no_data_direct;
	bool skip_registration;
	bool no_alloc;
	bool no_datapath;
	bool every_pair;		/* transfer on every pair, not the rails */
	unsigned long long reg_bytes;	/* buffer per GPU for registration */
	/* Two-node mode's rails to test (access/peer_run.h); NULL: none,
	 * the WSTAGE_PEER stage does not run. */
	const struct peer_plan *peer_plan;
	struct sysroot *sysroot;	/* the tree /dev/kmsg and GIDs are read in */
	/* gdrcheck's own host-side helper (the kallsyms pass), running
	 * beside the worker: the orphan sweep leaves it alone. 0: none. */
	pid_t spare_child;
	/* Host work that needs no vendor answer (reading the PCI tree), run
	 * by the parent once while the workers wait on the driver; NULL:
	 * none. Called from the supervising thread, after the forks. */
	void (*meanwhile)(void *arg);
	void *meanwhile_arg;
	/* Set by the worker supervisor once a library hung or crashed: later
	 * stages do not call into it again (a wedged cuInit would hang each
	 * time). */
	bool cuda_poisoned;
	bool verbs_poisoned;
};

const char *stage_name(enum worker_stage s);

/* Set by the SIGINT/SIGTERM handler: stop the vendor stages, report. */
extern volatile sig_atomic_t vendor_interrupted;

/*
 * Run every vendor stage in isolated worker processes: NVML's stage in one,
 * every other stage in another running at the same time (restarted past a
 * stage that hung or crashed). Fills *vf; never fails: what could not be
 * learnt is recorded in the stage states.
 */
void vendor_collect(const struct vendor_options *opt, struct vendor_facts *vf);

/*
 * Reap the workers that finished their stages and were left exiting by
 * vendor_collect() (see lane_done): each is killed with its process group
 * and waited for, at most a grace period. Called once the report is out,
 * and by vendor_collect() before it starts new workers.
 */
void vendor_reap_finished(void);

#endif
