/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PARSE_H
#define GDRCHECK_PARSE_H

/*
 * Pure parsers and classifiers for what sysfs, procfs and the vendor
 * libraries return. No I/O here: everything is unit tested on strings.
 * Each returns 0 on success or -EINVAL on malformed input.
 */
#include <stdbool.h>
#include <stddef.h>

#include "report/result.h"

struct kver {
	int major, minor, patch;
};

/* "6.18.44-fc-v657-gpu" -> 6.18.44. */
int parse_kernel_release(const char *s, struct kver *v);
int kver_cmp(const struct kver *a, int major, int minor);

#define LIMIT_UNLIMITED (-1LL)
/* The "Max locked memory" line of /proc/<pid>/limits, soft and hard. */
int parse_memlock(const char *limits, long long *soft, long long *hard);

/* Effective uid and CapEff from /proc/<pid>/status. */
int parse_status(const char *status, long *euid, unsigned long long *capeff);

enum nv_flavour {
	NV_FLAVOUR_UNKNOWN = 0,
	NV_FLAVOUR_OPEN,
	NV_FLAVOUR_PROPRIETARY,
};

/* First line of /proc/driver/nvidia/version. */
int parse_nvidia_version(const char *text, enum nv_flavour *flavour,
			 char *version, size_t len);
const char *nv_flavour_name(enum nv_flavour f);

/* "4: ACTIVE" -> 4, "ACTIVE". */
int parse_num_name(const char *s, int *num, char *name, size_t len);

/* Line `index` of a sysfs `resource` file -> start/end/flags. */
int parse_resource_line(const char *text, int index,
			unsigned long long *start, unsigned long long *end,
			unsigned long long *flags);

/*
 * The n-th (0-based) populated memory BAR of a sysfs `resource` file, and
 * its register index. NVIDIA's "BAR1" is the second memory BAR: register 1
 * when BAR0 is 32-bit, register 2 when BAR0 is 64-bit (as on the H200).
 * Returns -ENOENT when there are fewer BARs, -EINVAL on malformed lines.
 */
int pci_nth_mem_bar(const char *text, int n, int *reg,
		    unsigned long long *start, unsigned long long *end);

/* A GID as sysfs prints it; *zero set when it is all zeroes. */
int parse_gid(const char *s, bool *zero);

/* Container runtime from /proc/1/cgroup text, or NULL. */
const char *container_from_cgroup(const char *cgroup);

/* CUDA driver version 13000 -> "13.0". */
void cuda_version_string(int v, char *buf, size_t len);

/*
 * Classified outcome of an errno or CUDA result: the status a gate gives
 * it, a stable reason code, and its meaning for an operator.
 */
struct classified {
	enum gdr_status status;
	const char *code;
	const char *meaning;
};

/* ibv_reg_dmabuf_mr(pd, 0, 0, 0, fd = -1, 0): NCCL's provider probe. */
struct classified classify_dmabuf_probe(int err);

/* A failed GPU memory registration (dmabuf: ibv_reg_dmabuf_mr). */
struct classified classify_reg_errno(int err, bool dmabuf);

/* A failed RDMA completion (ibv_wc_status). */
struct classified classify_wc_status(int status);

/* ibv_open_device failure. */
struct classified classify_open_errno(int err);

/* Human size: 268435456 -> "256 MiB". */
void format_bytes(unsigned long long v, char *buf, size_t len);

#endif
