// SPDX-License-Identifier: MIT
/*
 * Two run contexts in one process (issue 13, item 4): each reads its own
 * sysroot, and what a context caches (the sysroot's known paths, the NVIDIA
 * driver module, the inventory) stays its own. Both trees are read in
 * turns, so a reader or cache shared between them would hand one tree's
 * answer to the other and fail here.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access/sysroot.h"
#include "probes/probes.h"

struct fixture {
	char root[2][PATH_MAX];
	struct sysroot *sr[2];
};

static void put(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* mkdir -p of rel below root. */
static void dirs(const char *root, const char *rel)
{
	char p[PATH_MAX * 2];
	size_t n = strlen(root);

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (char *s = p + n + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static void link_in(const char *root, const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

/* An NVIDIA GPU (class 0x0302) at bdf below pci0000:<bus>. */
static void gpu(const char *root, const char *bus, const char *bdf,
		const char *device)
{
	char dev[256], rel[320], target[256];

	snprintf(dev, sizeof(dev), "/sys/devices/pci0000:%s/%s", bus, bdf);
	dirs(root, dev);
	snprintf(rel, sizeof(rel), "%s/vendor", dev);
	put(root, rel, "0x10de\n");
	snprintf(rel, sizeof(rel), "%s/class", dev);
	put(root, rel, "0x030200\n");
	snprintf(rel, sizeof(rel), "%s/device", dev);
	put(root, rel, device);
	snprintf(target, sizeof(target), "../../../devices/pci0000:%s/%s",
		 bus, bdf);
	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s", bdf);
	link_in(root, target, rel);
}

/*
 * Tree 0: one GPU (0000:01:00.0, H200) and the open kernel module 580.
 * Tree 1: two GPUs (0000:41:00.0, 0000:c1:00.0, V100) and the proprietary
 * module 535. Both have /sys/bus/pci/devices/0000:01:00.0 -- in tree 1 a
 * link to another bus -- and /etc/which naming the tree.
 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	for (int i = 0; i < 2; i++) {
		snprintf(f->root[i], sizeof(f->root[i]),
			 "/tmp/gdrcheck-ctx%d-XXXXXX", i);
		if (!mkdtemp(f->root[i]))
			return -1;
		dirs(f->root[i], "/sys/bus/pci/devices");
		dirs(f->root[i], "/proc/driver/nvidia");
		dirs(f->root[i], "/etc");
		put(f->root[i], "/etc/which", i ? "tree one\n" : "tree zero\n");
	}
	gpu(f->root[0], "00", "0000:01:00.0", "0x2335\n");
	put(f->root[0], "/proc/driver/nvidia/version",
	    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
	    "580.159.04  Release Build  (nixbld@)  \n");
	gpu(f->root[1], "40", "0000:41:00.0", "0x1db4\n");
	gpu(f->root[1], "c0", "0000:c1:00.0", "0x1db4\n");
	dirs(f->root[1], "/sys/devices/pci0000:80/0000:01:00.0");
	link_in(f->root[1], "../../../devices/pci0000:80/0000:01:00.0",
		"/sys/bus/pci/devices/0000:01:00.0");
	put(f->root[1], "/proc/driver/nvidia/version",
	    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  "
	    "Sat Aug 19 01:15:15 UTC 2023\n");
	for (int i = 0; i < 2; i++) {
		f->sr[i] = sysroot_new(f->root[i]);
		if (!f->sr[i])
			return -1;
	}
	*state = f;
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(p);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int ret = 0;

	for (int i = 0; i < 2; i++) {
		sysroot_free(f->sr[i]);
		ret |= nftw(f->root[i], rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	free(f);
	return ret;
}

/* Reads alternate between the two trees: each answer is its own tree's. */
static void test_two_sysroots(void **state)
{
	struct fixture *f = *state;
	char buf[64];

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 2; i++) {
			assert_string_equal(sysroot_get(f->sr[i]), f->root[i]);
			assert_int_equal(sysroot_read_line(f->sr[i], "/etc/which",
							   buf, sizeof(buf)), 0);
			assert_string_equal(buf, i ? "tree one" : "tree zero");
		}
	}
	/* A path only one tree has. */
	assert_true(sysroot_is_dir(f->sr[1], "/sys/devices/pci0000:c0"));
	assert_false(sysroot_exists(f->sr[0], "/sys/devices/pci0000:c0"));
}

/*
 * The known-path cache of sysroot_realpath is per sysroot: the same link
 * resolved in turns leads to each tree's own target.
 */
static void test_realpath_cache_per_sysroot(void **state)
{
	struct fixture *f = *state;
	static const char *const want[2] = {
		"/sys/devices/pci0000:00/0000:01:00.0",
		"/sys/devices/pci0000:80/0000:01:00.0",
	};
	char real[PATH_MAX];

	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 2; i++) {
			assert_int_equal(sysroot_realpath(f->sr[i],
				"/sys/bus/pci/devices/0000:01:00.0/", real,
				sizeof(real)), 0);
			assert_string_equal(real, want[i]);
		}
}

