/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_RESULT_H
#define GDRCHECK_RESULT_H

/*
 * The result model: one report, many views. A probe records a result once
 * (gate, subject, status, reason code, text, remediation, typed evidence);
 * the text and JSON renderers only show it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/names.h"

struct subject {
	enum subject_kind kind;
	char id[80];		/* stable: "host", "GPU0", "mlx5_0", "mlx5_0/1" */
	char label[256];	/* human: "NVIDIA H200 (0000:00:06.0, GPU-...)" */
	char pci[32];		/* PCI address where one applies */
	char uuid[96];		/* a GPU's UUID ("GPU-..."), or "" */
	/* A GPU's or NIC's IOMMU group as platform.iommu_group read it, or
	 * "" (JSON: only when read); pair results cite it (core/fold.c). */
	char iommu_group[16];
	int parent;		/* port -> its NIC subject; -1 otherwise */
	int pair_gpu;		/* pair -> its GPU and NIC subjects; -1 */
	int pair_nic;
	int fact;		/* pair -> its row of report.facts; -1 */
};

/*
 * What the gates found about one GPU x NIC pair, typed, stored once per
 * pair subject. The probe that owns a fact sets it with fact_*() on the
 * result that establishes it (topology.c: distance and NCCL's decision,
 * platform.c: ACS); the policy and the renderers read it with
 * report_pair_fact(), never from reason text, codes or evidence keys.
 * A fact nobody set is UNKNOWN and its result -1.
 */
struct pair_fact {
	enum topo_class distance;	/* topo.path: nvidia-smi's class */
	enum pair_gdr gdr;		/* topo.nccl: does NCCL use GDR */
	enum pair_acs acs;		/* platform.acs */
	int distance_result;		/* result index that set each, -1 */
	int gdr_result;
	int acs_result;
};

enum ev_type {
	EV_STR = 0,
	EV_INT,
	EV_BOOL,
	EV_REAL,	/* measurements: times, bandwidths */
};

/* One key per result: recording a key again replaces its value. */
struct evidence {
	const char *key;
	enum ev_type type;
	union {				/* the member type names */
		char *s;
		long long i;
		bool b;
		double d;
	};
};

struct report;

/*
 * What the catalog (gate/gates.def) says about a gate. Results point at
 * it: renderers and the verdict read the gate from here, never by name.
 */
struct gate_desc {
	int index;		/* chain position, G_* */
	const char *id;		/* "nic.port" */
	enum gdr_layer layer;
	enum subject_kind scope;	/* what it is asked about, once each */
	unsigned int paths;	/* which paths a BLOCKED here closes */
	bool proof;		/* must PASS for a READY path (see below) */
	unsigned int stages;	/* worker stages it reads (1 << stage) */
	unsigned long long deps;	/* gates it builds on (1 << index) */
	const char *title;
};

/* Strings and evidence belong to the report's blocks (report_alloc). */
struct result {
	struct report *rep;	/* the report that holds this result */
	const struct gate_desc *gate;
	enum gdr_layer layer;
	unsigned int paths;	/* P_* masks this result can close */
	int subject;
	enum gdr_status status;
	const char *code;	/* static, stable reason code: its name */
	/*
	 * The same code as the catalog's C_* (gate/catalog.h), set by
	 * emit(); -1 for a result made without the catalog (unit tests).
	 * Code that decides compares this, never the name.
	 */
	int code_index;
	char *reason;
	char *remediation;	/* NULL when none */
	struct evidence *ev;
	size_t nev;
	double duration_ms;
	/*
	 * Proof gates (real registrations, real transfers): a path is READY
	 * only when they PASS; their SKIP leaves it undecided unless waived
	 * by the user (--no-datapath).
	 */
	bool proof;
	bool waived;
	/*
	 * report_fold (core/fold.c): -1 when this result is shown on its own
	 * line, else the index of the equal result that stands for it; the
	 * group's members chained by fold_next (-1 at the end), counted in
	 * its first result's fold_n.
	 */
	int fold_rep;
	int fold_next;
	int fold_n;
};

/*
 * The paths result res can close. NCCL needs one of the two mechanisms:
 * what closes both (no RDMA device, no CUDA) closes the nccl path too.
 */
static inline unsigned int result_paths(const struct result *res)
{
	return res->paths |
	       ((res->paths & P_BOTH) == P_BOTH ? P_NCCL : 0);
}


struct path_verdict {
	enum verdict verdict;
	int decisive;		/* result index naming the gate; -1 none */
	int *blockers;		/* every BLOCKED result relevant to the path */
	size_t nblockers;
	int (*ready)[2];	/* GPU and port subjects that work together */
	size_t nready;
	char summary[256];
};

