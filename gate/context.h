/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CONTEXT_H
#define GDRCHECK_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "access/pci.h"
#include "access/vendor.h"
#include "decode/parse.h"
#include "decode/pcie.h"
#include "core/result.h"
#include "gate/catalog.h"

enum require_policy {
	REQUIRE_ANY = 0,
	REQUIRE_DMABUF,
	REQUIRE_PEERMEM,
	REQUIRE_NCCL,		/* the nccl path (issue 14) */
	/*
	 * The default: the node's workload decides. nccl when the NCCL model
	 * found NCCL for the node (a libnccl.so.2, --libnccl/--nccl-version,
	 * or NCCL_* settings), else any (engine/policy.c policy_resolve).
	 */
	REQUIRE_AUTO,
};

enum out_format {
	FMT_TEXT = 0,
	FMT_JSON,
	FMT_JUNIT,
	FMT_PROMETHEUS,
};

struct options {
	enum out_format format;
	bool quiet;
	bool redact;
	bool every_gpu;			/* policy: every GPU ready, nearest NIC */
	int max_distance;		/* policy: enum topo_class, -1 none */
	bool warn_fails;		/* policy: any WARN fails the gate */
	const char *capture;		/* --capture FILE.tar.gz */
	gate_mask gates;		/* --only/--skip, parsed once: what runs */
	bool verbose;
	bool no_alloc;
	bool no_datapath;
	bool every_pair;		/* the transfer on every pair */
	bool list_gates;
	bool list_codes;		/* --list-codes */
	int color;			/* -1 auto, 0 never, 1 always */
	const char *output;
	const char *sysroot;
	const char *libcuda;
	const char *libibverbs;
	const char *libnvml;
	const char *libmlx5;
	const char *libpci;
	const char *libnccl;		/* --libnccl: read for its version */
	int nccl_version;		/* --nccl-version, NCCL_VER(); 0 none */
	const char *pci_dump;		/* lspci -xxxx capture to read */
	double timeout;			/* seconds per vendor stage */
	double deadline;		/* seconds for the whole run */
	unsigned long long reg_bytes;	/* GPU buffer for registrations */
	enum require_policy require;
	/* --exempt-port LIST, each occurrence (topo.rails) */
#define MAX_EXEMPT_OPTS 64
	const char *exempt[MAX_EXEMPT_OPTS];
	int nexempt;
	/* Two-node mode (probes/peer_session.c). */
	const char *listen;		/* --listen [ADDR:]PORT */
	const char *peer;		/* --peer HOST[:PORT] */
	const char *token;		/* --token, --token-file, env or Slurm */
	const char *token_source;	/* which of them, in words */
	char token_buf[257];
	const char *token_file;
	const char *pairs;		/* --pairs LIST; NULL: every rail */
	double min_bandwidth;		/* --min-bandwidth FRACTION */
	bool deadline_given;
};

/* gdrcheck's own settings file, below the sysroot (topo.rails). */
#define GDRCHECK_CONF "/etc/gdrcheck/gdrcheck.conf"


/* What is on the node, merged from sysfs and the vendor libraries. */
struct inv_gpu {
	char pci[32];
	int cuda;		/* index in vendor_facts.cuda.gpus, -1 if none */
	char uuid[96];		/* from NVML, matched by PCI address; or "" */
	bool in_sysfs;
	unsigned int pci_device;
	int subject;
};

struct inv_port {
	int num;
	int subject;
};

struct inv_nic {
	char name[64];
	char pci[32];		/* empty: no PCI function found */
	char pci_via[80];	/* "device", or "netdev eth0" for soft-RoCE */
	int pci_err;		/* errno following its device link (ELOOP) */
	int ports_err;		/* errno listing its ports */
	int verbs;		/* index in vendor_facts.verbs.nics, -1 none */
	struct inv_port *ports;
	size_t nports;
	int subject;
};