struct rec_log {
	int files;
	char last[256];
};

static void rec_file(void *arg, const char *path, const char *data,
		     size_t len)
{
	struct rec_log *log = arg;

	log->files++;
	snprintf(log->last, sizeof(log->last), "%s", path);
}

static void rec_dir(void *arg, const char *path)
{
}

static void rec_link(void *arg, const char *path, const char *target)
{
}

static void rec_exists(void *arg, const char *path, bool is_dir)
{
}

/* A recorder hook belongs to its sysroot: the other tree's reads skip it. */
static void test_recorder_per_sysroot(void **state)
{
	static const struct sysroot_recorder rec = {
		rec_file, rec_dir, rec_link, rec_exists,
	};
	struct fixture *f = *state;
	struct rec_log log = { 0 };
	char buf[64];

	sysroot_set_recorder(f->sr[0], &rec, &log);
	assert_true(sysroot_recording(f->sr[0]));
	assert_false(sysroot_recording(f->sr[1]));
	assert_int_equal(sysroot_read(f->sr[1], "/etc/which", buf,
				      sizeof(buf)), 9);
	assert_int_equal(log.files, 0);
	assert_int_equal(sysroot_read(f->sr[0], "/etc/which", buf,
				      sizeof(buf)), 10);
	assert_int_equal(log.files, 1);
	assert_string_equal(log.last, "/etc/which");
	sysroot_set_recorder(f->sr[0], NULL, NULL);
	assert_false(sysroot_recording(f->sr[0]));
}

/*
 * Two whole contexts: the inventory and the driver-module cache of each
 * come from its own tree, asked in turns (a process-wide cache would give
 * the second context the first one's module).
 */
static void test_two_contexts(void **state)
{
	struct fixture *f = *state;
	struct vendor_facts *vf = calloc(1, sizeof(*vf));
	struct options opt = { .gates = GATE_ALL };
	struct report rep[2];
	struct gdr_ctx ctx[2];
	static const char *const version[2] = { "580.159.04", "535.104.05" };
	static const enum nv_flavour flavour[2] = {
		NV_FLAVOUR_OPEN, NV_FLAVOUR_PROPRIETARY,
	};

	assert_non_null(vf);
	for (int i = 0; i < 2; i++) {
		report_init(&rep[i]);
		memset(&ctx[i], 0, sizeof(ctx[i]));
		ctx[i].opt = &opt;
		ctx[i].vf = vf;
		ctx[i].rep = &rep[i];
		ctx[i].sr = f->sr[i];
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 2; i++) {
			enum nv_flavour fl = NV_FLAVOUR_UNKNOWN;
			const char *v = NULL;

			assert_int_equal(nvidia_module(&ctx[i], &fl, &v), 0);
			assert_int_equal(fl, flavour[i]);
			assert_string_equal(v, version[i]);
		}
	inventory_build(&ctx[0]);
	inventory_build(&ctx[1]);
	assert_int_equal(ctx[0].inv.ngpu, 1);
	assert_string_equal(ctx[0].inv.gpu[0].pci, "0000:01:00.0");
	assert_int_equal(ctx[0].inv.gpu[0].pci_device, 0x2335);
	assert_int_equal(ctx[1].inv.ngpu, 2);
	assert_string_equal(ctx[1].inv.gpu[0].pci, "0000:41:00.0");
	assert_string_equal(ctx[1].inv.gpu[1].pci, "0000:c1:00.0");
	assert_int_equal(ctx[1].inv.gpu[1].pci_device, 0x1db4);
	for (int i = 0; i < 2; i++) {
		inventory_free(&ctx[i].inv);
		probe_caches_free(&ctx[i]);
		report_free(&rep[i]);
	}
	free(vf);
}

