// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the procfs/sysfs text parsers of decode/parse.h.
 *
 * Input: byte 0 selects the parser, byte 1 is a parameter (an output buffer
 * size, a line index, a BAR ordinal), the rest is the file text, handed over
 * as a NUL-terminated heap copy of exactly that size.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "decode/parse.h"
#include "tests/fuzz/fuzz_common.h"

enum {
	SEL_KERNEL_RELEASE,
	SEL_MEMLOCK,
	SEL_STATUS,
	SEL_NV_VERSION_SMALL,
	SEL_NV_VERSION_LARGE,
	SEL_NUM_NAME,
	SEL_RESOURCE_LINE,
	SEL_NTH_MEM_BAR,
	SEL_GID,
	SEL_CGROUP,
	SEL_LINK_SPEED,
	SEL_LINK_WIDTH,
	SEL_COUNT
};

static void fuzz_kernel_release(const char *s)
{
	struct kver v = { -1, -1, -1 };

	if (parse_kernel_release(s, &v) == 0) {
		FUZZ_ASSERT(isdigit((unsigned char)s[0]));
		FUZZ_ASSERT(v.major >= 0 && v.major <= 100000);
		FUZZ_ASSERT(v.minor >= 0 && v.minor <= 100000);
		FUZZ_ASSERT(v.patch >= 0 && v.patch <= 100000);
		FUZZ_ASSERT(kver_cmp(&v, v.major, v.minor) == 0);
		(void)kver_cmp(&v, 5, 12);
	}
}

static void fuzz_memlock(const char *s)
{
	long long soft = -2, hard = -2;

	if (parse_memlock(s, &soft, &hard) == 0) {
		FUZZ_ASSERT(strstr(s, "Max locked memory"));
		FUZZ_ASSERT(soft >= LIMIT_UNLIMITED && hard >= LIMIT_UNLIMITED);
	}
}

static void fuzz_status(const char *s)
{
	long euid = -2;
	unsigned long long capeff = 0;

	if (parse_status(s, &euid, &capeff) == 0)
		FUZZ_ASSERT(euid >= 0);
}

/* The version is a digits-and-dots token with a dot, not ending in one. */
static void check_version(const char *v, size_t len)
{
	size_t n;

	FUZZ_ASSERT(memchr(v, '\0', len));
	n = strlen(v);
	FUZZ_ASSERT(n > 0 && n < len);
	FUZZ_ASSERT(strchr(v, '.') && v[n - 1] != '.');
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(isdigit((unsigned char)v[i]) || v[i] == '.');
}

static void fuzz_nv_version(const char *s, size_t small)
{
	enum nv_flavour fs = NV_FLAVOUR_UNKNOWN, fl = NV_FLAVOUR_UNKNOWN;
	char *vs = fuzz_buf(small);
	char *vl = fuzz_buf(64);	/* what gpu.c and mechanism.c pass */
	int rs = parse_nvidia_version(s, &fs, vs, small);
	int rl = parse_nvidia_version(s, &fl, vl, 64);

	FUZZ_ASSERT(rs == 0 || rs < 0);
	FUZZ_ASSERT(fs == NV_FLAVOUR_UNKNOWN || fs == NV_FLAVOUR_OPEN ||
		    fs == NV_FLAVOUR_PROPRIETARY);
	(void)nv_flavour_name(fs);
	if (small)
		FUZZ_ASSERT(memchr(vs, '\0', small));
	FUZZ_ASSERT(memchr(vl, '\0', 64));
	if (rs == 0) {
		check_version(vs, small);
		FUZZ_ASSERT(fs != NV_FLAVOUR_UNKNOWN);
		/* A bigger buffer never loses what a smaller one found. */
		if (small <= 64) {
			FUZZ_ASSERT(rl == 0 && fl == fs && !strcmp(vs, vl));
		}
	}
	if (rl == 0) {
		check_version(vl, 64);
		FUZZ_ASSERT(!strncmp(s, "NVRM version:", 13));
		if (strlen(vl) < small)
			FUZZ_ASSERT(rs == 0);
	}
	free(vs);
	free(vl);
}

