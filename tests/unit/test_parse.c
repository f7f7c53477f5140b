// SPDX-License-Identifier: MIT
/* Unit tests for the pure parsers and classifiers in decode/parse.h. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "decode/parse.h"

/* --- parse_kconfig_line --------------------------------------------------- */

/* Lines of siderolabs/talos#12021's /proc/config.gz and a distro config. */
static void test_kconfig_line(void **state)
{
	char v[16];

	(void)state;
	assert_int_equal(parse_kconfig_line("# CONFIG_PCI_P2PDMA is not set",
					    "CONFIG_PCI_P2PDMA", v, sizeof(v)), 0);
	assert_int_equal(parse_kconfig_line("CONFIG_PCI_P2PDMA=y\n",
					    "CONFIG_PCI_P2PDMA", v, sizeof(v)), 1);
	assert_string_equal(v, "y");
	assert_int_equal(parse_kconfig_line("CONFIG_INFINIBAND_USER_MEM=y",
				"CONFIG_INFINIBAND_USER_MEM", v, sizeof(v)), 1);
	/* A longer option with the same prefix is another option. */
	assert_int_equal(parse_kconfig_line("CONFIG_INFINIBAND_USER_MEM_X=y",
				"CONFIG_INFINIBAND_USER_MEM", v, sizeof(v)),
			 -ENOENT);
	assert_int_equal(parse_kconfig_line("# CONFIG_PCI_P2PDMA_X is not set",
					    "CONFIG_PCI_P2PDMA", v, sizeof(v)),
			 -ENOENT);
	assert_int_equal(parse_kconfig_line("CONFIG_DMA_SHARED_BUFFER",
				"CONFIG_DMA_SHARED_BUFFER", v, sizeof(v)), -ENOENT);
	assert_int_equal(parse_kconfig_line("CONFIG_NR_CPUS=8192",
					    "CONFIG_NR_CPUS", v, 3), 1);
	assert_string_equal(v, "81");
}

/* --- parse_kmsg_symbol_version ---------------------------------------- */

/* The records of NVIDIA/gpu-operator#2868's dmesg, as /dev/kmsg gives them. */
static void test_kmsg_symbol_version_real(void **state)
{
	char mod[32], sym[64];

	(void)state;
	assert_int_equal(parse_kmsg_symbol_version("4,1523,98765432,-;"
		"nvidia_peermem: disagrees about version of symbol "
		"ib_register_peer_memory_client\n", mod, sizeof(mod), sym,
		sizeof(sym)), 0);
	assert_string_equal(mod, "nvidia_peermem");
	assert_string_equal(sym, "ib_register_peer_memory_client");
	/* The line after it is another message. */
	assert_int_equal(parse_kmsg_symbol_version("4,1524,98765433,-;"
		"nvidia_peermem: Unknown symbol ib_register_peer_memory_client "
		"(err -22)\n", mod, sizeof(mod), sym, sizeof(sym)), -ENOENT);
}

static void test_kmsg_symbol_version_odd(void **state)
{
	char mod[8], sym[8];

	(void)state;
	/* No header: not a kmsg record. */
	assert_int_equal(parse_kmsg_symbol_version("nvidia_peermem: disagrees "
		"about version of symbol x", mod, sizeof(mod), sym,
		sizeof(sym)), -EINVAL);
	/* No module before it, a module with blanks, no symbol after it. */
	assert_int_equal(parse_kmsg_symbol_version("4,1,2,-;: disagrees about "
		"version of symbol x", mod, sizeof(mod), sym, sizeof(sym)),
		-ENOENT);
	assert_int_equal(parse_kmsg_symbol_version("4,1,2,-;a b: disagrees "
		"about version of symbol x", mod, sizeof(mod), sym,
		sizeof(sym)), -ENOENT);
	assert_int_equal(parse_kmsg_symbol_version("4,1,2,-;m: disagrees about "
		"version of symbol \n", mod, sizeof(mod), sym, sizeof(sym)),
		-ENOENT);
	/* Names longer than the buffers are cut, not overrun. */
	assert_int_equal(parse_kmsg_symbol_version("4,1,2,-;nvidia_peermem: "
		"disagrees about version of symbol ib_register", mod,
		sizeof(mod), sym, sizeof(sym)), 0);
	assert_string_equal(mod, "nvidia_");
	assert_string_equal(sym, "ib_regi");
}

/* --- parse_kernel_release / kver_cmp ------------------------------------ */

static void expect_kver(const char *s, int major, int minor, int patch)
{
	struct kver v = { -1, -1, -1 };

	assert_int_equal(parse_kernel_release(s, &v), 0);
	assert_int_equal(v.major, major);
	assert_int_equal(v.minor, minor);
	assert_int_equal(v.patch, patch);
}

static void expect_kver_bad(const char *s)
{
	struct kver v = { 7, 7, 7 };

	assert_int_equal(parse_kernel_release(s, &v), -EINVAL);
}

static void test_kernel_release_real(void **state)
{
	/* The H200 node's kernel. */
	expect_kver("6.18.44-fc-v657-gpu", 6, 18, 44);
	expect_kver("5.11.0-1-amd64", 5, 11, 0);
	/* RHEL: the "-553.el8_10" suffix must not leak into the patch. */
	expect_kver("4.18.0-553.el8_10.x86_64", 4, 18, 0);
	expect_kver("6.1.0-37-cloud-amd64", 6, 1, 0);
	expect_kver("5.15.0+", 5, 15, 0);
	/* Trailing newline as read from /proc/sys/kernel/osrelease. */
	expect_kver("6.8.12\n", 6, 8, 12);
}

static void test_kernel_release_two_parts(void **state)
{
	expect_kver("5.12", 5, 12, 0);
	expect_kver("6.0-rc1", 6, 0, 0);
	/* A dot not followed by a digit ends the version. */
	expect_kver("5.12.", 5, 12, 0);
	expect_kver("5.12.x", 5, 12, 0);
}

static void test_kernel_release_garbage(void **state)
{
	expect_kver_bad("");
	expect_kver_bad("abc");
	expect_kver_bad("v6.1.0");
	expect_kver_bad(" 6.1.0");
	expect_kver_bad("-6.1.0");
	expect_kver_bad("6.x");
	expect_kver_bad("6x");
	expect_kver_bad("6.");
	assert_int_equal(parse_kernel_release(NULL, &(struct kver){ 0 }),
			 -EINVAL);
}