/* Provisioning policy and what violated it. */
#define POLICY_MAX_VIOLATIONS 16
struct report_policy {
	bool every_gpu;
	int max_distance;	/* enum topo_class, -1 none */
	bool warn_fails;
	int nviolations;
	char violations[POLICY_MAX_VIOLATIONS][160];
};

/* How each isolated vendor stage ended (for the report and for tests). */
struct worker_meta {
	const char *stage;
	const char *state;	/* "done", "timeout", "crashed", ... */
	int pid;
	double seconds;
	char call[96];
	int signal;
};

#define REPORT_MAX_WORKERS 8

/*
 * The versions vendor support asks for first (probes/versions.c): what the
 * run read, "" where it could not. NICs fold by equal model, firmware,
 * board and rate, in the inventory's order.
 */
#define REPORT_NIC_KINDS 8
struct nic_kind {
	char model[48];		/* "ConnectX-7", or "15b3:1021" */
	char fw[48];		/* fw_ver */
	char board[48];		/* board_id (PSID) */
	char rate[48];		/* the first port's rate */
	int *nics;		/* its NIC subjects (report_alloc) */
	int count;
};

struct report_versions {
	char nvidia[64];	/* kernel module version */
	char nvidia_flavour[16];	/* "open", "proprietary" */
	char cuda[16];		/* driver API: "13.0" */
	char nvml[80];		/* NVML's driver version */
	char libibverbs[128];	/* the library file: "libibverbs.so.1.14.50.0" */
	char rdma_core[16];	/* its rdma-core release: "50" */
	char ofed[64];		/* mlx5_core's version file (MLNX_OFED/DOCA) */
	struct nic_kind nic[REPORT_NIC_KINDS];
	int nnic_kinds;
	int nic_kinds_more;	/* kinds past the array, folded in none */
};

struct report_meta {
	struct report_versions versions;
	struct worker_meta workers[REPORT_MAX_WORKERS];
	int nworkers;
	char tool_version[32];
	char hostname[128];
	char kernel[128];
	char sysroot[512];
	char generated_at[32];
	long long generated_epoch;	/* the same instant, Unix time */
	const char *require;	/* the policy applied: auto resolved */
	bool require_auto;	/* chosen by --require auto (the default) */
	double total_ms;
	bool interrupted;	/* SIGINT/SIGTERM: the report is partial */
	bool redacted;		/* --redact: identifiers masked */
	char capture[512];	/* --capture archive written, or "" */
	struct report_policy policy;
};

/*
 * What gdrcheck predicts NCCL does on the node (issue 14), as typed facts:
 * the release modelled and, per GPU, the rails NCCL uses. Filled by
 * probes/nccl_state.c; arrays live in the report's blocks (report_alloc).
 */
struct nccl_rail {
	int nic;		/* NIC subject */
	int port;		/* port number NCCL opens */
	int gid_index;		/* RoCE: the GID NCCL picks; -1 IB/unknown */
	const char *path;	/* NCCL path type: "PIX", "PXN", "P2C"... */
	int relay_gpu;		/* PXN: the relay GPU's subject, else -1 */
	bool gdr_send;		/* NIC reads GPU memory (GDR read) */
	bool gdr_recv;		/* NIC writes GPU memory */
	const char *mech_send;	/* "dmabuf", "peermem", "host", "unknown" */
	const char *mech_recv;
	bool no_fallback;	/* DMA-BUF: a failed regMrDmaBuf is fatal */
	bool undecided;		/* an input of NCCL's GDR check unread */
	bool hidden;		/* ... because the GPU is hidden from us */
	bool data_direct;	/* NCCL uses the NIC's `<dev>_dma` (path: to its
				 * Data Direct function) */
	/* The device as NCCL names it: "mlx5_0", "mlx5_0_dma" (Data
	 * Direct), "mlx5_0+mlx5_0" (ports fused); NULL: the NIC's name. */
	const char *nccl_device;
	int fused_ports;	/* ports NCCL fused into the device (1: none) */
	const char *proof;	/* data.nccl: "proven", "failed", "unproven" */
};

struct nccl_gpu_rails {
	int gpu;		/* GPU subject */
	int nrails;
	struct nccl_rail *rail;	/* nrails of them (report_alloc) */
};

struct nccl_facts {
	bool modelled;		/* the model ran (topo.nccl_config) */
	char version[16];	/* "2.28.9" */
	char version_source[320];	/* where the version came from */
	bool version_assumed;	/* no NCCL found: the newest modelled */
	/*
	 * NCCL is there for the node's jobs: a libnccl.so.2 found (or named),
	 * or NCCL_* settings in the environment or an nccl.conf; found_how
	 * says which ("libnccl.so.2 (ld.so.cache)", "NCCL_IB_HCA (env)").
	 */
	bool found;
	char found_how[320];
	/*
	 * NCCL's IB transport has no device and the node's RDMA devices are
	 * AWS EFA: its jobs reach them through aws-ofi-nccl, which the model
	 * does not cover (--require auto then requires any).
	 */
	bool ofi_only;
	struct nccl_gpu_rails *gpus;
	size_t ngpus;
};

