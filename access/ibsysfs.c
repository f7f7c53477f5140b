// SPDX-License-Identifier: MIT
#include "access/ibsysfs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/sysroot.h"
#include "decode/parse.h"

#define IB_CLASS "/sys/class/infiniband"

void ib_scan_gids(struct sysroot *sr, const char *dev, int port,
		  struct gid_scan *g)
{
	char dir[256], **names;
	size_t n;

	g->v2 = g->v1 = -1;
	g->populated = 0;
	g->malformed = 0;
	g->first_bad[0] = '\0';
	snprintf(dir, sizeof(dir), IB_CLASS "/%s/ports/%d/gids", dev, port);
	g->err = sysroot_list(sr, dir, &names, &n);
	if (g->err)
		return;
	for (size_t i = 0; i < n; i++) {
		char p[320], gid[128] = "", type[32], *end;
		long idx = strtol(names[i], &end, 10);
		bool zero = true;
		int ret;

		if (*end || idx < 0 || idx > 65535)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		/*
		 * An entry that cannot be read (EACCES, ELOOP...) or holds
		 * junk may be the GID that matters: it counts as bad, never
		 * as absent.
		 */
		ret = sysroot_read_line(sr, p, gid, sizeof(gid));
		if ((ret && path_state_of(ret) != PATH_ABSENT) ||
		    (!ret && parse_gid(gid, &zero))) {
			if (!g->malformed++)
				snprintf(g->first_bad, sizeof(g->first_bad), "%s",
					 names[i]);
			continue;
		}
		if (ret)
			continue;
		if (zero)
			continue;
		g->populated++;
		snprintf(p, sizeof(p), IB_CLASS "/%s/ports/%d/gid_attrs/types/%s",
			 dev, port, names[i]);
		ret = sysroot_read_line(sr, p, type, sizeof(type));
		if (ret && path_state_of(ret) == PATH_UNREADABLE) {
			/* A populated GID of unknown type: not "no GID". */
			if (!g->malformed++)
				snprintf(g->first_bad, sizeof(g->first_bad), "%s",
					 names[i]);
			continue;
		}
		if (ret)
			continue;
		/* The lowest index of each type, as NCCL picks by default. */
		if (!strcmp(type, "RoCE v2") && (g->v2 < 0 || idx < g->v2))
			g->v2 = (int)idx;
		else if (!strcmp(type, "IB/RoCE v1") && (g->v1 < 0 || idx < g->v1))
			g->v1 = (int)idx;
	}
	sysroot_free_list(names, n);
}

int ib_port_state(struct sysroot *sr, const char *dev, int port)
{
	char p[256], line[64], name[32];
	int num, ret;

	snprintf(p, sizeof(p), IB_CLASS "/%s/ports/%d/state", dev, port);
	ret = sysroot_read_line(sr, p, line, sizeof(line));
	if (ret)
		return ret;
	if (parse_num_name(line, &num, name, sizeof(name)))
		return -EINVAL;
	/* "4: DOWN" is not ACTIVE: number and name must agree. */
	if (ib_port_state_check(num, name))
		return -ERANGE;
	return num;
}
