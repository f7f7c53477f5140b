/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_CAPTURE_H
#define GDRCHECK_CAPTURE_H

/*
 * --capture FILE.tar.gz: record exactly the /sys, /proc and /dev entries the
 * run looked at (files with the bytes read, directories listed, symlinks
 * followed, nodes tested for existence) and write them as a gzip'd tar that
 * `gdrcheck --sysroot DIR` replays. Identifying content is scrubbed on the
 * way out: the hostname, GIDs (kept non-zero and typed), container ids, and
 * every kernel command-line word that is not about the IOMMU.
 */
#include <stdbool.h>
#include <stddef.h>

void capture_enable(void);
bool capture_enabled(void);

/* Called by the sysroot layer; paths are absolute inside the sysroot. */
void capture_file(const char *path, const char *data, size_t len);
void capture_dir(const char *path);
void capture_link(const char *path, const char *target);
void capture_exists(const char *path, bool is_dir);

/* Write the archive; 0 or -errno. */
int capture_write(const char *file);

#endif