static void fuzz_num_name(const char *s, size_t len)
{
	char *name = fuzz_buf(len);
	int num = -1;

	if (parse_num_name(s, &num, name, len) == 0) {
		size_t n;

		FUZZ_ASSERT(len > 0);
		FUZZ_ASSERT(memchr(name, '\0', len));
		n = strlen(name);
		FUZZ_ASSERT(n > 0 && n < len);
		FUZZ_ASSERT(num >= 0 && num <= 255);
		/* The name is the tail of the input after "N:" and blanks. */
		FUZZ_ASSERT(strlen(s) >= n && !strcmp(s + strlen(s) - n, name));
	}
	free(name);
}

static void fuzz_resource_line(const char *s, int index)
{
	unsigned long long start = 0, end = 0, flags = 0;

	int ret = parse_resource_line(s, index, &start, &end, &flags);

	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ERANGE);
	/* A BAR's size, end - start + 1, never wraps. */
	if (ret == 0)
		FUZZ_ASSERT(start <= end && end - start + 1 != 0);
}

static void fuzz_nth_mem_bar(const char *s, int n)
{
	unsigned long long start = 1, end = 0, s2, e2, flags;
	int reg = -1;
	int ret = pci_nth_mem_bar(s, n, &reg, &start, &end);

	FUZZ_ASSERT(ret == 0 || ret < 0);
	if (ret == 0) {
		FUZZ_ASSERT(reg >= 0 && reg < 6);
		FUZZ_ASSERT(start <= end);
		FUZZ_ASSERT(start || end);
		/* The same register read on its own agrees. */
		FUZZ_ASSERT(parse_resource_line(s, reg, &s2, &e2, &flags) == 0);
		FUZZ_ASSERT(s2 == start && e2 == end && (flags & 0x200));
		/* Ordinal n sits at or after register n. */
		FUZZ_ASSERT(reg >= n);
	}
}

static void fuzz_gid(const char *s)
{
	bool zero = false;

	if (parse_gid(s, &zero) == 0) {
		size_t n = strcspn(s, "\n");
		bool all0 = true;

		FUZZ_ASSERT(n == 39);
		for (size_t i = 0; i < n; i++) {
			if (i % 5 == 4) {
				FUZZ_ASSERT(s[i] == ':');
				continue;
			}
			FUZZ_ASSERT(isxdigit((unsigned char)s[i]));
			all0 &= s[i] == '0';
		}
		FUZZ_ASSERT(zero == all0);
	}
}

static void fuzz_cgroup(const char *s)
{
	const char *rt = container_from_cgroup(s);

	if (rt)
		FUZZ_ASSERT(*rt && strstr(s, rt));
}

/* Accepted values lie in the domain; everything else is an error. */
static void fuzz_link_speed(const char *s)
{
	double gts = -1;
	int ret = parse_link_speed(s, &gts);

	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ERANGE);
	if (ret == 0)
		FUZZ_ASSERT(gts >= 2.5 && gts <= 256 && strstr(s, " GT/s"));
}

static void fuzz_link_width(const char *s)
{
	int w = -1;
	int ret = parse_link_width(s, &w);

	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ERANGE);
	if (ret == 0)
		FUZZ_ASSERT(w >= 1 && w <= 32 && !(w & (w - 1) && w != 12));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int sel, param;
	char *s;

	if (size < 2)
		return 0;
	sel = data[0] % SEL_COUNT;
	param = data[1];
	s = fuzz_strndup(data + 2, size - 2);

	switch (sel) {
	case SEL_KERNEL_RELEASE:
		fuzz_kernel_release(s);
		break;
	case SEL_MEMLOCK:
		fuzz_memlock(s);
		break;
	case SEL_STATUS:
		fuzz_status(s);
		break;
	case SEL_NV_VERSION_SMALL:
		fuzz_nv_version(s, param % 17);		/* 0..16 bytes */
		break;
	case SEL_NV_VERSION_LARGE:
		fuzz_nv_version(s, 64 + param * 16);	/* 64..4144 bytes */
		break;
	case SEL_NUM_NAME:
		fuzz_num_name(s, param % 65);		/* 0..64 bytes */
		break;
	case SEL_RESOURCE_LINE:
		fuzz_resource_line(s, (int)(param % 8));
		break;
	case SEL_NTH_MEM_BAR:
		fuzz_nth_mem_bar(s, (int)(param % 8));
		break;
	case SEL_GID:
		fuzz_gid(s);
		break;
	case SEL_CGROUP:
		fuzz_cgroup(s);
		break;
	case SEL_LINK_SPEED:
		fuzz_link_speed(s);
		break;
	case SEL_LINK_WIDTH:
		fuzz_link_width(s);
		break;
	}
	free(s);
	return 0;
}