/* parse.c says: "6" alone is no release. */
static void test_kernel_release_major_only(void **state)
{
	expect_kver_bad("6");
}

static void test_kernel_release_huge(void **state)
{
	expect_kver_bad("99999999999999999999999.1.0");
	expect_kver_bad("6.99999999999999999999999.0");
	expect_kver_bad("6.1.99999999999999999999999");
	expect_kver_bad("100001.0.0");
	expect_kver_bad("6.100001");
	/* The largest accepted component. */
	expect_kver("100000.100000.100000", 100000, 100000, 100000);
	/* Over INT_MAX but within long on LP64: must not wrap into an int. */
	expect_kver_bad("4294967302.0.0");
}

static void test_kver_cmp_boundaries(void **state)
{
	struct kver k;

	/* DMA-BUF MRs arrived in 5.12. */
	k = (struct kver){ 5, 11, 99 };
	assert_int_equal(kver_cmp(&k, 5, 12), -1);
	k = (struct kver){ 5, 12, 0 };
	assert_int_equal(kver_cmp(&k, 5, 12), 0);
	k = (struct kver){ 5, 12, 99 };
	assert_int_equal(kver_cmp(&k, 5, 12), 0);
	k = (struct kver){ 5, 13, 0 };
	assert_int_equal(kver_cmp(&k, 5, 12), 1);
	/* Major decides before minor. */
	k = (struct kver){ 4, 99, 0 };
	assert_int_equal(kver_cmp(&k, 5, 12), -1);
	k = (struct kver){ 6, 0, 0 };
	assert_int_equal(kver_cmp(&k, 5, 12), 1);
	k = (struct kver){ 6, 18, 44 };
	assert_int_equal(kver_cmp(&k, 5, 12), 1);
}

/* --- parse_memlock ------------------------------------------------------- */

static const char limits_text[] =
	"Limit                     Soft Limit           Hard Limit           Units     \n"
	"Max cpu time              unlimited            unlimited            seconds   \n"
	"Max file size             unlimited            unlimited            bytes     \n"
	"Max stack size            8388608              unlimited            bytes     \n"
	"Max core file size        0                    unlimited            bytes     \n"
	"Max open files            1048576              1048576              files     \n"
	"Max locked memory         8388608              unlimited            bytes     \n"
	"Max address space         unlimited            unlimited            bytes     \n"
	"Max realtime timeout      unlimited            unlimited            us        \n";

static void test_memlock_real(void **state)
{
	long long soft = 0, hard = 0;

	assert_int_equal(parse_memlock(limits_text, &soft, &hard), 0);
	assert_int_equal(soft, 8388608);
	assert_int_equal(hard, LIMIT_UNLIMITED);
}

static void test_memlock_unlimited_both(void **state)
{
	const char *t = "Max open files            1024                 4096                 files     \n"
			"Max locked memory         unlimited            unlimited            bytes     \n";
	long long soft = 0, hard = 0;

	assert_int_equal(parse_memlock(t, &soft, &hard), 0);
	assert_int_equal(soft, LIMIT_UNLIMITED);
	assert_int_equal(hard, LIMIT_UNLIMITED);
}

static void test_memlock_numbers(void **state)
{
	const char *t = "Max locked memory         65536                131072               bytes\n";
	long long soft = 0, hard = 0;

	assert_int_equal(parse_memlock(t, &soft, &hard), 0);
	assert_int_equal(soft, 65536);
	assert_int_equal(hard, 131072);
}

/* Cross-check against the kernel: our own limits file and getrlimit. */
static void test_memlock_live(void **state)
{
	char buf[8192];
	struct rlimit rl;
	long long soft, hard;
	FILE *f = fopen("/proc/self/limits", "r");
	size_t n;

	if (!f)
		skip();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	assert_int_equal(parse_memlock(buf, &soft, &hard), 0);
	assert_true(soft == (rl.rlim_cur == RLIM_INFINITY ? LIMIT_UNLIMITED :
			     (long long)rl.rlim_cur));
	assert_true(hard == (rl.rlim_max == RLIM_INFINITY ? LIMIT_UNLIMITED :
			     (long long)rl.rlim_max));
}

static void test_memlock_malformed(void **state)
{
	long long soft, hard;

	/* No memlock line at all. */
	assert_int_equal(parse_memlock("Max open files 1024 4096 files\n",
				       &soft, &hard), -EINVAL);
	assert_int_equal(parse_memlock("", &soft, &hard), -EINVAL);
	/* Only one value, last line. */
	assert_int_equal(parse_memlock("Max locked memory         65536\n",
				       &soft, &hard), -EINVAL);
	/* One value, then the next line must not be taken as the hard one. */
	assert_int_equal(parse_memlock("Max locked memory  65536\n"
				       "Max address space  unlimited unlimited bytes\n",
				       &soft, &hard), -EINVAL);
	assert_int_equal(parse_memlock("Max locked memory  64k  128k  bytes\n",
				       &soft, &hard), -EINVAL);
	assert_int_equal(parse_memlock("Max locked memory  -1  -1  bytes\n",
				       &soft, &hard), -EINVAL);
	assert_int_equal(parse_memlock("Max locked memory  unlimited  infinite  bytes\n",
				       &soft, &hard), -EINVAL);
	assert_int_equal(parse_memlock("Max locked memory  99999999999999999999  1  bytes\n",
				       &soft, &hard), -EINVAL);
}

/* --- parse_status -------------------------------------------------------- */

static const char status_text[] =
	"Name:\tgdrcheck\n"
	"Umask:\t0022\n"
	"State:\tR (running)\n"
	"Tgid:\t4242\n"
	"Pid:\t4242\n"
	"PPid:\t1\n"
	"Uid:\t1000\t0\t0\t0\n"
	"Gid:\t1000\t1000\t1000\t1000\n"
	"CapInh:\t0000000000000000\n"
	"CapPrm:\t000001ffffffffff\n"
	"CapEff:\t0000000000200000\n"
	"CapBnd:\t000001ffffffffff\n";