/* A GPU x RDMA device pair and the PCIe path between them. */
struct inv_pair {
	int gpu;
	int nic;
	int subject;
	int node_gpu;		/* pcitree indices, -1 when not in the tree */
	int node_nic;
	struct pcipath path;
	int reg;		/* its vendor_facts.reg.pairs entry, -1 none */
};

struct inventory {
	struct inv_gpu *gpu;
	size_t ngpu;
	struct inv_nic *nic;
	size_t nnic;
	struct inv_pair *pair;
	size_t npair;
	int pci_errno;		/* reading /sys/bus/pci/devices failed */
	int ib_errno;		/* reading /sys/class/infiniband failed */
	size_t pci_unreadable;	/* functions whose vendor/class is unreadable */
	char first_pci_unreadable[96];	/* "BDF/attr: error" */
};

/* Which subject a gate function is asked about. */
struct target {
	int gpu;		/* index in inventory.gpu, or -1 */
	int nic;		/* index in inventory.nic, or -1 */
	int port;		/* index in that nic's ports, or -1 */
	int pair;		/* index in inventory.pair, or -1 */
};

/*
 * What was read once per tree node: config space (len bytes, or -errno),
 * the ACS registers decoded from it (bridges), and the link from sysfs.
 * Gates over GPU x NIC pairs look these up instead of re-reading.
 */
struct pci_cfg {
	int len;
	uint8_t bytes[PCI_CFG_MAX];
	struct acs_regs acs;
	char acs_unreadable[96];	/* why ACS cannot be decoded, or "" */
	bool link_known;
	char cur_speed[32], max_speed[32];
	int cur_width, max_width;
	double cur_gts, max_gts;	/* speeds, when in their domain */
	char link_bad[96];	/* "attr=raw" out of its domain, or "" */
};

/*
 * What the probes read once per run and share between gates: kept in the
 * context, so a second context (another sysroot) reads its own. Filled and
 * released by probes/ (probe_caches_free).
 */
struct uverbs_map {		/* uverbsN -> ibdev (probes/nic.c) */
	bool loaded;
	size_t n;
	char (*node)[32];
	char (*ibdev)[64];
	int err;		/* -errno: the class or an ibdev was unreadable */
	char err_path[256];
};

struct nv_module {		/* /proc/driver/nvidia/version (probes/common.c) */
	bool read;
	int ret;
	enum nv_flavour fl;
	char version[64];
};

/*
 * The platform class (issue 16 item 2): facts that decide which platform
 * rules apply, computed once per run by ctx_platform() (probes/
 * platform_class.c) and shown by the platform.class gate. Rules read it
 * instead of re-deriving the architecture or the IOMMU driver; a rule that
 * does not apply says so with describe ("does not apply to <describe>").
 * Every fact has an "unknown" value: unreadable is never a guess.
 */
enum plat_arch { PLAT_ARCH_UNKNOWN = 0, PLAT_ARCH_X86_64, PLAT_ARCH_AARCH64,
		 PLAT_ARCH_OTHER };
enum plat_iommu { PLAT_IOMMU_UNKNOWN = 0, PLAT_IOMMU_NONE, PLAT_IOMMU_INTEL,
		  PLAT_IOMMU_AMD, PLAT_IOMMU_SMMU_V3, PLAT_IOMMU_ARM_SMMU,
		  PLAT_IOMMU_OTHER };
enum plat_kind {
	PLAT_KIND_UNKNOWN = 0,
	PLAT_KIND_X86,			/* x86_64: Intel/AMD host or guest */
	PLAT_KIND_GRACE,		/* Grace/Vera root ports, no Direct-NIC */
	PLAT_KIND_GRACE_DIRECT_NIC,	/* Grace + ConnectX Data Direct (GB200/GB300) */
	PLAT_KIND_ARM64,		/* aarch64 without Grace root ports */
	PLAT_KIND_OTHER,
};

