// SPDX-License-Identifier: MIT
#include "decode/pcie.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static uint16_t rd16(const uint8_t *cfg, size_t off)
{
	return (uint16_t)(cfg[off] | cfg[off + 1] << 8);
}

static uint32_t rd32(const uint8_t *cfg, size_t off)
{
	return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 |
	       (uint32_t)cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;
}

#define PCI_STATUS		0x06
#define PCI_STATUS_CAP_LIST	0x10
#define PCI_CAPABILITY_LIST	0x34

int pci_find_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
	uint64_t seen[4] = { 0 };	/* one bit per dword of 256 bytes */
	size_t pos;

	if (len < 64)
		return PCIE_TRUNCATED;
	if (!(rd16(cfg, PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return PCIE_NO_LIST;
	pos = cfg[PCI_CAPABILITY_LIST] & ~3u;
	while (pos) {
		if (pos < 0x40)
			return PCIE_NOT_FOUND;	/* points into the header */
		if (pos + 2 > len)
			return PCIE_TRUNCATED;
		if (seen[pos / 4 / 64] & (1ull << (pos / 4 % 64)))
			return PCIE_LOOP;
		seen[pos / 4 / 64] |= 1ull << (pos / 4 % 64);
		if (cfg[pos] == 0xff)
			return PCIE_NOT_FOUND;
		if (cfg[pos] == id)
			return (int)pos;
		pos = cfg[pos + 1] & ~3u;
	}
	return PCIE_NOT_FOUND;
}

int pci_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	uint64_t seen[16] = { 0 };	/* one bit per dword of 4096 bytes */
	size_t pos = 0x100;

	if (len <= 0x100)
		return len < 0x100 ? PCIE_TRUNCATED : PCIE_NO_LIST;
	for (;;) {
		uint32_t h;

		if (pos + 4 > len)
			return PCIE_TRUNCATED;
		if (seen[pos / 4 / 64] & (1ull << (pos / 4 % 64)))
			return PCIE_LOOP;
		seen[pos / 4 / 64] |= 1ull << (pos / 4 % 64);
		h = rd32(cfg, pos);
		if (h == 0 || h == 0xffffffff)
			return pos == 0x100 ? PCIE_NO_LIST : PCIE_NOT_FOUND;
		if ((h & 0xffff) == id)
			return (int)pos;
		pos = (h >> 20) & 0xffc;
		if (pos < 0x100)
			return PCIE_NOT_FOUND;
	}
}

const char *pcie_walk_error(int err)
{
	switch (err) {
	case PCIE_NOT_FOUND: return "not present";
	case PCIE_TRUNCATED: return "config space truncated";
	case PCIE_LOOP: return "capability list loops";
	case PCIE_NO_LIST: return "no capability list";
	default: return "ok";
	}
}

int pcie_port_type(const uint8_t *cfg, size_t len)
{
	int pos = pci_find_cap(cfg, len, PCI_CAP_ID_EXP);

	if (pos < 0 || (size_t)pos + 4 > len)
		return -1;
	return (rd16(cfg, (size_t)pos + 2) >> 4) & 0xf;
}

const char *pcie_port_type_name(int type)
{
	switch (type) {
	case 0x0: return "endpoint";
	case 0x1: return "legacy endpoint";
	case PCIE_TYPE_ROOT_PORT: return "root port";
	case PCIE_TYPE_UPSTREAM: return "upstream port";
	case PCIE_TYPE_DOWNSTREAM: return "downstream port";
	case 0x7: return "PCIe-to-PCI bridge";
	case 0x8: return "PCI-to-PCIe bridge";
	case 0x9: return "root complex integrated endpoint";
	case 0xa: return "root complex event collector";
	default: return "unknown";
	}
}

int pcie_read_acs(const uint8_t *cfg, size_t len, struct acs_regs *acs)
{
	int pos = pci_find_ext_cap(cfg, len, PCI_EXT_CAP_ID_ACS_);

	memset(acs, 0, sizeof(*acs));
	if (pos == PCIE_NOT_FOUND || pos == PCIE_NO_LIST)
		return 0;
	if (pos < 0)
		return pos;
	if ((size_t)pos + 8 > len)
		return PCIE_TRUNCATED;
	acs->present = true;
	acs->cap = rd16(cfg, (size_t)pos + 4);
	acs->ctrl = rd16(cfg, (size_t)pos + 6);
	return 0;
}

void acs_bits_string(uint16_t bits, char *buf, size_t len)
{
	static const struct {
		uint16_t bit;
		const char *name;
	} names[] = {
		{ ACS_SV, "SrcValid" }, { ACS_TB, "TransBlk" },
		{ ACS_RR, "ReqRedir" }, { ACS_CR, "CmpltRedir" },
		{ ACS_UF, "UpstreamFwd" }, { ACS_EC, "EgressCtrl" },
		{ ACS_DT, "DirectTrans" },
	};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(bits & names[i].bit) || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", names[i].name);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* NCCL attaches every host bridge of a NUMA node to the same CPU: NODE is PHB. */
enum nccl_path nccl_path_of(enum topo_class c)
{
	switch (c) {
	case TOPO_PIX: return NCCL_PIX;
	case TOPO_PXB: return NCCL_PXB;
	case TOPO_PHB:
	case TOPO_NODE: return NCCL_PHB;
	case TOPO_SYS: return NCCL_SYS;
	default: return NCCL_UNKNOWN;
	}
}

int parse_gdr_level(const char *s, enum nccl_path *level)
{
	static const enum nccl_path old[] = {
		NCCL_LOC, NCCL_PIX, NCCL_PXB, NCCL_PHB, NCCL_SYS, NCCL_SYS,
	};
	char *end;
	long v;

	/* NCCL reads a number only when the value starts with a digit. */
	for (int p = NCCL_LOC; p <= NCCL_SYS; p++)
		if (!strcasecmp(s, nccl_path_name((enum nccl_path)p))) {
			*level = (enum nccl_path)p;
			return 0;
		}
	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v > 5)
		return -1;
	*level = old[v];
	return 0;
}

int pcitree_find(const struct pcitree *t, const char *bdf)
{
	for (size_t i = 0; i < t->count; i++)
		if (!strcmp(t->n[i].bdf, bdf))
			return (int)i;
	return -1;
}

/*
 * Config space (when readable) says what each port is. Otherwise the tree's
 * shape does: PCIe alternates root/downstream ports and upstream ports, a
 * root port sitting on the root bus.
 */
void pcitree_infer_types(struct pcitree *t)
{
	/* Parents come before children only by chance: iterate to a fixpoint. */
	for (size_t pass = 0; pass < t->count + 1; pass++) {
		bool changed = false;

		for (size_t i = 0; i < t->count; i++) {
			struct pcinode *n = &t->n[i];
			int type, pt;

			if (!n->bridge || (n->port_type >= 0 && !n->type_inferred))
				continue;
			if (n->parent < 0) {
				type = PCIE_TYPE_ROOT_PORT;
			} else {
				pt = t->n[n->parent].port_type;
				if (pt < 0)
					continue;
				type = pt == PCIE_TYPE_UPSTREAM ?
				       PCIE_TYPE_DOWNSTREAM : PCIE_TYPE_UPSTREAM;
			}
			if (n->port_type != type) {
				n->port_type = type;
				n->type_inferred = true;
				changed = true;
			}
		}
		if (!changed)
			break;
	}
}

/* A downstream port and its switch's upstream port are one switch. */
static int unit_of(const struct pcitree *t, int i)
{
	const struct pcinode *n = &t->n[i];

	if (n->port_type == PCIE_TYPE_DOWNSTREAM && n->parent >= 0 &&
	    t->n[n->parent].port_type == PCIE_TYPE_UPSTREAM)
		return n->parent;
	return i;
}

static int chain(const struct pcitree *t, int i, int *out)
{
	int n = 0;

	/* Bounded: a corrupt tree with a parent cycle cannot spin. */
	for (int p = t->n[i].parent; p >= 0 && n < PCIPATH_MAX;
	     p = t->n[p].parent)
		out[n++] = p;
	return n;
}

void pcitree_path(const struct pcitree *t, int a, int b, struct pcipath *p)
{
	int ca[PCIPATH_MAX], cb[PCIPATH_MAX], na, nb, ia = -1, ib = -1;
	int units[PCIPATH_MAX * 2], nunits = 0;

	memset(p, 0, sizeof(*p));
	p->turn = -1;
	p->suspect = -1;
	p->rootless = -1;
	p->cls = TOPO_UNKNOWN;
	if (a < 0 || b < 0)
		return;
	p->known = true;
	na = chain(t, a, ca);
	nb = chain(t, b, cb);
	/* A node whose class is unknown may be a bridge: flag the path. */
	for (int i = 0; i < na && p->suspect < 0; i++)
		if (t->n[ca[i]].class_bad)
			p->suspect = ca[i];
	for (int j = 0; j < nb && p->suspect < 0; j++)
		if (t->n[cb[j]].class_bad)
			p->suspect = cb[j];
	for (int i = 0; i < na && ia < 0; i++)
		for (int j = 0; j < nb; j++)
			if (ca[i] == cb[j]) {
				ia = i;
				ib = j;
				break;
			}
	if (ia >= 0) {
		/* Up from a to the turn, then down to b (bounded). */
		for (int i = 0; i <= ia && p->nbridges < PCIPATH_MAX; i++)
			p->bridges[p->nbridges++] = ca[i];
		for (int j = ib - 1; j >= 0 && p->nbridges < PCIPATH_MAX; j--)
			p->bridges[p->nbridges++] = cb[j];
		p->turn = ca[ia];
		for (int i = 0; i < p->nbridges; i++) {
			int u = unit_of(t, p->bridges[i]), k;

			for (k = 0; k < nunits && units[k] != u; k++)
				;
			if (k == nunits)
				units[nunits++] = u;
		}
		p->units = nunits;
		p->cls = nunits <= 1 ? TOPO_PIX : TOPO_PXB;
		return;
	}
	/* No common bridge: every bridge on both sides is traversed. */
	for (int i = 0; i < na && p->nbridges < PCIPATH_MAX; i++)
		p->bridges[p->nbridges++] = ca[i];
	for (int j = nb - 1; j >= 0 && p->nbridges < PCIPATH_MAX; j--)
		p->bridges[p->nbridges++] = cb[j];
	/* Two ends without a host bridge share none: the class is unknown. */
	if (!t->n[a].root[0] || !t->n[b].root[0]) {
		p->rootless = t->n[a].root[0] ? b : a;
		return;
	}
	if (!strcmp(t->n[a].root, t->n[b].root)) {
		p->cls = TOPO_PHB;
	} else if (t->n[a].numa >= 0 && t->n[b].numa >= 0) {
		p->cls = t->n[a].numa == t->n[b].numa ? TOPO_NODE : TOPO_SYS;
	} else {
		/* NUMA unknown: one node means the same socket. */
		p->cls = t->numa_nodes == 1 ? TOPO_NODE : TOPO_SYS;
	}
}