static void test_status_real(void **state)
{
	long euid = -1;
	unsigned long long cap = 0;

	assert_int_equal(parse_status(status_text, &euid, &cap), 0);
	/* Second Uid field is the effective one (real uid is 1000). */
	assert_int_equal(euid, 0);
	/* CapEff, not CapPrm or CapBnd: only CAP_SYS_RESOURCE (bit 21). */
	assert_true(cap == 0x200000ULL);
}

static void test_status_uid_first_line(void **state)
{
	long euid = -1;
	unsigned long long cap = 1;

	assert_int_equal(parse_status("Uid:\t0\t1000\t1000\t1000\n"
				      "CapEff:\t000001ffffffffff\n",
				      &euid, &cap), 0);
	assert_int_equal(euid, 1000);
	assert_true(cap == 0x1ffffffffffULL);
}

static void test_status_live(void **state)
{
	char buf[8192];
	long euid;
	unsigned long long cap;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n;

	if (!f)
		skip();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_int_equal(parse_status(buf, &euid, &cap), 0);
	assert_int_equal(euid, (long)geteuid());
}

static void test_status_malformed(void **state)
{
	long euid;
	unsigned long long cap;

	assert_int_equal(parse_status("Name:\tx\nGid:\t0\t0\t0\t0\n",
				      &euid, &cap), -EINVAL);
	assert_int_equal(parse_status("Name:\tx\nUid:\tabc\t0\n",
				      &euid, &cap), -EINVAL);
	/* Only one Uid field. */
	assert_int_equal(parse_status("Name:\tx\nUid:\t0\nGid:\t0\n",
				      &euid, &cap), -EINVAL);
	assert_int_equal(parse_status("Name:\tx\nUid:\t0\t-5\t0\t0\n",
				      &euid, &cap), -EINVAL);
	assert_int_equal(parse_status("Name:\tx\nUid:\t0\t0\t0\t0\nCapEff:\tzz\n",
				      &euid, &cap), -EINVAL);
	assert_int_equal(parse_status("", &euid, &cap), -EINVAL);
}

/* --- parse_nvidia_version ------------------------------------------------ */

static void expect_nv(const char *text, enum nv_flavour fl, const char *ver)
{
	enum nv_flavour f = NV_FLAVOUR_UNKNOWN;
	char v[32] = "sentinel";

	assert_int_equal(parse_nvidia_version(text, &f, v, sizeof(v)), 0);
	assert_int_equal(f, fl);
	assert_string_equal(v, ver);
}

static void test_nvidia_open_h200(void **state)
{
	/* Verbatim from the H200 node (NixOS build). */
	expect_nv("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
		  "580.159.04  Release Build  (nixbld@)  \n"
		  "GCC version:  gcc version 14.3.0 (GCC) \n",
		  NV_FLAVOUR_OPEN, "580.159.04");
	assert_string_equal(nv_flavour_name(NV_FLAVOUR_OPEN), "open");
}

static void test_nvidia_proprietary(void **state)
{
	expect_nv("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  "
		  "Sat Aug 19 01:15:15 UTC 2023\n"
		  "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n",
		  NV_FLAVOUR_PROPRIETARY, "535.104.05");
	/* Without a trailing newline. */
	expect_nv("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  "
		  "Tue Oct 26 21:21:48 UTC 2021",
		  NV_FLAVOUR_PROPRIETARY, "470.82.01");
	assert_string_equal(nv_flavour_name(NV_FLAVOUR_PROPRIETARY),
			    "proprietary");
	assert_string_equal(nv_flavour_name(NV_FLAVOUR_UNKNOWN), "unknown");
}

static void test_nvidia_aarch64(void **state)
{
	expect_nv("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
		  "580.65.06  Release Build  (dvs-builder@U16-I2-C03-12-4)  "
		  "Sun Jul 27 06:58:49 UTC 2025\n",
		  NV_FLAVOUR_OPEN, "580.65.06");
	expect_nv("NVRM version: NVIDIA UNIX aarch64 Kernel Module  "
		  "535.104.05  Sat Aug 19 00:59:57 UTC 2023\n",
		  NV_FLAVOUR_PROPRIETARY, "535.104.05");
}

static void test_nvidia_garbage(void **state)
{
	enum nv_flavour f = NV_FLAVOUR_OPEN;
	char v[32] = "sentinel";

	assert_int_equal(parse_nvidia_version("", &f, v, sizeof(v)), -EINVAL);
	assert_int_equal(f, NV_FLAVOUR_UNKNOWN);
	assert_string_equal(v, "");
	assert_int_equal(parse_nvidia_version("hello world\n", &f, v, sizeof(v)),
			 -EINVAL);
	/* Not a kernel module line. */
	assert_int_equal(parse_nvidia_version("NVRM version: something 1.2.3\n",
					      &f, v, sizeof(v)), -EINVAL);
	/* A module line without a version. */
	assert_int_equal(parse_nvidia_version(
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  Release Build\n",
		&f, v, sizeof(v)), -EINVAL);
	/* The version must come from the first line, not the GCC line. */
	assert_int_equal(parse_nvidia_version(
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown\n"
		"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n",
		&f, v, sizeof(v)), -EINVAL);
	/* "Kernel Module" only on the second line does not count either. */
	assert_int_equal(parse_nvidia_version(
		"NVRM version: NVIDIA UNIX x86_64  535.104.05\n"
		"Kernel Module\n", &f, v, sizeof(v)), -EINVAL);
	/* Digits glued to letters are no version token. */
	assert_int_equal(parse_nvidia_version(
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  r535.104.05\n",
		&f, v, sizeof(v)), -EINVAL);
}

static void test_nvidia_buffer_too_small(void **state)
{
	const char *t = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
			"580.159.04  Release Build  (nixbld@)  \n";
	enum nv_flavour f;
	char v[16];

	/* "580.159.04" is 10 characters: 10 bytes is one short. */
	assert_int_equal(parse_nvidia_version(t, &f, v, 10), -EINVAL);
	assert_int_equal(parse_nvidia_version(t, &f, v, 11), 0);
	assert_string_equal(v, "580.159.04");
	assert_int_equal(parse_nvidia_version(t, &f, v, 0), -EINVAL);
}