/*
 * The platform class is computed per context from its own sysroot: an x86
 * host with VT-d next to a Grace node (a Grace root port 10de:22b1,
 * arm-smmu-v3), classified in turns.
 */
static void test_two_platform_classes(void **state)
{
	struct fixture *f = *state;
	struct options opt = { .gates = GATE_ALL };
	struct pcinode node = { .bdf = "0000:00:00.0", .parent = -1,
				.bridge = true, .class_code = 0x060400 };
	struct gdr_ctx ctx[2];

	put(f->root[0], "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: "
	    "GenuineIntel\nflags\t\t: fpu vme hypervisor\n\n");
	dirs(f->root[0], "/sys/class/iommu/dmar0");
	dirs(f->root[1], "/proc/sys/kernel");
	put(f->root[1], "/proc/sys/kernel/arch", "aarch64\n");
	put(f->root[1], "/proc/sys/kernel/osrelease", "6.8.0-1013-nvidia-64k\n");
	dirs(f->root[1], "/sys/class/iommu/smmu3.0x0000000016000000");
	dirs(f->root[1], "/sys/bus/pci/devices/0000:00:00.0");
	put(f->root[1], "/sys/bus/pci/devices/0000:00:00.0/vendor", "0x10de\n");
	put(f->root[1], "/sys/bus/pci/devices/0000:00:00.0/device", "0x22b1\n");
	for (int i = 0; i < 2; i++) {
		memset(&ctx[i], 0, sizeof(ctx[i]));
		ctx[i].opt = &opt;
		ctx[i].sr = f->sr[i];
	}
	ctx[1].tree.n = &node;
	ctx[1].tree.count = 1;
	for (int round = 0; round < 2; round++) {
		const struct platform_class *a = ctx_platform(&ctx[0]);
		const struct platform_class *b = ctx_platform(&ctx[1]);

		assert_int_equal(a->kind, PLAT_KIND_X86);
		assert_int_equal(a->arch, PLAT_ARCH_X86_64);
		assert_int_equal(a->iommu, PLAT_IOMMU_INTEL);
		assert_int_equal(a->vm, 1);
		assert_false(a->grace);
		assert_false(a->kernel_known);
		assert_string_equal(a->describe, "x86_64 (GenuineIntel) guest");
		assert_int_equal(b->kind, PLAT_KIND_GRACE);
		assert_int_equal(b->arch, PLAT_ARCH_AARCH64);
		assert_int_equal(b->iommu, PLAT_IOMMU_SMMU_V3);
		assert_int_equal(b->vm, -1);
		assert_true(b->grace);
		assert_false(b->direct_nic);
		assert_string_equal(b->grace_rp, "0000:00:00.0");
		assert_true(b->kernel_known);
		assert_int_equal(b->kernel.major, 6);
		assert_int_equal(b->kernel.minor, 8);
	}
	for (int i = 0; i < 2; i++)
		probe_caches_free(&ctx[i]);
	assert_false(ctx[0].platform.known);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_sysroots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_realpath_cache_per_sysroot,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorder_per_sysroot,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_contexts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_platform_classes,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
