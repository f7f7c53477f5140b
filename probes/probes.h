/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PROBES_H
#define GDRCHECK_PROBES_H

/*
 * Gate functions, one file per layer. Each reads facts through the access
 * layer (sysroot files, vendor facts from the worker) and records results
 * with emit(). Probes never print.
 */
#include <stdint.h>

#include "gate/context.h"
#include "decode/parse.h"

/* host */
void gate_host_kernel(struct gdr_ctx *ctx, const struct target *t);
void gate_host_memlock(struct gdr_ctx *ctx, const struct target *t);
void gate_host_privileges(struct gdr_ctx *ctx, const struct target *t);
void gate_host_container(struct gdr_ctx *ctx, const struct target *t);
void gate_host_kconfig(struct gdr_ctx *ctx, const struct target *t);

/* gpu */
void gate_gpu_driver(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_libcuda(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_cuinit(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_devices(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_visible(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_gdr_attr(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_dmabuf_attr(struct gdr_ctx *ctx, const struct target *t);
void gate_gpu_nvml(struct gdr_ctx *ctx, const struct target *t);

/* nic */
void gate_nic_libibverbs(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_kernel_verbs(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_devices(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_netns(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_uverbs(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_port(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_gid(struct gdr_ctx *ctx, const struct target *t);
void gate_nic_data_direct(struct gdr_ctx *ctx, const struct target *t);

/* mechanism */
void gate_mech_peermem(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_dmabuf_module(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_dmabuf_verbs(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_dmabuf_provider(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_dmabuf_export(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_gdrcopy(struct gdr_ctx *ctx, const struct target *t);
void gate_mech_peermem_api(struct gdr_ctx *ctx, const struct target *t);

/*
 * mech.peermem_api's pass over /proc/kallsyms (tens of ms on a large
 * kernel) in a child process while the vendor worker waits on cuInit:
 * start it before, join it after (waits at most 5 s more), hand it to the
 * context (ctx->ksym). NULL when no child could start (the gate then reads
 * the file itself).
 */
struct ksym_prefetch *ksym_prefetch_start(struct sysroot *sr);
pid_t ksym_prefetch_pid(const struct ksym_prefetch *kp);

/* The versions header of the report's meta (probes/versions.c), after
 * the gates. */
void versions_collect(struct gdr_ctx *ctx);
void ksym_prefetch_join(struct ksym_prefetch *kp);
void ksym_prefetch_free(struct ksym_prefetch *kp);

/* topology */
void gate_topo_tree(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_path(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_nccl_config(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_nccl(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_rails(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_best_nic(struct gdr_ctx *ctx, const struct target *t);
void gate_topo_nvlink(struct gdr_ctx *ctx, const struct target *t);

/* platform */
void gate_platform_bar1(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_iommu(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_acs(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_link(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_bridges(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_smmu(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_iommu_group(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_class(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_direct_acs(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_provider(struct gdr_ctx *ctx, const struct target *t);
void gate_platform_vm(struct gdr_ctx *ctx, const struct target *t);
/* probes/providers.c: the RDMA device is an AWS EFA (driver "efa"). */
bool nic_is_efa(struct gdr_ctx *ctx, const struct inv_nic *n);
/* probes/providers.c: "an AWS EFA" etc. for a device sysfs shows is no mlx5. */
const char *nic_non_mlx5(struct gdr_ctx *ctx, const struct inv_nic *n);
/* probes/nccl_state.c: what ncclIbGetGidIndex reads (version, GID index, family). */
void nccl_gid_settings(struct gdr_ctx *ctx, int *ver, int64_t *gid_index,
		       int *family);
/* probes/nccl_state.c: NCCL uses pair's NIC as `<dev>_dma` (Data Direct). */
bool nccl_pair_dd(struct gdr_ctx *ctx, int pair);
/* probes/nccl_state.c: NCCL exports pair's dma-buf with the PCIe mapping type. */
bool nccl_pair_pcie_mapping(struct gdr_ctx *ctx, int pair);
/*
 * probes/nccl_state.c: NCCL's path type name ("PXB") where merging Broadcom
 * switches (or a virtual switch link) brings pair within PXB; else NULL.
 */
const char *nccl_pair_bcm_near(struct gdr_ctx *ctx, int pair);
/* probes/providers.c: every RDMA device an EFA; with_p2p name a provider. */
bool node_efa_only(struct gdr_ctx *ctx, size_t *with_p2p, char *first,
		   size_t len);

/* registration and datapath */
void gate_reg_plan(struct gdr_ctx *ctx, const struct target *t);
void gate_reg_host_mr(struct gdr_ctx *ctx, const struct target *t);
void gate_reg_peermem(struct gdr_ctx *ctx, const struct target *t);
void gate_reg_dmabuf(struct gdr_ctx *ctx, const struct target *t);
void gate_data_peermem(struct gdr_ctx *ctx, const struct target *t);
void gate_data_dmabuf(struct gdr_ctx *ctx, const struct target *t);
void gate_reg_vmm_peermem(struct gdr_ctx *ctx, const struct target *t);
void gate_reg_vmm_dmabuf(struct gdr_ctx *ctx, const struct target *t);
void gate_data_vmm_peermem(struct gdr_ctx *ctx, const struct target *t);
void gate_data_vmm_dmabuf(struct gdr_ctx *ctx, const struct target *t);
void gate_data_nccl(struct gdr_ctx *ctx, const struct target *t);
void gate_data_gpu_to_gpu(struct gdr_ctx *ctx, const struct target *t);

/*
 * The NCCL model's question: was an NCCL-style VMM buffer (cuMemCreate,
 * gpuDirectRDMACapable) of inventory pair @pair registered through @path
 * and proven by a verified loopback transfer? Read from the worker's
 * facts, so it answers the same before and after the gates ran.
 */
enum vmm_path { VMM_PATH_PEERMEM, VMM_PATH_DMABUF };
enum vmm_proof_state {
	VMM_NOT_TRIED = 0,	/* no VMM buffer, no port, --no-datapath... */
	VMM_PROVEN,		/* registered, transfer verified */
	VMM_FAILED,		/* a registration or the transfer failed */
};
int vmm_proof(const struct gdr_ctx *ctx, int pair, enum vmm_path path);
void gate_data_kmsg(struct gdr_ctx *ctx, const struct target *t);

/* peer.c (two-node mode) */
void gate_peer_bootstrap(struct gdr_ctx *ctx, const struct target *t);
void gate_peer_link(struct gdr_ctx *ctx, const struct target *t);
void gate_peer_connect(struct gdr_ctx *ctx, const struct target *t);
void gate_peer_transfer(struct gdr_ctx *ctx, const struct target *t);
void gate_peer_bandwidth(struct gdr_ctx *ctx, const struct target *t);

/*
 * NVLink facts from NVML (issue 14 item 1, implemented by the NVML work;
 * probes/nvlink_stub.c holds weak defaults returning -1 until it lands).
 * gpu and peers are inventory GPU indices (ctx->inv.gpu[]).
 *   gpu_nvlink_peers: writes up to max peers reached over NVLink (directly
 *     or through NVSwitch) and returns their count; -1 when unknown.
 *   gpu_is_c2c: 1 when the GPU reaches its CPU over C2C (Grace), 0 when
 *     not, -1 when unknown.
 */
int gpu_nvlink_peers(const struct gdr_ctx *ctx, int gpu, int *peers, int max);
int gpu_is_c2c(const struct gdr_ctx *ctx, int gpu);

/* Shared helpers (probes/common.c). */

/*
 * When a worker stage did not finish (hang, crash, no worker), format the
 * reason into buf and return the status to give (ST_ERROR); else ST_PASS.
 */
enum gdr_status stage_problem(const struct gdr_ctx *ctx,
			      enum worker_stage s, char *buf, size_t len);

/*
 * A --sysroot replay loads no local vendor library unless one is named
 * (named); it replays the capture's vendor answers when the capture has
 * them. When stage s of library lib (lf) is neither loaded nor replayed,
 * emit SKIP NOT_REPLAYED on the host saying why and return it (the caller
 * attaches its library's remedy); else NULL.
 */
struct result *not_replayed(struct gdr_ctx *ctx, const struct lib_facts *lf,
			    bool named, enum worker_stage s, const char *lib);

/*
 * Host facts a gate reads outside the sysroot's recorded files (a stream
 * too big or too sensitive to keep whole, the process environment, a
 * library's contents) travel in a capture as small text files
 * /gdrcheck/<name> (kallsyms, kernel-log, kconfig, libnccl; environ is
 * written by access/capture.c): the answer the gate needs, not the source.
 *   capture_replaying: --sysroot names an extracted capture (it has
 *     /gdrcheck/): such a gate reads its answer from the capture or, from
 *     a capture without it (an older gdrcheck's), says it is not replayed.
 *   capfact_read: the text of /gdrcheck/<name> (malloc'd) or NULL.
 *   capfact_write: record text as /gdrcheck/<name> when --capture is on.
 */
bool capture_replaying(struct gdr_ctx *ctx);
/*
 * getenv(name) as the node saw it: in a replay, from the capture's
 * /gdrcheck/environ (unset when the capture has none), never the replaying
 * host's. Copies the value into buf; false when unset.
 */
bool node_getenv(struct gdr_ctx *ctx, const char *name, char *buf,
		 size_t len);
char *capfact_read(struct gdr_ctx *ctx, const char *name);
void capfact_write(struct gdr_ctx *ctx, const char *name, const char *text);

/*
 * What a vendor library printed to stdout/stderr during a stage becomes
 * evidence ("library_output") on the stage's first result. Run after the
 * gates.
 */
void stage_output_evidence(struct gdr_ctx *ctx);

/* The CUDA facts for an inventory GPU, or NULL if CUDA does not see it. */
const struct cuda_gpu *ctx_cuda_gpu(const struct gdr_ctx *ctx, int gpu);
/* "EXCLUSIVE_PROCESS", "unknown" or "out of range (N)", in @buf. */
const char *gpu_compute_mode(const struct cuda_gpu *g, char *buf, size_t len);
/*
 * A GPU set-up call (@fn) returned @rc: for CUDA_ERROR_DEVICE_UNAVAILABLE
 * emit SKIP GPU_BUSY (GPU_PROHIBITED in that mode) "@what not tried: ..."
 * on @subject and return it; otherwise NULL, nothing emitted. @g may be
 * NULL (mode unknown). @fix: attach the advice (the GPU's and the host's
 * results do; its pairs' would only repeat it).
 */
struct result *gpu_unavailable(struct gdr_ctx *ctx, int subject,
			       const struct cuda_gpu *g, int rc,
			       const char *fn, const char *what, bool fix);
/*
 * probes/gpu.c: compute capability known and below 7.5 (Volta and older):
 * the open kernel module, which DMA-BUF export needs, does not drive it.
 */
bool gpu_pre_turing(const struct cuda_gpu *g);
/*
 * The result an earlier gate recorded about subject, or NULL: one fact has
 * one owner, and later gates cite it instead of deriving it again. Valid
 * until the next emit(), which may move the results: read what you need
 * first (code and reason strings stay put).
 */
const struct result *ctx_result_of(const struct gdr_ctx *ctx,
				   const char *gate, int subject);
/*
 * gpu.visible said this inventory GPU is hidden from this process on
 * purpose (CUDA_VISIBLE_DEVICES, a device cgroup): later gates that model
 * what this process's NCCL would do SKIP it, citing gpu.visible.
 */
bool ctx_gpu_hidden(const struct gdr_ctx *ctx, int gpu);
/*
 * What the registration stage did for an inventory pair, or NULL: later
 * gates' proof, which earlier gates cite instead of contradicting it.
 */
const struct reg_pair *ctx_reg_pair(const struct gdr_ctx *ctx,
				   const struct inv_pair *pr);
/* The verbs facts for an inventory NIC, or NULL if verbs does not list it. */
const struct verbs_nic *ctx_verbs_nic(const struct gdr_ctx *ctx, int nic);

/*
 * /proc/driver/nvidia/version, read and parsed once for the gates that
 * need it: 0, -errno when unreadable, -EINVAL when not in a known format.
 */
int nvidia_module(struct gdr_ctx *ctx, enum nv_flavour *fl,
		  const char **version);
/* Release what the probes cached in ctx (uverbs map, driver module). */
void probe_caches_free(struct gdr_ctx *ctx);

/* Did a CUDA stage hang or crash (so later ones skipped libcuda)? */
bool cuda_poisoned(const struct gdr_ctx *ctx, char *buf, size_t len);

/* Was the CUDA side usable at all (library + cuInit)? */
bool cuda_usable(const struct gdr_ctx *ctx);

/*
 * NVML facts (probes/nvlink.c); gpu is an inventory GPU index.
 * gpu_nvlink_peers: inventory GPU indexes of NVLink-connected GPUs (directly
 * or via NVSwitch) into peers (at most max stored); returns the count, or
 * -1 when unknown (no NVML, GPU not in NVML, a link query failed).
 * gpu_is_c2c: 1 C2C-attached (Grace), 0 not, -1 unknown.
 */
int gpu_nvlink_peers(const struct gdr_ctx *ctx, int gpu, int *peers, int max); /* inventory GPU indexes of NVLink-connected GPUs (directly or via NVSwitch); returns count, or -1 when unknown */
int gpu_is_c2c(const struct gdr_ctx *ctx, int gpu); /* 1 C2C-attached (Grace), 0 not, -1 unknown */

/*
 * The first arm-smmu-v3 unit ("smmu3.*" in /sys/class/iommu) in buf, ""
 * when none; 0, or -errno when the class cannot be listed. Rules whose
 * advice differs on Grace read it (probes/platform_rules.c).
 */
int smmu3_unit(struct sysroot *sr, char *buf, size_t len);

/*
 * The platform class (gate/context.h struct platform_class), computed on
 * first use from the sysroot and kept in ctx->platform for the run: the
 * rules that apply per class read it (probes/platform_class.c).
 */
const struct platform_class *ctx_platform(struct gdr_ctx *ctx);
/* "arm-smmu-v3", "intel-iommu (VT-d)", ... for evidence. */
const char *plat_iommu_name(enum plat_iommu i);
/*
 * On a Direct-NIC platform, the ConnectX Data Direct function below the
 * GPU's root port (the importer of its DMA, rdma_topo's cx_dma) into out:
 * 0, or -ENOENT (another class, or none there).
 */
int direct_nic_dma_of(struct gdr_ctx *ctx, const char *gpu, char *out,
		      size_t len);

#endif