struct platform_class {
	bool known;			/* ctx_platform() filled it */
	enum plat_kind kind;
	enum plat_arch arch;
	char machine[32];		/* "x86_64", "aarch64"; "" unknown */
	char cpu[64];			/* "GenuineIntel", "implementer 0x41 part 0xd4f" */
	bool grace;			/* a Grace root port (10de:22b1/22b2/22b8) */
	bool vera;			/* a Vera root port (10de:2f95/2f96) */
	char grace_rp[20];		/* the first such root port */
	bool cx8;			/* a ConnectX-8 PF (15b3:1023) */
	char cx8_pf[20];
	bool cx_dma;			/* a ConnectX Data Direct function (15b3:2100) */
	char cx_dma_fn[20];
	bool direct_nic;		/* cx_dma below a Grace/Vera root port */
	bool kernel_known;
	struct kver kernel;
	char release[96];
	enum plat_iommu iommu;
	char iommu_unit[64];		/* first /sys/class/iommu entry */
	int vm;				/* 1 guest, 0 bare metal, -1 unknown */
	char vm_why[96];		/* the fact that said so */
	char src_machine[48], src_cpu[48];	/* where each fact came from */
	char describe[112];		/* "x86_64 (GenuineIntel)", "Grace Direct-NIC ..." */
};

#define CTX_AT_END_MAX 4	/* probes keeping state across gates */

/*
 * One run: everything a gate may read or remember. Nothing of it is
 * process-wide, so two contexts over two sysroots can run in one process
 * (tests/unit/test_context.c).
 */
struct gdr_ctx {
	const struct options *opt;
	const struct vendor_facts *vf;
	struct inventory inv;
	struct pcitree tree;
	struct pci_cfg *cfg;		/* parallel to tree.n; bridges only */
	struct pci_lib *pci;		/* this run's libpci (access/pci.h) */
	int pci_open_err;		/* libpci set-up, 0 = ready */
	bool pci_read;			/* pci and tree above are set */
	struct sysroot *sr;		/* the tree every probe reads */
	struct report *rep;
	const struct gate_desc *gate;	/* gate being run */
	double mark_ms;			/* start of the current result */
	int host;			/* host subject index */
	struct uverbs_map uverbs;
	struct nv_module nv_module;
	struct nccl_state *nccl;	/* probes/nccl_state.c, built on first use */
	struct peer_session *peer;	/* two-node mode, probes/peer_session.c */
	/*
	 * Working state a gate keeps for later gates registers how it is
	 * freed (ctx_at_end); the engine runs these after the last gate
	 * without knowing whose state it is.
	 */
	void (*at_end[CTX_AT_END_MAX])(struct gdr_ctx *ctx);
	int nat_end;
	struct platform_class platform;	/* ctx_platform(), computed once */
	/* /proc/kallsyms read while the vendor worker ran (gdrcheck.c),
	 * joined; NULL: mech.peermem_api reads it itself. */
	const struct ksym_prefetch *ksym;
};

/* What one pass over /proc/kallsyms found (probes/platform_rules.c). */
struct ksym_find {
	long lines;		/* symbol lines seen */
	bool found;
	bool zero_addr;		/* its address reads as 0 (kptr_restrict) */
	char module[64];	/* "[ib_core]" -> "ib_core"; "" when built in */
	char kept[160];		/* the line, its address masked (--capture) */
};

/* Record a result for the gate being run, timed since the previous one. */
struct result *emit(struct gdr_ctx *ctx, int subject, enum gdr_status st,
		    enum reason_code code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * Run fn(ctx) once after the last gate (ctx_end), e.g. to free state a
 * probe built on first use; registering the same fn twice runs it once.
 */
void ctx_at_end(struct gdr_ctx *ctx, void (*fn)(struct gdr_ctx *ctx));
/* The registered hooks, latest first; the list is then empty. */
void ctx_end(struct gdr_ctx *ctx);

void inventory_build(struct gdr_ctx *ctx);
void inventory_free(struct inventory *inv);
void pcitree_build(struct gdr_ctx *ctx);
void pcitree_free(struct gdr_ctx *ctx);

#endif