/* --- parse_num_name ------------------------------------------------------ */

static void test_num_name(void **state)
{
	char name[16] = "";
	int num = -1;

	assert_int_equal(parse_num_name("4: ACTIVE", &num, name, sizeof(name)), 0);
	assert_int_equal(num, 4);
	assert_string_equal(name, "ACTIVE");
	assert_int_equal(parse_num_name("5: LinkUp", &num, name, sizeof(name)), 0);
	assert_int_equal(num, 5);
	assert_string_equal(name, "LinkUp");
	assert_int_equal(parse_num_name("0:DOWN", &num, name, sizeof(name)), 0);
	assert_int_equal(num, 0);
	assert_string_equal(name, "DOWN");
	/* "7: Phy Test Mode" keeps its inner spaces. */
	assert_int_equal(parse_num_name("7: Phy Test Mode", &num, name,
					sizeof(name)), 0);
	assert_string_equal(name, "Phy Test Mode");
}

static void test_num_name_malformed(void **state)
{
	char name[8] = "keep";
	int num = 99;

	assert_int_equal(parse_num_name("ACTIVE", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("4 ACTIVE", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("4:", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("4:   ", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name(": ACTIVE", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("-1: X", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("256: X", &num, name, sizeof(name)), -EINVAL);
	assert_int_equal(parse_num_name("", &num, name, sizeof(name)), -EINVAL);
	/* "ACTIVE_DEFER" needs 13 bytes: too long for 8. */
	assert_int_equal(parse_num_name("5: ACTIVE_DEFER", &num, name,
					sizeof(name)), -EINVAL);
	/* Exactly fits: 7 characters and the NUL. */
	assert_int_equal(parse_num_name("5: ACTIVE7", &num, name, sizeof(name)), 0);
	assert_string_equal(name, "ACTIVE7");
	assert_int_equal(num, 5);
}

static void test_num_name_untouched_on_error(void **state)
{
	char name[8] = "keep";
	int num = 99;

	assert_int_equal(parse_num_name("5: ACTIVE_DEFER", &num, name,
					sizeof(name)), -EINVAL);
	assert_int_equal(num, 99);
	assert_string_equal(name, "keep");
}

/* --- parse_resource_line / pci_nth_mem_bar ------------------------------- */

/* The H200's sysfs resource file: BAR0 is 64-bit, so BAR1 is register 2. */
static const char h200_resource[] =
	"0x0000104002000000 0x0000104002ffffff 0x000000000014220c\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	"0x0000100000000000 0x0000103fffffffff 0x000000000014220c\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	"0x0000104000000000 0x0000104001ffffff 0x000000000014220c\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n";

/* A V100-style layout: 32-bit BAR0, 64-bit BAR1 at register 1, I/O BAR5. */
static const char v100_resource[] =
	"0x00000000fd000000 0x00000000fdffffff 0x0000000000040200\n"
	"0x0000038000000000 0x00000387ffffffff 0x000000000014220c\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	"0x0000038800000000 0x0000038801ffffff 0x000000000014220c\n"
	"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	"0x000000000000e000 0x000000000000e07f 0x0000000000040101\n"
	"0x00000000fe000000 0x00000000fe07ffff 0x0000000000046200\n";

static void test_resource_line(void **state)
{
	unsigned long long s = 1, e = 1, f = 1;

	assert_int_equal(parse_resource_line(h200_resource, 0, &s, &e, &f), 0);
	assert_true(s == 0x104002000000ULL);
	assert_true(e == 0x104002ffffffULL);
	assert_true(f == 0x14220cULL);
	assert_int_equal(parse_resource_line(h200_resource, 2, &s, &e, &f), 0);
	assert_true(s == 0x100000000000ULL);
	assert_true(e == 0x103fffffffffULL);
	assert_int_equal(parse_resource_line(h200_resource, 1, &s, &e, &f), 0);
	assert_true(s == 0 && e == 0 && f == 0);
	assert_int_equal(parse_resource_line(h200_resource, 6, &s, &e, &f), 0);
	/* Past the last line. */
	assert_int_equal(parse_resource_line(h200_resource, 7, &s, &e, &f),
			 -EINVAL);
	assert_int_equal(parse_resource_line(h200_resource, 100, &s, &e, &f),
			 -EINVAL);
}

static void test_resource_line_malformed(void **state)
{
	unsigned long long s, e, f;

	assert_int_equal(parse_resource_line("", 0, &s, &e, &f), -EINVAL);
	assert_int_equal(parse_resource_line("0x1000 0x1fff\n", 0, &s, &e, &f),
			 -EINVAL);
	assert_int_equal(parse_resource_line("zz 0x1fff 0x200\n", 0, &s, &e, &f),
			 -EINVAL);
	/* Junk glued to a number is no number. */
	assert_int_equal(parse_resource_line("0x1000 0x1fffzz 0x200\n", 0,
					     &s, &e, &f), -EINVAL);
	assert_int_equal(parse_resource_line("0x1000 -0x1fff 0x200\n", 0,
					     &s, &e, &f), -EINVAL);
	/* End below start: a span outside the domain, not a BAR. */
	assert_int_equal(parse_resource_line("0x2000 0x1fff 0x200\n", 0,
					     &s, &e, &f), -ERANGE);
}

/* Values that do not fit in 64 bits are out of range, never saturated. */
static void test_resource_line_overflow(void **state)
{
	unsigned long long s, e, f;
	int reg = -1;

	/* 17 hex digits: one past 64 bits in each field. */
	assert_int_equal(parse_resource_line(
		"0x10000000000000000 0x10000000000000fff 0x200\n", 0,
		&s, &e, &f), -ERANGE);
	assert_int_equal(parse_resource_line(
		"0x1000 0x1ffffffffffffffff 0x200\n", 0, &s, &e, &f), -ERANGE);
	assert_int_equal(parse_resource_line(
		"0x1000 0x1fff 0xfffffffffffffffffff\n", 0, &s, &e, &f),
		-ERANGE);
	/* The whole 64-bit space: end - start + 1 wraps to 0. */
	assert_int_equal(parse_resource_line(
		"0x0 0xffffffffffffffff 0x200\n", 0, &s, &e, &f), -ERANGE);
	/* The largest span that still fits is a value. */
	assert_int_equal(parse_resource_line(
		"0x1 0xffffffffffffffff 0x200\n", 0, &s, &e, &f), 0);
	assert_true(e - s + 1 == 0xffffffffffffffffULL);
	assert_int_equal(parse_resource_line(
		"0x0 0xfffffffffffffffe 0x200\n", 0, &s, &e, &f), 0);
	/* The BAR walk passes the class on, with the line at fault. */
	assert_int_equal(pci_nth_mem_bar(
		"0x1000 0x1fff 0x200\n"
		"0x100000000 0x1ffffffffffffffffff 0x14220c\n", 1, &reg, &s, &e),
		-ERANGE);
	assert_int_equal(reg, 1);
	assert_int_equal(pci_nth_mem_bar("0x1000 0x1fff 0x200\nzz\n", 1,
					 &reg, &s, &e), -EINVAL);
	assert_int_equal(reg, 1);
}

/* --- errno classes and value domains --------------------------------- */

static void test_path_state(void **state)
{
	assert_int_equal(path_state_of(0), PATH_PRESENT);
	/* Only "no such entry" is absence. */
	assert_int_equal(path_state_of(-ENOENT), PATH_ABSENT);
	assert_int_equal(path_state_of(-ENOTDIR), PATH_ABSENT);
	/* Everything else hides what is there. */
	assert_int_equal(path_state_of(-EACCES), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-EPERM), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-ENAMETOOLONG), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-ELOOP), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-EIO), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-ENOMEM), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-EFBIG), PATH_UNREADABLE);
	assert_int_equal(path_state_of(-EINVAL), PATH_UNREADABLE);
}