/*
 * Two-node mode (--listen / --peer): the other node and each rail tested
 * against it, filled by the peer.* gates (probes/peer.c).
 */
struct peer_mech_report {
	const char *mechanism;		/* "dmabuf", "peermem" */
	bool tried, ok;
	bool write_ok, read_ok, write_verified, read_verified;
	bool peer_write_verified, peer_read_verified;
	double gbps, peer_gbps, lat_us;
	const char *failed_step;	/* NULL: none */
};

struct peer_rail_report {
	int rail;			/* GPU index k on both sides */
	int gpu;			/* GPU subject here, -1 none */
	char nic[64], peer_nic[64], peer_host[64];
	int port, peer_port;
	unsigned int mtu, peer_mtu, path_mtu;	/* bytes; 0 unknown */
	long long gid_index, peer_gid_index;	/* -1 none */
	double limit_gbps;		/* the smaller port rate / PCIe link */
	double ratio;			/* best WRITE bandwidth / limit; -1 */
	long long xmit_bytes, rcv_bytes;	/* counters moved; -1 unread */
	long long peer_xmit_bytes, peer_rcv_bytes;
	int nmech;
	struct peer_mech_report mech[2];
};

struct peer_report {
	bool active;			/* two-node mode ran */
	const char *role;		/* "listener", "connector" */
	char endpoint[300];		/* as given: [ADDR:]PORT, HOST[:PORT] */
	char peer_host[256];		/* the other side's hostname */
	char peer_addr[128];
	const char *status;		/* "ok", "not_reached", "rejected", ... */
	char peer_verdict[16];		/* the other side's own verdict */
	char peer_summary[256];
	enum verdict verdict;		/* the wire's: READY, BLOCKED, UNKNOWN */
	double min_bandwidth;		/* --min-bandwidth */
	int nrails;
	struct peer_rail_report *rails;	/* report_alloc */
};

struct strblock;

struct report {
	struct report_meta meta;
	struct strblock *strings;	/* see report_alloc */
	struct strblock *evidence;	/* the results' evidence arrays */
	const char **keys;		/* evidence keys, one copy each */
	size_t nkeys, keys_cap;
	struct subject *subj;
	size_t nsubj;
	int *subj_slots;		/* id hash: subject index + 1, or 0 */
	size_t subj_slots_cap;
	struct result *res;
	size_t nres;
	struct pair_fact *facts;	/* one per pair subject (subject.fact) */
	size_t nfacts;
	struct path_verdict path[PATH_COUNT];
	enum verdict overall;
	int exit_code;
	struct nccl_facts nccl;
	struct peer_report peer;
};

/*
 * The one rule for bytes from outside (sysfs, vendor libraries, the
 * hostname, options): well-formed UTF-8 passes, except control characters
 * (C0, DEL, C1) and the noncharacters U+FFFE and U+FFFF; every other byte
 * is written as the four characters \xNN. Every string enters the model
 * through it (reasons, remediations, evidence, subject ids and labels), so
 * no renderer ever sees a byte that could move a terminal's cursor, end an
 * XML document or break a JSON or Prometheus string.
 *
 * report_safe_seq: the length (1 to 4) of the safe sequence at s, 0 at
 * the end of s, -1 when the byte at s must be escaped.
 */
int report_safe_seq(const char *s);
/*
 * s cleaned by the rule into dst (size bytes, NUL terminated when size is
 * not 0, cut only between whole sequences and escapes). Returns the length
 * of the whole cleaned string: >= size means it was cut. dst and s must
 * not overlap (an escape is longer than its byte).
 */
size_t report_clean(char *dst, size_t size, const char *s);
/* Whether s passes the rule unchanged. */
bool report_is_clean(const char *s);

void report_init(struct report *r);
void report_free(struct report *r);

/*
 * Returns the new subject's index. id, label and pci are cleaned by the
 * rule above; an id that is already taken (two names that differ only in
 * bytes cut off at the field's size, or in the cleaning) gets a "#N"
 * suffix: distinct subjects never share an id.
 */
int report_subject(struct report *r, enum subject_kind kind, const char *id,
		   const char *label, const char *pci, int parent);
/* A GPU subject's UUID (cleaned like every outside string). */
void report_subject_uuid(struct report *r, int subject, const char *uuid);
void report_subject_iommu_group(struct report *r, int subject,
				const char *group);

