/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_IBSYSFS_H
#define GDRCHECK_IBSYSFS_H

/* RDMA port facts from /sys/class/infiniband (through the sysroot). */

struct sysroot;

struct gid_scan {
	int v2;			/* first RoCE v2 GID index, -1 none */
	int v1;			/* first RoCE v1 GID index, -1 none */
	int populated;		/* non-zero GIDs */
	int malformed;		/* GID files that hold no GID */
	char first_bad[16];	/* the first of them */
	int err;		/* -errno when the table could not be listed */
};

/* Scan the GID table of dev/port for usable RoCE GIDs. */
void ib_scan_gids(struct sysroot *sr, const char *dev, int port,
		  struct gid_scan *g);

/* The port's state number from sysfs ("4: ACTIVE" -> 4), or -errno. */
int ib_port_state(struct sysroot *sr, const char *dev, int port);

#endif