static void test_link_speed(void **state)
{
	double g = -1;

	assert_int_equal(parse_link_speed("32.0 GT/s PCIe", &g), 0);
	assert_true(g == 32.0);
	assert_int_equal(parse_link_speed("2.5 GT/s PCIe", &g), 0);
	assert_true(g == 2.5);
	assert_int_equal(parse_link_speed("8.0 GT/s", &g), 0);	/* < 4.13 */
	assert_true(g == 8.0);
	assert_int_equal(parse_link_speed("64.0 GT/s PCIe", &g), 0);
	/* What the kernel prints when it cannot tell: not a speed. */
	assert_int_equal(parse_link_speed("Unknown", &g), -EINVAL);
	assert_int_equal(parse_link_speed("Unknown speed", &g), -EINVAL);
	assert_int_equal(parse_link_speed("", &g), -EINVAL);
	assert_int_equal(parse_link_speed("32.0 GB/s", &g), -EINVAL);
	assert_int_equal(parse_link_speed("32.0 GT/sPCIe", &g), -EINVAL);
	assert_int_equal(parse_link_speed("32.0", &g), -EINVAL);
	assert_int_equal(parse_link_speed("-8.0 GT/s", &g), -EINVAL);
	assert_int_equal(parse_link_speed("nan GT/s", &g), -EINVAL);
	/* Numbers no PCIe generation runs at. */
	assert_int_equal(parse_link_speed("0.0 GT/s PCIe", &g), -ERANGE);
	assert_int_equal(parse_link_speed("2.4 GT/s PCIe", &g), -ERANGE);
	assert_int_equal(parse_link_speed("1e300 GT/s PCIe", &g), -ERANGE);
	assert_int_equal(parse_link_speed("1e999 GT/s PCIe", &g), -EINVAL);
	assert_int_equal(parse_link_speed("512.0 GT/s PCIe", &g), -ERANGE);
}

static void test_link_width(void **state)
{
	static const int ok[] = { 1, 2, 4, 8, 12, 16, 32 };
	char buf[16];
	int w = -1;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(buf, sizeof(buf), "%d", ok[i]);
		assert_int_equal(parse_link_width(buf, &w), 0);
		assert_int_equal(w, ok[i]);
	}
	/* x0: the link is down; the raw value is kept. */
	assert_int_equal(parse_link_width("0", &w), -ERANGE);
	assert_int_equal(w, 0);
	assert_int_equal(parse_link_width("3", &w), -ERANGE);
	assert_int_equal(w, 3);
	assert_int_equal(parse_link_width("64", &w), -ERANGE);
	assert_int_equal(parse_link_width("255", &w), -ERANGE);
	assert_int_equal(parse_link_width("99999999999999999999", &w), -ERANGE);
	assert_int_equal(parse_link_width("2147483648", &w), -ERANGE);
	/* Not numbers at all. */
	assert_int_equal(parse_link_width("x16", &w), -EINVAL);
	assert_int_equal(parse_link_width("", &w), -EINVAL);
	assert_int_equal(parse_link_width("-1", &w), -EINVAL);
	assert_int_equal(parse_link_width("16 lanes", &w), -EINVAL);
	assert_int_equal(parse_link_width("Unknown", &w), -EINVAL);
}

static void test_numa_node(void **state)
{
	/* -1: no NUMA affinity, legitimate everywhere. */
	assert_int_equal(numa_node_check(-1, 0), 0);
	assert_int_equal(numa_node_check(-1, 2), 0);
	assert_int_equal(numa_node_check(0, 2), 0);
	assert_int_equal(numa_node_check(1, 2), 0);
	/* A node the machine does not have. */
	assert_int_equal(numa_node_check(2, 2), -ERANGE);
	assert_int_equal(numa_node_check(9999, 2), -ERANGE);
	/* Count unknown: the kernel's largest MAX_NUMNODES bounds it. */
	assert_int_equal(numa_node_check(NUMA_NODES_MAX - 1, 0), 0);
	assert_int_equal(numa_node_check(NUMA_NODES_MAX, 0), -ERANGE);
	assert_int_equal(numa_node_check(9999, 0), -ERANGE);
	assert_int_equal(numa_node_check(-2, 0), -ERANGE);
	assert_int_equal(numa_node_check(LLONG_MIN, 0), -ERANGE);
	assert_int_equal(numa_node_check(LLONG_MAX, 0), -ERANGE);
	assert_int_equal(numa_node_check(4294967296LL, 0), -ERANGE);
}