/*
 * Memory that lives as long as the report and is freed by report_free:
 * strings and small arrays of the results. Never freed one by one. Exits
 * (status 3) when memory runs out, like the rest of the model.
 */
void *report_alloc(struct report *r, size_t n);

struct result *report_vadd(struct report *r, const struct gate_desc *gate,
			   enum gdr_layer layer, unsigned int paths,
			   int subject, enum gdr_status st, const char *code,
			   const char *fmt, va_list ap)
	__attribute__((format(printf, 8, 0)));
struct result *report_add(struct report *r, const struct gate_desc *gate,
			  enum gdr_layer layer, unsigned int paths,
			  int subject, enum gdr_status st, const char *code,
			  const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

void result_remedy(struct result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void result_vremedy(struct result *res, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void ev_str(struct result *res, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ev_int(struct result *res, const char *key, long long val);
void ev_bool(struct result *res, const char *key, bool val);
void ev_real(struct result *res, const char *key, double val);
/* The string evidence key of res (which may be NULL), or NULL. */
const char *ev_find_str(const struct result *res, const char *key);
/* The integer evidence key of res (which may be NULL), or deflt. */
long long ev_find_int(const struct result *res, const char *key,
		      long long deflt);


/*
 * Typed pair facts (struct pair_fact): set on res, a result about a pair
 * subject, which is remembered as the result that established the fact.
 */
void fact_distance(struct result *res, enum topo_class c);
void fact_gdr(struct result *res, enum pair_gdr g);
void fact_acs(struct result *res, enum pair_acs a);
/*
 * The facts of pair subject `subject`; for any other subject (or -1) a
 * row where everything is unknown. Never NULL.
 */
const struct pair_fact *report_pair_fact(const struct report *r, int subject);

/*
 * The GPU x RDMA device grid of a report, indexed once (a 64 x 64 node has
 * 4096 pairs): rows are the GPU subjects, columns the NIC subjects, both
 * in subject order, each cell the pair subject of its GPU and NIC.
 */
struct pair_grid {
	int *row, *col;		/* subject -> its row (GPU) / column (NIC), -1 */
	int *gpus, *nics;	/* row -> GPU subject, column -> NIC subject */
	size_t ngpu, nnic;
	int *pair;		/* [row * nnic + column]: pair subject, or -1 */
};
void pair_grid_build(const struct report *r, struct pair_grid *g);
/* The pair subject of GPU subject gpu and NIC subject nic, or -1. */
int pair_grid_find(const struct pair_grid *g, int gpu, int nic);
/* The facts of the pair in grid row `row`, column `col` (unknown: none). */
const struct pair_fact *pair_grid_fact(const struct report *r,
				       const struct pair_grid *g,
				       size_t row, size_t col);
void pair_grid_free(struct pair_grid *g);

/* --redact: mask the hostname, GIDs, GUIDs and MACs everywhere. */
void report_redact(struct report *r);

/* Fold equal pair results (core/fold.c); after the last result and any
 * redaction, before rendering. */
void report_fold(struct report *r);
/* Result @i's group's subjects, @i's first, into @subj (fold_n of them). */
size_t result_fold_subjects(const struct report *r, size_t i, int *subj);

/* Advice grouped by (gate, text): BLOCKED first, then WARN. */
struct remedy {
	const struct gate_desc *gate_desc;	/* what groups them */
	const char *gate;			/* its id */
	const char *text;
	enum gdr_status status;
	int *subjects;
	size_t nsubjects;
};
size_t report_remedies(const struct report *r, struct remedy **out);
void report_remedies_free(struct remedy *v, size_t n);

/*
 * An array of r->nres flags (free it): which results make the policy
 * fail. None when the run exits 0; see report/failing.c.
 */
bool *report_failing(const struct report *r);
/*
 * Result i is a lost or trained-down rail (topo.rails BLOCKED): it fails
 * the node under every policy (engine/policy.c), with the port's own
 * nic.port result.
 */
bool report_rail_failure(const struct report *r, size_t i);
/* The P_* paths --require accepts: any one of them READY is enough. */
unsigned int report_accepted_paths(const struct report *r);

/* Renderers. Return 0, or -1 when rendering or writing failed. */
struct render_opts {
	bool color;
	bool verbose;
	int width;	/* text columns; 0: 80 */
};
int render_text(const struct report *r, const struct render_opts *o,
		FILE *out);
int render_json(const struct report *r, FILE *out);
int render_junit(const struct report *r, FILE *out);
int render_prometheus(const struct report *r, FILE *out);
/* One line: the overall verdict and each path's. */
int render_quiet(const struct report *r, FILE *out);

#endif
