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
 *
 * Besides the tree, /gdrcheck/ holds answers read outside it: the vendor
 * libraries' (vendor-facts.json), the environment variables gates read
 * (environ: NCCL_*, HOME, CUDA_VISIBLE_DEVICES), and what gates found in
 * sources too big or too sensitive to keep whole (kallsyms, kernel-log,
 * kconfig, libnccl: see probes/probes.h, capfact_read).
 */
#include <stdbool.h>
#include <stddef.h>

struct sysroot;

/* Start recording what sr reads: installs sr's recorder hook. */
void capture_enable(struct sysroot *sr);
bool capture_enabled(void);

/* Write the archive; 0 or -errno. */
int capture_write(const char *file);

#endif