static void test_port_state_domain(void **state)
{
	assert_int_equal(ib_port_state_check(4, "ACTIVE"), 0);
	assert_int_equal(ib_port_state_check(1, "DOWN"), 0);
	assert_int_equal(ib_port_state_check(5, "ACTIVE_DEFER"), 0);
	assert_int_equal(ib_port_state_check(0, "NOP"), 0);
	/* Number and name disagree, or neither is a state. */
	assert_int_equal(ib_port_state_check(4, "DOWN"), -ERANGE);
	assert_int_equal(ib_port_state_check(1, "ACTIVE"), -ERANGE);
	assert_int_equal(ib_port_state_check(6, "ACTIVE"), -ERANGE);
	assert_int_equal(ib_port_state_check(9, "FOO"), -ERANGE);
	assert_int_equal(ib_port_state_check(-1, "DOWN"), -ERANGE);
	assert_int_equal(ib_port_state_check(4, "active"), -ERANGE);
	assert_int_equal(ib_port_state_check(4, ""), -ERANGE);
}

static void test_cuda_attr_domain(void **state)
{
	static const int bools[] = { 110, 116, 124 };
	static const int junk[] = { 2, -1, INT32_MIN, INT32_MAX, 100 };

	for (size_t a = 0; a < 3; a++) {
		assert_int_equal(cuda_attr_check(bools[a], 0), 0);
		assert_int_equal(cuda_attr_check(bools[a], 1), 0);
		for (size_t j = 0; j < sizeof(junk) / sizeof(junk[0]); j++)
			assert_int_equal(cuda_attr_check(bools[a], junk[j]),
					 -ERANGE);
	}
	/* FLUSH_WRITES_OPTIONS (117): a mask of HOST | MEMOPS. */
	for (int v = 0; v <= 3; v++)
		assert_int_equal(cuda_attr_check(117, v), 0);
	assert_int_equal(cuda_attr_check(117, 4), -ERANGE);
	assert_int_equal(cuda_attr_check(117, -1), -ERANGE);
	assert_int_equal(cuda_attr_check(117, INT32_MIN), -ERANGE);
	/* WRITES_ORDERING (118): NONE 0, OWNER 100, ALL_DEVICES 200. */
	assert_int_equal(cuda_attr_check(118, 0), 0);
	assert_int_equal(cuda_attr_check(118, 100), 0);
	assert_int_equal(cuda_attr_check(118, 200), 0);
	assert_int_equal(cuda_attr_check(118, 1), -ERANGE);
	assert_int_equal(cuda_attr_check(118, 300), -ERANGE);
	assert_int_equal(cuda_attr_check(118, INT32_MIN), -ERANGE);
	/* Compute capability (75/76). */
	assert_int_equal(cuda_attr_check(75, 9), 0);
	assert_int_equal(cuda_attr_check(75, 1), 0);
	assert_int_equal(cuda_attr_check(75, 0), -ERANGE);
	assert_int_equal(cuda_attr_check(75, 100), -ERANGE);
	assert_int_equal(cuda_attr_check(75, INT32_MIN), -ERANGE);
	assert_int_equal(cuda_attr_check(76, 0), 0);
	assert_int_equal(cuda_attr_check(76, 9), 0);
	assert_int_equal(cuda_attr_check(76, 10), -ERANGE);
	assert_int_equal(cuda_attr_check(76, -1), -ERANGE);
	/* Compute mode (20): DEFAULT 0 .. EXCLUSIVE_PROCESS 3. */
	for (int v = 0; v <= 3; v++)
		assert_int_equal(cuda_attr_check(20, v), 0);
	assert_int_equal(cuda_attr_check(20, 4), -ERANGE);
	assert_int_equal(cuda_attr_check(20, -1), -ERANGE);
	assert_int_equal(cuda_attr_check(20, INT32_MIN), -ERANGE);
	assert_string_equal(cuda_compute_mode_name(0), "DEFAULT");
	assert_string_equal(cuda_compute_mode_name(2), "PROHIBITED");
	assert_string_equal(cuda_compute_mode_name(3), "EXCLUSIVE_PROCESS");
	assert_null(cuda_compute_mode_name(4));
	/* An attribute without a known domain is not vetted as one. */
	assert_int_equal(cuda_attr_check(1, 0), -EINVAL);
	/* Driver versions. */
	assert_int_equal(cuda_driver_version_check(13000), 0);
	assert_int_equal(cuda_driver_version_check(1000), 0);
	assert_int_equal(cuda_driver_version_check(999), -ERANGE);
	assert_int_equal(cuda_driver_version_check(0), -ERANGE);
	assert_int_equal(cuda_driver_version_check(-1), -ERANGE);
	assert_int_equal(cuda_driver_version_check(INT32_MIN), -ERANGE);
	assert_int_equal(cuda_driver_version_check(INT32_MAX), -ERANGE);
}

static void test_bar_h200(void **state)
{
	unsigned long long s = 0, e = 0;
	int reg = -1;

	assert_int_equal(pci_nth_mem_bar(h200_resource, 0, &reg, &s, &e), 0);
	assert_int_equal(reg, 0);
	assert_true(e - s + 1 == 16ULL << 20);
	/* NVIDIA's BAR1: the second memory BAR, register 2, 256 GiB. */
	assert_int_equal(pci_nth_mem_bar(h200_resource, 1, &reg, &s, &e), 0);
	assert_int_equal(reg, 2);
	assert_true(s == 0x100000000000ULL);
	assert_true(e - s + 1 == 256ULL << 30);
	assert_int_equal(pci_nth_mem_bar(h200_resource, 2, &reg, &s, &e), 0);
	assert_int_equal(reg, 4);
	assert_true(e - s + 1 == 32ULL << 20);
	assert_int_equal(pci_nth_mem_bar(h200_resource, 3, &reg, &s, &e),
			 -ENOENT);
}

static void test_bar_32bit_bar0(void **state)
{
	unsigned long long s = 0, e = 0;
	int reg = -1;

	assert_int_equal(pci_nth_mem_bar(v100_resource, 1, &reg, &s, &e), 0);
	assert_int_equal(reg, 1);
	assert_true(e - s + 1 == 32ULL << 30);
	assert_int_equal(pci_nth_mem_bar(v100_resource, 2, &reg, &s, &e), 0);
	assert_int_equal(reg, 3);
	/* BAR5 is I/O and line 6 (the ROM) is never a BAR. */
	assert_int_equal(pci_nth_mem_bar(v100_resource, 3, &reg, &s, &e),
			 -ENOENT);
}

