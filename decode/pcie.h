/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PCIE_H
#define GDRCHECK_PCIE_H

/*
 * Pure decoders of PCI configuration space and of the PCIe tree. Capability
 * walks are defensive, as in pciutils' ls-caps/ls-ecaps: they stop on 0 and
 * 0xffffffff headers, detect loops and never read past the bytes given.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/names.h"

#define PCI_CAP_ID_EXP		0x10
#define PCI_EXT_CAP_ID_ACS_	0x000d

/* Errors of the walks. */
#define PCIE_NOT_FOUND	(-1)	/* list ended without the capability */
#define PCIE_TRUNCATED	(-2)	/* the list points past the bytes we have */
#define PCIE_LOOP	(-3)	/* the list points back into itself */
#define PCIE_NO_LIST	(-4)	/* no capability list / no extended space */

/* Offset of standard capability id, or a PCIE_* error. */
int pci_find_cap(const uint8_t *cfg, size_t len, uint8_t id);
/* Offset of extended capability id (>= 0x100), or a PCIE_* error. */
int pci_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id);
const char *pcie_walk_error(int err);

/* PCIe device/port type from the PCIe capability, or -1. */
int pcie_port_type(const uint8_t *cfg, size_t len);
const char *pcie_port_type_name(int type);

#define PCIE_TYPE_ROOT_PORT	0x4
#define PCIE_TYPE_UPSTREAM	0x5
#define PCIE_TYPE_DOWNSTREAM	0x6

/* ACS capability and control registers. */
#define ACS_SV	0x0001	/* source validation */
#define ACS_TB	0x0002	/* translation blocking */
#define ACS_RR	0x0004	/* P2P request redirect */
#define ACS_CR	0x0008	/* P2P completion redirect */
#define ACS_UF	0x0010	/* upstream forwarding */
#define ACS_EC	0x0020	/* P2P egress control */
#define ACS_DT	0x0040	/* direct translated P2P */

/* Bits that send peer-to-peer traffic up to the root complex. */
#define ACS_REDIRECTS (ACS_RR | ACS_CR | ACS_EC)

struct acs_regs {
	bool present;
	uint16_t cap;
	uint16_t ctrl;
};

/* Read ACS from config space; returns 0 or a PCIE_* error. */
int pcie_read_acs(const uint8_t *cfg, size_t len, struct acs_regs *acs);
/* "ReqRedir+ CmpltRedir+" style list of the set bits (lspci's names). */
void acs_bits_string(uint16_t bits, char *buf, size_t len);

/* NCCL's path type of a distance class (enum nccl_path: core/names.h). */
enum nccl_path nccl_path_of(enum topo_class c);

/*
 * NCCL_NET_GDR_LEVEL: a name (LOC, PIX, PXB, PHB, SYS) or an old integer
 * (0..5 -> LOC, PIX, PXB, PHB, SYS, SYS). Returns 0, or -1 if unparseable.
 */
int parse_gdr_level(const char *s, enum nccl_path *level);

/* One PCI function of the tree built from sysfs. */
struct pcinode {
	char bdf[20];		/* up to "ffffffff:ff:1f.7" (32-bit domains) */
	char root[24];		/* "pci0000:00": its host bridge; "": none */
	int parent;		/* index of the parent bridge, -1: root bus */
	bool bridge;
	int port_type;		/* from config space, or inferred; -1 none */
	bool type_inferred;
	int numa;		/* -1 unknown */
	bool numa_bad;		/* numa_node outside its domain: numa_raw */
	long long numa_raw;
	unsigned int class_code;
	bool class_bad;		/* sysfs class unreadable or malformed */
};

struct pcitree {
	struct pcinode *n;
	size_t count;
	int numa_nodes;		/* NUMA nodes of the machine, 0 unknown */
	int unresolved;		/* entries whose sysfs link could not be followed */
	char first_unresolved[96];
};

#define PCIPATH_MAX 32

struct pcipath {
	bool known;
	int turn;		/* common bridge where the path turns, -1 */
	int bridges[PCIPATH_MAX];	/* every bridge traversed, a side first */
	int nbridges;
	int units;		/* switches/bridges counted as nvidia-smi does */
	enum topo_class cls;
	int suspect;		/* a node on the way whose class is bad, -1 */
	int rootless;		/* an end without a host bridge, -1 */
};

int pcitree_find(const struct pcitree *t, const char *bdf);
/* Fill port types the config space could not give (root/up/downstream). */
void pcitree_infer_types(struct pcitree *t);
/* Classify the path between functions a and b (tree indices). */
void pcitree_path(const struct pcitree *t, int a, int b, struct pcipath *p);

#endif
