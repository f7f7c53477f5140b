// SPDX-License-Identifier: MIT
/*
 * The PCIe tree from sysfs: every function under /sys/bus/pci/devices, its
 * parent bridge from the realpath of its sysfs link, its host bridge, NUMA
 * node and class. Bridges get their config space read through libpci (port
 * type now, ACS later); what cannot be read is inferred or reported.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/pci.h"
#include "access/sysroot.h"
#include "gate/context.h"
#include "decode/parse.h"
#include "core/xalloc.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

/* "0000:00:01.0": hex digits where sscanf below takes them, nothing else. */
static bool plain_bdf(const char *s, size_t len)
{
	if (len != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (i != 4 && i != 7 && i != 10 &&
		    !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool is_bdf(const char *s, size_t len)
{
	unsigned int d, b, sl, f;
	char buf[32], tail;

	/* The usual name without sscanf: called for every component of
	 * every function's path (400 sscanf calls on an 8x8 node). */
	if (plain_bdf(s, len))
		return true;
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return sscanf(buf, "%x:%x:%x.%x%c", &d, &b, &sl, &f, &tail) == 4;
}

/* "pci0000:00", "pci10000:00" (VMD): a host bridge's sysfs directory. */
static bool is_host_bridge(const char *s, size_t len)
{
	unsigned int d, b;
	char buf[32], tail;

	if (len >= sizeof(buf) || len < 4 || strncmp(s, "pci", 3))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return sscanf(buf + 3, "%x:%x%c", &d, &b, &tail) == 2;
}

/* Split the realpath into its host bridge and the BDF before this one. */
static void place(const char *real, const char *bdf, char *root, size_t rlen,
		  char *parent, size_t plen)
{
	const char *p = real, *prev = NULL, *prevend = NULL;

	root[0] = parent[0] = '\0';
	while (*p) {
		const char *end;

		while (*p == '/')
			p++;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if (!root[0] && is_host_bridge(p, (size_t)(end - p)) &&
		    (size_t)(end - p) < rlen) {
			memcpy(root, p, (size_t)(end - p));
			root[end - p] = '\0';
		}
		if ((size_t)(end - p) == strlen(bdf) && !strncmp(p, bdf, strlen(bdf)))
			break;
		if (is_bdf(p, (size_t)(end - p))) {
			prev = p;
			prevend = end;
		} else {
			prev = NULL;
		}
		p = end;
	}
	if (prev && (size_t)(prevend - prev) < plen) {
		memcpy(parent, prev, (size_t)(prevend - prev));
		parent[prevend - prev] = '\0';
	}
}

/*
 * PCI_DEVICES "/<bdf>/<attr>" into p[len]: the tree asks for six
 * attributes of every function, and snprintf was a tenth of the build's
 * own instructions (it stays for what would not fit).
 */
static const char *attr_path(char *p, size_t len, const char *bdf,
			     const char *attr)
{
	size_t d = sizeof(PCI_DEVICES) - 1, b = strlen(bdf), a = strlen(attr);

	if (d + b + a + 3 > len) {
		snprintf(p, len, PCI_DEVICES "/%s/%s", bdf, attr);
		return p;
	}
	memcpy(p, PCI_DEVICES "/", d + 1);
	memcpy(p + d + 1, bdf, b);
	p[d + 1 + b] = '/';
	memcpy(p + d + 2 + b, attr, a + 1);
	return p;
}

static int link_attr(struct sysroot *sr, const char *bdf, const char *attr,
		     char *buf, size_t len)
{
	char p[256];

	return sysroot_read_line(sr, attr_path(p, sizeof(p), bdf, attr), buf,
				 len);
}

/* The first link attribute outside its domain, as "name=raw". */
static void link_bad(struct pci_cfg *c, const char *attr, const char *raw)
{
	if (!c->link_bad[0])
		snprintf(c->link_bad, sizeof(c->link_bad), "%s=%.40s", attr,
			 raw);
}

static void read_link(struct sysroot *sr, const char *bdf,
		      struct pci_cfg *c)
{
	char cw[16], mw[16];

	c->link_known = !link_attr(sr, bdf, "current_link_speed", c->cur_speed,
				   sizeof(c->cur_speed)) &&
			!link_attr(sr, bdf, "max_link_speed", c->max_speed,
				   sizeof(c->max_speed)) &&
			!link_attr(sr, bdf, "current_link_width", cw, sizeof(cw)) &&
			!link_attr(sr, bdf, "max_link_width", mw, sizeof(mw));
	if (!c->link_known)
		return;
	/* "Unknown" speeds and x0 widths are facts, not numbers to compare. */
	if (parse_link_speed(c->cur_speed, &c->cur_gts))
		link_bad(c, "current_link_speed", c->cur_speed);
	if (parse_link_speed(c->max_speed, &c->max_gts))
		link_bad(c, "max_link_speed", c->max_speed);
	if (parse_link_width(cw, &c->cur_width))
		link_bad(c, "current_link_width", cw);
	if (parse_link_width(mw, &c->max_width))
		link_bad(c, "max_link_width", mw);
}

/* Decode ACS once; say why when it cannot be. */
static void decode_acs(struct pci_cfg *c)
{
	int ret;

	if (c->len == -EXDEV) {
		snprintf(c->acs_unreadable, sizeof(c->acs_unreadable),
			 "config space not read: libpci would follow a link "
			 "out of the sysroot");
	} else if (c->len < 0) {
		snprintf(c->acs_unreadable, sizeof(c->acs_unreadable),
			 "config space unreadable: %s", sysroot_strerror(-c->len));
	} else if (c->len <= 64) {
		snprintf(c->acs_unreadable, sizeof(c->acs_unreadable),
			 "only %d bytes of config space", c->len);
	} else if (c->len < 0x104) {
		snprintf(c->acs_unreadable, sizeof(c->acs_unreadable),
			 "no extended config space (%d bytes)", c->len);
	} else {
		ret = pcie_read_acs(c->bytes, (size_t)c->len, &c->acs);
		if (ret)
			snprintf(c->acs_unreadable, sizeof(c->acs_unreadable),
				 "%s", pcie_walk_error(ret));
	}
}

void pcitree_build(struct gdr_ctx *ctx)
{
	struct pcitree *t = &ctx->tree;
	char **names = NULL, **nodes = NULL;
	char (*parents)[32];
	size_t n = 0, nn = 0;

	memset(t, 0, sizeof(*t));
	if (sysroot_list(ctx->sr, "/sys/devices/system/node", &nodes, &nn) == 0) {
		for (size_t i = 0; i < nn; i++)
			t->numa_nodes += !strncmp(nodes[i], "node", 4);
		sysroot_free_list(nodes, nn);
	}
	if (sysroot_list(ctx->sr, PCI_DEVICES, &names, &n))
		return;
	t->n = xcalloc(n, sizeof(*t->n));
	parents = xcalloc(n, sizeof(*parents));
	ctx->cfg = xcalloc(n, sizeof(*ctx->cfg));
	for (size_t i = 0; i < n; i++) {
		struct pcinode *nd = &t->n[t->count];
		char p[PATH_MAX], real[PATH_MAX];
		long long v;
		int ret;

		if (strlen(names[i]) >= sizeof(nd->bdf))
			continue;
		snprintf(p, sizeof(p), PCI_DEVICES "/%s", names[i]);
		ret = sysroot_realpath(ctx->sr, p, real, sizeof(real));
		if (ret) {
			if (!t->unresolved++)
				snprintf(t->first_unresolved,
					 sizeof(t->first_unresolved), "%s: %s",
					 names[i], sysroot_strerror(-ret));
			continue;
		}
		snprintf(nd->bdf, sizeof(nd->bdf), "%s", names[i]);
		place(real, names[i], nd->root, sizeof(nd->root),
		      parents[t->count], sizeof(parents[0]));
		nd->class_bad = sysroot_read_ll(ctx->sr,
						attr_path(p, sizeof(p), names[i],
							  "class"),
						&v) != 0;
		nd->class_code = nd->class_bad ? 0 : (unsigned int)v;
		nd->bridge = (nd->class_code >> 8) == 0x0604;
		nd->numa = -1;
		if (sysroot_read_ll(ctx->sr, attr_path(p, sizeof(p), names[i],
						  "numa_node"),
				    &v) == 0) {
			/* 9999 is no node: keep it as evidence, not as a node. */
			if (numa_node_check(v, t->numa_nodes)) {
				nd->numa_bad = true;
				nd->numa_raw = v;
			} else {
				nd->numa = (int)v;
			}
		}
		nd->port_type = -1;
		t->count++;
	}
	for (size_t i = 0; i < t->count; i++) {
		struct pci_cfg *c = &ctx->cfg[i];

		t->n[i].parent = parents[i][0] ? pcitree_find(t, parents[i]) : -1;
		read_link(ctx->sr, t->n[i].bdf, c);
		if (!t->n[i].bridge)
			continue;
		c->len = pci_config_read(ctx->pci, t->n[i].bdf, c->bytes, sizeof(c->bytes));
		if (c->len > 0 && sysroot_recording(ctx->sr)) {
			/* libpci read it, not the sysroot layer: record it. */
			char p[PATH_MAX + 8], real[PATH_MAX];

			snprintf(p, sizeof(p), PCI_DEVICES "/%s", t->n[i].bdf);
			if (!sysroot_realpath(ctx->sr, p, real, sizeof(real))) {
				snprintf(p, sizeof(p), "%s/config", real);
				sysroot_record_file(ctx->sr, p, (const char *)c->bytes,
						    (size_t)c->len);
			}
		}
		if (c->len > 0)
			t->n[i].port_type = pcie_port_type(c->bytes,
							   (size_t)c->len);
		decode_acs(c);
	}
	pcitree_infer_types(t);
	free(parents);
	sysroot_free_list(names, n);
}

void pcitree_free(struct gdr_ctx *ctx)
{
	free(ctx->tree.n);
	free(ctx->cfg);
	memset(&ctx->tree, 0, sizeof(ctx->tree));
	ctx->cfg = NULL;
}