static void test_bar_io_skipped(void **state)
{
	/* An I/O BAR in register 0 shifts every memory BAR by one. */
	const char *t =
		"0x000000000000e000 0x000000000000e07f 0x0000000000040101\n"
		"0x00000000f0000000 0x00000000f0ffffff 0x0000000000040200\n"
		"0x000000000000d000 0x000000000000d0ff 0x0000000000040101\n"
		"0x00000000e0000000 0x00000000efffffff 0x0000000000042208\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
	unsigned long long s = 0, e = 0;
	int reg = -1;

	assert_int_equal(pci_nth_mem_bar(t, 0, &reg, &s, &e), 0);
	assert_int_equal(reg, 1);
	assert_true(s == 0xf0000000ULL);
	assert_int_equal(pci_nth_mem_bar(t, 1, &reg, &s, &e), 0);
	assert_int_equal(reg, 3);
	assert_true(e - s + 1 == 256ULL << 20);
	assert_int_equal(pci_nth_mem_bar(t, 2, &reg, &s, &e), -ENOENT);
}

static void test_bar_truncated_and_few(void **state)
{
	/* Three lines, and the second BAR is not among them. */
	const char *trunc =
		"0x00000000fd000000 0x00000000fdffffff 0x0000000000040200\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
	/* A malformed line in the middle. */
	const char *junk =
		"0x00000000fd000000 0x00000000fdffffff 0x0000000000040200\n"
		"garbage\n"
		"0x0000038000000000 0x00000387ffffffff 0x000000000014220c\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
	/* Six full lines but only one memory BAR. */
	const char *one =
		"0x00000000fd000000 0x00000000fdffffff 0x0000000000040200\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
		"0x000000000000e000 0x000000000000e07f 0x0000000000040101\n";
	unsigned long long s, e;
	int reg;

	assert_int_equal(pci_nth_mem_bar(trunc, 1, &reg, &s, &e), -EINVAL);
	assert_int_equal(pci_nth_mem_bar(junk, 1, &reg, &s, &e), -EINVAL);
	assert_int_equal(pci_nth_mem_bar("", 0, &reg, &s, &e), -EINVAL);
	assert_int_equal(pci_nth_mem_bar(one, 1, &reg, &s, &e), -ENOENT);
	assert_int_equal(pci_nth_mem_bar(one, 0, &reg, &s, &e), 0);
	assert_int_equal(reg, 0);
}

/* --- parse_gid ----------------------------------------------------------- */

static void test_gid(void **state)
{
	bool zero = false;

	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000\n",
				   &zero), 0);
	assert_true(zero);
	assert_int_equal(parse_gid("fe80:0000:0000:0000:0a00:27ff:fe4b:91c2",
				   &zero), 0);
	assert_false(zero);
	/* RoCE v2 IPv4-mapped GID, upper case hex. */
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:FFFF:C0A8:0001\n",
				   &zero), 0);
	assert_false(zero);
	/* Only the last digit non-zero. */
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0001",
				   &zero), 0);
	assert_false(zero);
}

static void test_gid_malformed(void **state)
{
	bool zero;

	assert_int_equal(parse_gid("", &zero), -EINVAL);
	assert_int_equal(parse_gid("fe80::1", &zero), -EINVAL);
	/* Seven groups, nine groups. */
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000", &zero),
			 -EINVAL);
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000:0000",
				   &zero), -EINVAL);
	/* Short and long groups. */
	assert_int_equal(parse_gid("fe80:0:0000:0000:0000:0000:0000:0000", &zero),
			 -EINVAL);
	assert_int_equal(parse_gid("fe800:0000:0000:0000:0000:0000:0000:000",
				   &zero), -EINVAL);
	assert_int_equal(parse_gid("fe80:0000:0000:0000:0000:0000:0000:00g1",
				   &zero), -EINVAL);
	/* A trailing colon. */
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000:",
				   &zero), -EINVAL);
	assert_int_equal(parse_gid("0000:0000:0000:0000:0000:0000:0000:0000 ",
				   &zero), -EINVAL);
}

/* --- container_from_cgroup ----------------------------------------------- */

static void test_container(void **state)
{
	assert_string_equal(container_from_cgroup(
		"0::/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod1234.slice/cri-containerd-abcd.scope\n"),
		"kubepods");
	assert_string_equal(container_from_cgroup(
		"0::/system.slice/docker-0123456789abcdef.scope\n"), "docker");
	assert_string_equal(container_from_cgroup(
		"12:devices:/docker/0123456789abcdef\n"
		"11:memory:/docker/0123456789abcdef\n"), "docker");
	assert_string_equal(container_from_cgroup(
		"0::/machine.slice/libpod-0123abcd.scope/container\n"), "libpod");
	assert_string_equal(container_from_cgroup("0::/lxc.payload.c1\n"), "lxc");
	assert_null(container_from_cgroup("0::/init.scope\n"));
	assert_null(container_from_cgroup("0::/\n"));
	assert_null(container_from_cgroup(""));
}

/* --- cuda_version_string ------------------------------------------------- */

static void test_cuda_version(void **state)
{
	char b[16];

	cuda_version_string(13000, b, sizeof(b));
	assert_string_equal(b, "13.0");
	cuda_version_string(11070, b, sizeof(b));
	assert_string_equal(b, "11.7");
	cuda_version_string(12040, b, sizeof(b));
	assert_string_equal(b, "12.4");
	cuda_version_string(12090, b, sizeof(b));
	assert_string_equal(b, "12.9");
	cuda_version_string(10010, b, sizeof(b));
	assert_string_equal(b, "10.1");
	/* Truncates, never overflows. */
	memset(b, 'x', sizeof(b));
	cuda_version_string(12040, b, 3);
	assert_string_equal(b, "12");
	assert_int_equal(b[3], 'x');
}

/* --- classify_dmabuf_probe / classify_open_errno ------------------------- */

