/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PROBES_NCCL_STATE_H
#define GDRCHECK_PROBES_NCCL_STATE_H

/*
 * The NCCL model of one run, shared by the three files of the NCCL gates
 * (probes/ only):
 *
 *   probes/nccl_facts.c  gathers the facts: the libnccl a job would load
 *                        and its release, the settings' sources, the
 *                        ports' and PCI nodes' sysfs files, the realpath
 *                        of each device's PCI identity (once per run), the
 *                        GID tables, the vendor facts the model reads
 *   probes/nccl_state.c  builds the state from them with the pure rules
 *                        of nccl/ (passes, fusion, rails), and hands the
 *                        report its typed facts
 *   probes/nccl.c        the gates: topo.nccl_config, topo.nccl,
 *                        data.nccl, topo.rails
 */
#include <limits.h>

#include "gate/context.h"
#include "nccl/conf.h"
#include "nccl/model.h"
#include "nccl/netdev.h"
#include "nccl/pciview.h"
#include "nccl/settings.h"

/* Per PCI tree node, read once: the per-pair walks revisit every switch. */
struct node_memo {
	bool id_read, bw_read[2];
	uint64_t id;			/* nccl_pci_id of the four sysfs ids */
	double bw[2];			/* link_bw: [0] max link, [1] NVML's */
};

/* nccl/pciview.c's reader over this run's sysfs (nccl_facts.c). */
struct nccl_pci_facts {
	const struct gdr_ctx *ctx;
	struct nccl_state *s;
};

struct nccl_state {
	struct sysroot *sr;		/* the run's (gdr_ctx.sr) */
	struct node_memo *memo;		/* ctx->tree.count of them */
	struct nccl_pci_facts rd_arg;
	struct nccl_pci_reader rd;	/* reads through memo */
	int ver;
	char version[16];
	char vsrc[320];
	enum reason_code vcode;
	struct nccl_conf conf;
	int conf_err;
	/*
	 * A replayed capture: /gdrcheck/libnccl's text (cap_lib, NULL for a
	 * capture without it) and the environment the node's NCCL saw
	 * (cap_env, pointing into cap_envtext; from /gdrcheck/environ).
	 */
	bool replay;
	char *cap_lib, *cap_envtext;
	const char **cap_env;
	struct nccl_settings set;	/* effective settings */
	bool peermem;		/* NCCL's peermem check (ncclIbGdrSupport) */
	/* Per inventory NIC: its ports' facts and device link, read once. */
	struct nccl_nic_ports *nics;	/* [nnic] */
	size_t nnic;
	struct nccl_port_facts *ports;	/* the nics' port arrays */
	char (*real)[PATH_MAX];		/* the nics' real paths */
	struct nccl_pair_model *pm;	/* per inventory pair */
	int *pair_at;		/* [gpu * nnic + nic] -> pair index, -1 */
	/*
	 * The node as built (topo.rails): with every present port ACTIVE,
	 * which pairs NCCL would make rails, on which port. NULL when every
	 * port is ACTIVE (as built is as it is). as_built: that pass runs.
	 */
	bool as_built;
	struct built_rail {
		bool rail;
		int port;
	} *built;
	/*
	 * NCCL of this release cannot initialise on the node: ncclTopoAddC2c's
	 * findLocalCpu circles below this GPU's switch (local_cpu_check); -1.
	 */
	int circle_gpu, circle_switch;
	/* Per NIC, this pass: the NCCL device it is part of (nccl_fuse). */
	struct nccl_fusion *fuse;
};

/* --- probes/nccl_state.c ------------------------------------------------- */

/* The run's model, built on first use and freed after the last gate. */
struct nccl_state *nccl_model(struct gdr_ctx *ctx);
/* Inventory pair of gpu x nic, or -1. */
int nccl_pair_index(const struct gdr_ctx *ctx, int gpu, int nic);
/* The device name NCCL gives the pair's NIC ("mlx5_0+mlx5_1", "_dma"). */
const char *nccl_nic_name(const struct gdr_ctx *ctx, int pi, char *buf,
			  size_t len);
const char *nccl_mech_name(enum nccl_mech m);
/* An effective setting, or NULL. */
const char *nccl_get(const struct nccl_state *s, const char *name);
void nccl_ver_string(int ver, char *buf, size_t len);

/* --- probes/nccl_facts.c ------------------------------------------------- */

/*
 * The release (replayed capture, --nccl-version, --libnccl, the node's
 * libnccl.so.2), the effective configuration and settings, and NCCL's
 * peermem check: s->ver .. s->peermem.
 */
void nccl_facts_release(struct gdr_ctx *ctx, struct nccl_state *s);
/* Every NIC's port facts and device link (s->nics), the PCI reader. */
void nccl_facts_node_files(struct gdr_ctx *ctx, struct nccl_state *s);
/* The facts of port port of inventory NIC nic, or NULL. */
const struct nccl_port_facts *nccl_port_of(const struct nccl_state *s,
					   int nic, int port);
/*
 * The sysfs GID table of an Ethernet port (RoCE), at most max entries;
 * 0 on IB or unreadable.
 */
int nccl_facts_gid_table(const struct nccl_state *s, int nic, int port,
			 struct nccl_gid *tbl, int max);
/* /sys/bus/pci/devices/<bdf>/<attr>'s line, "" when unreadable. */
void nccl_pci_attr(const struct nccl_state *s, const char *bdf,
		   const char *attr, char *buf, size_t len);
/*
 * What nccl/model.c reads of the node: the pairs' GPU and NIC, each GPU's
 * and NIC's facts, the NVLink peers and the settings; nd->pair_at is
 * s->pair_at, filled by each pass.
 */
void nccl_facts_node(struct gdr_ctx *ctx, const struct nccl_state *s,
		     struct nccl_node *nd);
void nccl_facts_node_free(struct nccl_node *nd);
void nccl_facts_free(struct nccl_state *s);

#endif