static void expect_class(struct classified c, enum gdr_status st,
			 const char *code)
{
	assert_int_equal(c.status, st);
	assert_string_equal(c.code, code);
	assert_non_null(c.meaning);
	assert_true(strlen(c.meaning) > 0);
}

static void test_classify_dmabuf(void **state)
{
	expect_class(classify_dmabuf_probe(EBADF), ST_PASS, "PROVIDER_DMABUF_OK");
	expect_class(classify_dmabuf_probe(EOPNOTSUPP), ST_BLOCKED,
		     "PROVIDER_LACKS_DMABUF");
	expect_class(classify_dmabuf_probe(EPROTONOSUPPORT), ST_BLOCKED,
		     "KERNEL_LACKS_DMABUF");
	expect_class(classify_dmabuf_probe(EINVAL), ST_ERROR,
		     "PROVIDER_PROBE_UNEXPECTED");
	/* Success registering fd -1 is no answer we can trust. */
	expect_class(classify_dmabuf_probe(0), ST_ERROR,
		     "PROVIDER_PROBE_UNEXPECTED");
	expect_class(classify_dmabuf_probe(ENOMEM), ST_ERROR,
		     "PROVIDER_PROBE_UNEXPECTED");
	/* The meaning names the errno that led to it. */
	assert_non_null(strstr(classify_dmabuf_probe(EBADF).meaning, "EBADF"));
	assert_non_null(strstr(classify_dmabuf_probe(EPROTONOSUPPORT).meaning,
			       "EPROTONOSUPPORT"));
}

static void test_classify_open(void **state)
{
	expect_class(classify_open_errno(EACCES), ST_BLOCKED, "UVERBS_PERMISSION");
	expect_class(classify_open_errno(EPERM), ST_BLOCKED, "UVERBS_PERMISSION");
	expect_class(classify_open_errno(ENOENT), ST_BLOCKED, "UVERBS_NODE_MISSING");
	expect_class(classify_open_errno(ENXIO), ST_BLOCKED, "UVERBS_NODE_MISSING");
	expect_class(classify_open_errno(ENODEV), ST_BLOCKED, "UVERBS_NODE_MISSING");
	expect_class(classify_open_errno(EBUSY), ST_BLOCKED, "UVERBS_OPEN_FAILED");
	expect_class(classify_open_errno(0), ST_BLOCKED, "UVERBS_OPEN_FAILED");
	/* Which blame the device (NCCL skips it too), not this process. */
	assert_true(open_errno_is_device(EIO));
	assert_true(open_errno_is_device(EBUSY));
	assert_false(open_errno_is_device(EACCES));
	assert_false(open_errno_is_device(ENOENT));
	assert_false(open_errno_is_device(0));
}

/* --- format_bytes -------------------------------------------------------- */

static void expect_bytes(unsigned long long v, const char *want)
{
	char b[32];

	format_bytes(v, b, sizeof(b));
	assert_string_equal(b, want);
}

static void test_format_bytes(void **state)
{
	expect_bytes(0, "0 B");
	expect_bytes(1023, "1023 B");
	expect_bytes(1024, "1 KiB");
	expect_bytes(1536, "1.5 KiB");
	expect_bytes(268435456, "256 MiB");
	expect_bytes(256ULL << 30, "256 GiB");
	expect_bytes((80ULL << 30) + (512ULL << 20), "80.5 GiB");
	expect_bytes(1ULL << 40, "1 TiB");
	/* TiB is the largest unit. */
	expect_bytes(2048ULL << 40, "2048 TiB");
	expect_bytes(ULLONG_MAX, "16777216 TiB");
}

static void test_format_bytes_truncates(void **state)
{
	char b[8];

	memset(b, 'x', sizeof(b));
	format_bytes(256ULL << 30, b, 4);
	assert_string_equal(b, "256");
	assert_int_equal(b[4], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_release_real),
		cmocka_unit_test(test_kconfig_line),
		cmocka_unit_test(test_kmsg_symbol_version_real),
		cmocka_unit_test(test_kmsg_symbol_version_odd),
		cmocka_unit_test(test_kernel_release_two_parts),
		cmocka_unit_test(test_kernel_release_garbage),
		cmocka_unit_test(test_kernel_release_major_only),
		cmocka_unit_test(test_kernel_release_huge),
		cmocka_unit_test(test_kver_cmp_boundaries),
		cmocka_unit_test(test_memlock_real),
		cmocka_unit_test(test_memlock_unlimited_both),
		cmocka_unit_test(test_memlock_numbers),
		cmocka_unit_test(test_memlock_live),
		cmocka_unit_test(test_memlock_malformed),
		cmocka_unit_test(test_status_real),
		cmocka_unit_test(test_status_uid_first_line),
		cmocka_unit_test(test_status_live),
		cmocka_unit_test(test_status_malformed),
		cmocka_unit_test(test_nvidia_open_h200),
		cmocka_unit_test(test_nvidia_proprietary),
		cmocka_unit_test(test_nvidia_aarch64),
		cmocka_unit_test(test_nvidia_garbage),
		cmocka_unit_test(test_nvidia_buffer_too_small),
		cmocka_unit_test(test_num_name),
		cmocka_unit_test(test_num_name_malformed),
		cmocka_unit_test(test_num_name_untouched_on_error),
		cmocka_unit_test(test_resource_line),
		cmocka_unit_test(test_resource_line_malformed),
		cmocka_unit_test(test_bar_h200),
		cmocka_unit_test(test_bar_32bit_bar0),
		cmocka_unit_test(test_bar_io_skipped),
		cmocka_unit_test(test_bar_truncated_and_few),
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_gid_malformed),
		cmocka_unit_test(test_container),
		cmocka_unit_test(test_cuda_version),
		cmocka_unit_test(test_classify_dmabuf),
		cmocka_unit_test(test_classify_open),
		cmocka_unit_test(test_format_bytes),
		cmocka_unit_test(test_format_bytes_truncates),
		cmocka_unit_test(test_resource_line_overflow),
		cmocka_unit_test(test_path_state),
		cmocka_unit_test(test_link_speed),
		cmocka_unit_test(test_link_width),
		cmocka_unit_test(test_numa_node),
		cmocka_unit_test(test_cuda_attr_domain),
		cmocka_unit_test(test_port_state_domain),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
