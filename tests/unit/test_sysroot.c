// SPDX-License-Identifier: MIT
/* Unit tests for access/sysroot.c on a temporary directory tree. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "access/sysroot.h"

/* The tree under test: one reader, pointed at each fixture in turn. */
static struct sysroot *sr;

struct tree {
	char root[PATH_MAX];
};

static void put(const struct tree *t, const char *rel, const char *text,
		size_t len)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", t->root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put_str(const struct tree *t, const char *rel, const char *text)
{
	put(t, rel, text, strlen(text));
}

static void mkdir_in(const struct tree *t, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s%s", t->root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void link_in(const struct tree *t, const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s%s", t->root, rel);
	assert_int_equal(symlink(target, p), 0);
}

/*
 * root/
 *   sys/devices/pci0000:00/0000:00:01.0/{vendor,device,class}
 *   sys/devices/pci0000:00/0000:00:01.0/driver
 *       -> ../../../bus/pci/drivers/nvidia
 *   sys/bus/pci/drivers/nvidia/
 *   sys/bus/pci/devices/0000:00:01.0
 *       -> ../../../devices/pci0000:00/0000:00:01.0
 *   sys/class/abs -> /sys/devices/pci0000:00           (absolute)
 *   sys/chain1 -> chain2, chain2 -> /sys/chain3, chain3 -> class/abs
 *   sys/loop_a -> loop_b, sys/loop_b -> loop_a
 *   sys/escape -> ../../../../../../etc                 (climbs past the root)
 *   sys/dangling -> nowhere
 *   etc/marker
 *   data/...                                           (read tests)
 */
static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->root, sizeof(t->root), "%s/gdrcheck-sysroot-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(t->root)) {
		free(t);
		return -1;
	}
	*state = t;

	mkdir_in(t, "/sys");
	mkdir_in(t, "/sys/devices");
	mkdir_in(t, "/sys/devices/pci0000:00");
	mkdir_in(t, "/sys/devices/pci0000:00/0000:00:01.0");
	put_str(t, "/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
	put_str(t, "/sys/devices/pci0000:00/0000:00:01.0/device", "0x2335\n");
	put_str(t, "/sys/devices/pci0000:00/0000:00:01.0/class", "0x030200\n");
	mkdir_in(t, "/sys/bus");
	mkdir_in(t, "/sys/bus/pci");
	mkdir_in(t, "/sys/bus/pci/drivers");
	mkdir_in(t, "/sys/bus/pci/drivers/nvidia");
	mkdir_in(t, "/sys/bus/pci/devices");
	link_in(t, "../../../bus/pci/drivers/nvidia",
		"/sys/devices/pci0000:00/0000:00:01.0/driver");
	link_in(t, "../../../devices/pci0000:00/0000:00:01.0",
		"/sys/bus/pci/devices/0000:00:01.0");
	mkdir_in(t, "/sys/class");
	link_in(t, "/sys/devices/pci0000:00", "/sys/class/abs");
	link_in(t, "chain2", "/sys/chain1");
	link_in(t, "/sys/chain3", "/sys/chain2");
	link_in(t, "class/abs", "/sys/chain3");
	link_in(t, "loop_b", "/sys/loop_a");
	link_in(t, "loop_a", "/sys/loop_b");
	link_in(t, "../../../../../../etc", "/sys/escape");
	link_in(t, "nowhere", "/sys/dangling");
	mkdir_in(t, "/etc");
	put_str(t, "/etc/marker", "inside\n");
	mkdir_in(t, "/data");
	sysroot_set(sr, t->root);
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(p);
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	int ret;

	sysroot_set(sr, NULL);
	ret = nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return ret;
}

/* --- sysroot_set / sysroot_path ------------------------------------------ */

static void test_set_and_path(void **state)
{
	struct tree *t = *state;
	char want[PATH_MAX * 2], buf[PATH_MAX], small[8], slashes[PATH_MAX + 8];

	assert_string_equal(sysroot_get(sr), t->root);
	snprintf(want, sizeof(want), "%s/sys/class", t->root);
	assert_non_null(sysroot_path(sr, buf, sizeof(buf), "/sys/class"));
	assert_string_equal(buf, want);
	assert_null(sysroot_path(sr, small, sizeof(small), "/sys/class"));

	/* Trailing slashes are dropped, so paths do not get "//". */
	snprintf(slashes, sizeof(slashes), "%s///", t->root);
	sysroot_set(sr, slashes);
	assert_string_equal(sysroot_get(sr), t->root);
	assert_non_null(sysroot_path(sr, buf, sizeof(buf), "/sys/class"));
	assert_string_equal(buf, want);

	sysroot_set(sr, "/");
	assert_string_equal(sysroot_get(sr), "/");
	assert_non_null(sysroot_path(sr, buf, sizeof(buf), "/sys/class"));
	assert_string_equal(buf, "/sys/class");
	sysroot_set(sr, NULL);
	assert_string_equal(sysroot_get(sr), "/");
	sysroot_set(sr, t->root);
}

static void test_exists_is_dir(void **state)
{
	assert_true(sysroot_exists(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor"));
	assert_false(sysroot_is_dir(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor"));
	assert_true(sysroot_is_dir(sr, "/sys/bus/pci/devices/0000:00:01.0"));
	assert_true(sysroot_is_dir(sr, "/"));
	assert_false(sysroot_exists(sr, "/sys/nothing"));
	assert_false(sysroot_exists(sr, "/sys/dangling"));
	assert_false(sysroot_is_dir(sr, "/sys/nothing"));
}

/* --- sysroot_read -------------------------------------------------------- */

static void test_read_text(void **state)
{
	char buf[64];

	assert_int_equal(sysroot_read(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor",
				      buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0x10de\n");
	/* Through a relative symlink. */
	assert_int_equal(sysroot_read(sr, "/sys/bus/pci/devices/0000:00:01.0/device",
				      buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0x2335\n");
}

static void test_read_errors(void **state)
{
	char buf[64] = "stale";

	assert_int_equal(sysroot_read(sr, "/sys/nothing", buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	strcpy(buf, "stale");
	assert_int_equal(sysroot_read(sr, "/sys/devices", buf, sizeof(buf)), -EISDIR);
	assert_string_equal(buf, "");
	assert_int_equal(sysroot_read(sr, "/sys/loop_a", buf, sizeof(buf)), -ELOOP);
	assert_int_equal(sysroot_read(sr, "/sys/nothing", buf, 0), -EINVAL);
}

static void test_read_empty(void **state)
{
	struct tree *t = *state;
	char buf[16] = "stale";

	put(t, "/data/empty", "", 0);
	assert_int_equal(sysroot_read(sr, "/data/empty", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void test_read_fifo_does_not_hang(void **state)
{
	struct tree *t = *state;
	char p[PATH_MAX * 2];
	int status;
	pid_t pid;

	snprintf(p, sizeof(p), "%s/data/fifo", t->root);
	assert_int_equal(mkfifo(p, 0600), 0);
	/* In a child, so that a hang ends in SIGALRM there, not here. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[64] = "stale";
		ssize_t n;

		alarm(5);
		n = sysroot_read(sr, "/data/fifo", buf, sizeof(buf));
		if (n != -SYSROOT_ENOTREG || buf[0])
			_exit(1);
		n = sysroot_read_bin(sr, "/data/fifo", buf, sizeof(buf));
		_exit(n == -SYSROOT_ENOTREG ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_read_too_big(void **state)
{
	struct tree *t = *state;
	char data[200], buf[101];

	memset(data, 'x', sizeof(data));
	/* 100 bytes fit a 101-byte buffer exactly... */
	put(t, "/data/fit", data, 100);
	assert_int_equal(sysroot_read(sr, "/data/fit", buf, sizeof(buf)), 100);
	assert_int_equal(strlen(buf), 100);
	/* ...101 do not. */
	put(t, "/data/over", data, 101);
	assert_int_equal(sysroot_read(sr, "/data/over", buf, sizeof(buf)), -EFBIG);
	assert_string_equal(buf, "");
	put(t, "/data/long", data, sizeof(data));
	assert_int_equal(sysroot_read(sr, "/data/long", buf, sizeof(buf)), -EFBIG);
}

static void test_read_too_big_large(void **state)
{
	struct tree *t = *state;
	size_t n = SYSFS_MAX_TEXT + 1;
	char *data = malloc(n), *buf = malloc(SYSFS_MAX_TEXT);

	assert_non_null(data);
	assert_non_null(buf);
	memset(data, 'y', n);
	put(t, "/data/huge", data, n);
	assert_int_equal(sysroot_read(sr, "/data/huge", buf, SYSFS_MAX_TEXT), -EFBIG);
	free(data);
	free(buf);
}

/* The head of a long file (cpuinfo's first CPU): no -EFBIG. */
static void test_read_head(void **state)
{
	struct tree *t = *state;
	char data[300], buf[101];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	put(t, "/data/long", data, sizeof(data));
	assert_int_equal(sysroot_read_head(sr, "/data/long", buf, sizeof(buf)),
			 100);
	assert_memory_equal(buf, data, 100);
	assert_int_equal(buf[100], '\0');
	put(t, "/data/short", data, 10);
	assert_int_equal(sysroot_read_head(sr, "/data/short", buf, sizeof(buf)),
			 10);
	assert_int_equal(sysroot_read_head(sr, "/data/none", buf, sizeof(buf)),
			 -ENOENT);
}

/* --- sysroot_read_line / sysroot_read_ll --------------------------------- */

static void test_read_line(void **state)
{
	struct tree *t = *state;
	char buf[16] = "stale";

	put_str(t, "/data/line", "  4: ACTIVE \t\r\nsecond line\n");
	assert_int_equal(sysroot_read_line(sr, "/data/line", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "  4: ACTIVE");
	put_str(t, "/data/noeol", "LinkUp");
	assert_int_equal(sysroot_read_line(sr, "/data/noeol", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "LinkUp");
	/* 16 characters do not fit 16 bytes with the NUL. */
	put_str(t, "/data/wide", "0123456789abcdef\n");
	assert_int_equal(sysroot_read_line(sr, "/data/wide", buf, sizeof(buf)),
			 -EOVERFLOW);
	assert_string_equal(buf, "");
	assert_int_equal(sysroot_read_line(sr, "/data/missing", buf, sizeof(buf)),
			 -ENOENT);
}

static void expect_ll(const struct tree *t, const char *text, int ret,
		      long long want)
{
	long long v = 12345;

	put_str(t, "/data/num", text);
	assert_int_equal(sysroot_read_ll(sr, "/data/num", &v), ret);
	if (!ret)
		assert_true(v == want);
}

static void test_read_ll(void **state)
{
	struct tree *t = *state;
	long long v;

	expect_ll(t, "0x10de\n", 0, 0x10de);
	expect_ll(t, "16\n", 0, 16);
	expect_ll(t, "-1\n", 0, -1);
	expect_ll(t, "0x030200", 0, 0x030200);
	expect_ll(t, "42 \n", 0, 42);
	expect_ll(t, "abc", -EINVAL, 0);
	expect_ll(t, "", -EINVAL, 0);
	expect_ll(t, "\n", -EINVAL, 0);
	expect_ll(t, "16.0 GT/s PCIe\n", -EINVAL, 0);
	expect_ll(t, "0x", -EINVAL, 0);
	expect_ll(t, "99999999999999999999\n", -EINVAL, 0);
	assert_int_equal(sysroot_read_ll(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor",
					 &v), 0);
	assert_true(v == 0x10de);
	assert_int_equal(sysroot_read_ll(sr, "/data/missing", &v), -ENOENT);
}

/* --- sysroot_link_name --------------------------------------------------- */

static void test_link_name(void **state)
{
	char buf[16];

	assert_int_equal(sysroot_link_name(sr, "/sys/devices/pci0000:00/0000:00:01.0/driver",
					   buf, sizeof(buf)), 0);
	assert_string_equal(buf, "nvidia");
	assert_int_equal(sysroot_link_name(sr, "/sys/dangling", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "nowhere");
	assert_int_equal(sysroot_link_name(sr, "/sys/devices/pci0000:00/0000:00:01.0/driver",
					   buf, 6), -EOVERFLOW);
	assert_int_equal(sysroot_link_name(sr, "/sys/devices", buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(sysroot_link_name(sr, "/sys/nothing", buf, sizeof(buf)),
			 -ENOENT);
}

/* --- sysroot_realpath ---------------------------------------------------- */

static void expect_real(const char *path, const char *want)
{
	char buf[PATH_MAX] = "stale";

	assert_int_equal(sysroot_realpath(sr, path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_realpath_relative(void **state)
{
	expect_real("/sys/bus/pci/devices/0000:00:01.0",
		    "/sys/devices/pci0000:00/0000:00:01.0");
	/* Components after the link are kept. */
	expect_real("/sys/bus/pci/devices/0000:00:01.0/vendor",
		    "/sys/devices/pci0000:00/0000:00:01.0/vendor");
	/* Two links in one path. */
	expect_real("/sys/bus/pci/devices/0000:00:01.0/driver",
		    "/sys/bus/pci/drivers/nvidia");
	expect_real("/sys/devices", "/sys/devices");
	expect_real("/sys//devices/./pci0000:00/", "/sys/devices/pci0000:00");
	expect_real("/sys/devices/../bus", "/sys/bus");
	expect_real("/", "/");
}

static void test_realpath_absolute_rerooted(void **state)
{
	/* "/sys/devices/pci0000:00" is looked up inside the sysroot. */
	expect_real("/sys/class/abs", "/sys/devices/pci0000:00");
	expect_real("/sys/class/abs/0000:00:01.0/class",
		    "/sys/devices/pci0000:00/0000:00:01.0/class");
	/* relative -> absolute -> relative -> absolute */
	expect_real("/sys/chain1/0000:00:01.0",
		    "/sys/devices/pci0000:00/0000:00:01.0");
}

static void test_realpath_stays_inside(void **state)
{
	/* ".." past the root stops at the root of the sysroot. */
	expect_real("/sys/escape/marker", "/etc/marker");
	expect_real("/../../etc", "/etc");
}

static void test_realpath_errors(void **state)
{
	char buf[PATH_MAX], small[8];

	assert_int_equal(sysroot_realpath(sr, "/sys/loop_a", buf, sizeof(buf)),
			 -ELOOP);
	assert_int_equal(sysroot_realpath(sr, "/sys/loop_a/x", buf, sizeof(buf)),
			 -ELOOP);
	assert_int_equal(sysroot_realpath(sr, "/sys/dangling", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(sysroot_realpath(sr, "/sys/nothing/x", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(sysroot_realpath(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor/x",
					  buf, sizeof(buf)), -ENOTDIR);
	assert_int_equal(sysroot_realpath(sr, "/sys/class/abs", small, sizeof(small)),
			 -ENAMETOOLONG);
}

/* Forty links are allowed, like the kernel; the forty-first is a loop. */
static void test_realpath_link_limit(void **state)
{
	struct tree *t = *state;
	char name[64], target[64];
	char buf[PATH_MAX];

	mkdir_in(t, "/data/end");
	for (int i = 0; i < 41; i++) {
		snprintf(name, sizeof(name), "/data/l%d", i);
		if (i == 0)
			snprintf(target, sizeof(target), "end");
		else
			snprintf(target, sizeof(target), "l%d", i - 1);
		link_in(t, target, name);
	}
	expect_real("/data/l39", "/data/end");
	assert_int_equal(sysroot_realpath(sr, "/data/l40", buf, sizeof(buf)),
			 -ELOOP);
}

/* Without a sysroot, ".." reaching "/" must still give "/". */
static void test_realpath_host_root(void **state)
{
	char buf[PATH_MAX] = "stale";
	int ret;

	sysroot_set(sr, NULL);
	ret = sysroot_realpath(sr, "/tmp/..", buf, sizeof(buf));
	sysroot_set(sr, ((struct tree *)*state)->root);
	assert_int_equal(ret, 0);
	assert_string_equal(buf, "/");
}

/* --- sysroot_list -------------------------------------------------------- */

static void test_list_sorted(void **state)
{
	static const char *const want[] = {
		"0000:00:01.0", "0000:00:02.0", "0000:0a:00.0", "Mlx", "mlx5_0",
		"mlx5_10", "mlx5_2",
	};
	struct tree *t = *state;
	char **names = NULL;
	size_t n = 99;

	mkdir_in(t, "/data/list");
	/* Created out of order; dot files are hidden. */
	put_str(t, "/data/list/mlx5_2", "");
	put_str(t, "/data/list/0000:0a:00.0", "");
	put_str(t, "/data/list/mlx5_10", "");
	put_str(t, "/data/list/.hidden", "");
	put_str(t, "/data/list/Mlx", "");
	mkdir_in(t, "/data/list/0000:00:02.0");
	link_in(t, "nowhere", "/data/list/0000:00:01.0");
	put_str(t, "/data/list/mlx5_0", "");

	assert_int_equal(sysroot_list(sr, "/data/list", &names, &n), 0);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], want[i]);
	sysroot_free_list(names, n);
}

static void test_list_empty_and_missing(void **state)
{
	static char *sentinel[1];
	struct tree *t = *state;
	char **names = sentinel;
	size_t n = 99;

	mkdir_in(t, "/data/none");
	assert_int_equal(sysroot_list(sr, "/data/none", &names, &n), 0);
	assert_int_equal(n, 0);
	sysroot_free_list(names, n);

	n = 99;
	assert_int_equal(sysroot_list(sr, "/data/missing", &names, &n), -ENOENT);
	assert_null(names);
	assert_int_equal(n, 0);
	assert_int_equal(sysroot_list(sr, "/sys/devices/pci0000:00/0000:00:01.0/vendor",
				      &names, &n), -ENOTDIR);
	/* Through a symlink to a directory. */
	assert_int_equal(sysroot_list(sr, "/sys/bus/pci/devices/0000:00:01.0",
				      &names, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "class");
	assert_string_equal(names[3], "vendor");
	sysroot_free_list(names, n);
}


/* --- nodes that are not regular files ------------------------------------ */

static void test_read_socket_and_device(void **state)
{
	struct tree *t = *state;
	char p[PATH_MAX * 2], buf[64] = "stale";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, cwd;

	/* bind() takes 107 bytes at most: bind the base name from its dir. */
	snprintf(p, sizeof(p), "%s/data", t->root);
	cwd = open(".", O_PATH | O_DIRECTORY);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(p), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "sock");
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	assert_int_equal(sysroot_read(sr, "/data/sock", buf, sizeof(buf)),
			 -SYSROOT_ENOTREG);
	assert_string_equal(buf, "");
	close(s);

	/* A character device (1:5 is /dev/zero: it would fill the buffer). */
	snprintf(p, sizeof(p), "%s/data/zero", t->root);
	if (mknod(p, S_IFCHR | 0444, makedev(1, 5))) {
		assert_int_equal(errno, EPERM);
		skip();		/* not root: no device node to plant */
	}
	assert_int_equal(sysroot_read(sr, "/data/zero", buf, sizeof(buf)),
			 -SYSROOT_ENOTREG);
	assert_int_equal(sysroot_read_line(sr, "/data/zero", buf, sizeof(buf)),
			 -SYSROOT_ENOTREG);
	/* Still there for an existence test (/dev nodes are tested so). */
	assert_true(sysroot_exists(sr, "/data/zero"));
	assert_string_equal(sysroot_strerror(SYSROOT_ENOTREG),
			    "not a regular file (a FIFO, socket or device)");
}

/* --- confinement: every operation, both resolution paths ---------------- */

/*
 * Links that try to leave the sysroot: absolute ones to host paths that
 * exist on every Linux host but not in the tree, ".." past the top, and
 * "/" itself. Inside the sysroot they must resolve inside it: to the
 * tree's own files, or to nothing.
 */
static void plant_escapes(const struct tree *t)
{
	link_in(t, "/proc/self/status", "/data/abs_host");
	link_in(t, "../../../../../../../../../../proc/self/status",
		"/data/dotdot_host");
	link_in(t, "/etc/marker", "/data/abs_inside");
	link_in(t, "../../../../../../../../etc/marker", "/data/dotdot_inside");
	link_in(t, "/", "/data/root");
	link_in(t, "/data/root/data/root/etc", "/data/via_root");
	link_in(t, "/../../..", "/data/above");
}

static void check_confined(void **state)
{
	struct tree *t = *state;
	char buf[256];
	char **names = NULL;
	size_t n = 0;
	bool have_etc = false;

	plant_escapes(t);
	/* Absolute and ".." links to host-only files: nothing there. */
	assert_int_equal(sysroot_read(sr, "/data/abs_host", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(sysroot_read(sr, "/data/dotdot_host", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(sysroot_read(sr, "/../../proc/self/status", buf,
				      sizeof(buf)), -ENOENT);
	assert_false(sysroot_exists(sr, "/data/abs_host"));
	assert_int_equal(sysroot_access(sr, "/data/dotdot_host"), -ENOENT);
	assert_int_equal(sysroot_read_bin(sr, "/data/abs_host", buf, sizeof(buf)),
			 -ENOENT);
	/* The same links to the tree's own file: read inside. */
	assert_int_equal(sysroot_read(sr, "/data/abs_inside", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "inside\n");
	assert_int_equal(sysroot_read(sr, "/data/dotdot_inside", buf, sizeof(buf)),
			 7);
	assert_int_equal(sysroot_read(sr, "/sys/escape/marker", buf, sizeof(buf)),
			 7);
	assert_int_equal(sysroot_read(sr, "/data/via_root/marker", buf,
				      sizeof(buf)), 7);
	assert_int_equal(sysroot_access(sr, "/data/above/etc/marker"), 0);
	/* "/" is the sysroot: listing it shows the tree, not the host. */
	assert_true(sysroot_is_dir(sr, "/data/root"));
	assert_true(sysroot_is_dir(sr, "/data/above"));
	assert_false(sysroot_is_dir(sr, "/data/abs_host"));
	assert_int_equal(sysroot_list(sr, "/data/root", &names, &n), 0);
	assert_int_equal(n, 3);		/* data, etc, sys */
	for (size_t i = 0; i < n; i++)
		have_etc |= !strcmp(names[i], "etc");
	assert_true(have_etc);
	assert_string_equal(names[0], "data");
	sysroot_free_list(names, n);
	assert_int_equal(sysroot_list(sr, "/data/abs_host", &names, &n), -ENOENT);
	/* readlink of a link reached through an escaping link. */
	assert_int_equal(sysroot_link_name(sr, "/data/root/sys/devices/pci0000:00/"
					   "0000:00:01.0/driver", buf,
					   sizeof(buf)), 0);
	assert_string_equal(buf, "nvidia");
	assert_int_equal(sysroot_realpath(sr, "/data/abs_inside", buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "/etc/marker");
	assert_int_equal(sysroot_realpath(sr, "/data/abs_host", buf, sizeof(buf)),
			 -ENOENT);
	/* Loops and the link limit hold on every path. */
	assert_int_equal(sysroot_read(sr, "/sys/loop_a", buf, sizeof(buf)), -ELOOP);
	assert_false(sysroot_exists(sr, "/sys/loop_a"));
	assert_int_equal(sysroot_list(sr, "/sys/loop_b", &names, &n), -ELOOP);
}

static void test_confined_openat2(void **state)
{
	char buf[16];

	check_confined(state);
	/* Say so when this kernel has no openat2 (the walk ran instead). */
	sysroot_read(sr, "/etc/marker", buf, sizeof(buf));
	if (sysroot_walking(sr)) {
		print_message("no openat2 on this kernel: only the walk ran\n");
		skip();
	}
}

static void test_confined_walk(void **state)
{
	sysroot_force_walk(sr, true);
	check_confined(state);
	assert_true(sysroot_walking(sr));
	sysroot_force_walk(sr, false);
}

/* A long chain of absolute links, each re-rooted: forty resolve. */
static void test_confined_long_chain(void **state)
{
	struct tree *t = *state;
	char name[64], target[64], buf[16];

	for (int walk = 0; walk < 2; walk++) {
		sysroot_force_walk(sr, walk);
		for (int i = 0; i < 41; i++) {
			snprintf(name, sizeof(name), "/data/c%d_%d", walk, i);
			if (i == 0)
				snprintf(target, sizeof(target), "/etc/marker");
			else
				snprintf(target, sizeof(target), "/data/c%d_%d",
					 walk, i - 1);
			link_in(t, target, name);
		}
		snprintf(name, sizeof(name), "/data/c%d_39", walk);
		assert_int_equal(sysroot_read(sr, name, buf, sizeof(buf)), 7);
		snprintf(name, sizeof(name), "/data/c%d_40", walk);
		assert_int_equal(sysroot_read(sr, name, buf, sizeof(buf)), -ELOOP);
	}
	sysroot_force_walk(sr, false);
}

/*
 * A file read once leaves its directory cached (dir_fd): what replaces the
 * file later is still looked at before it is opened, and a link there is
 * still resolved inside the root.
 */
static void swap_in(const struct tree *t, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s%s", t->root, rel);
	assert_int_equal(unlink(p), 0);
}

static void test_cached_dir_swaps(void **state)
{
	struct tree *t = *state;
	char p[PATH_MAX * 2], buf[64];
	struct stat st;
	int status;
	pid_t pid;

	put_str(t, "/data/x", "one\n");
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)), 4);
	/* A FIFO: refused, not opened (a child, so a hang is its alarm). */
	swap_in(t, "/data/x");
	snprintf(p, sizeof(p), "%s/data/x", t->root);
	assert_int_equal(mkfifo(p, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(5);
		_exit(sysroot_read(sr, "/data/x", buf, sizeof(buf)) ==
		      -SYSROOT_ENOTREG ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(sysroot_stat(sr, "/data/x", &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* Links: an absolute one is re-rooted, a climbing one stays in. */
	swap_in(t, "/data/x");
	link_in(t, "/etc/marker", "/data/x");
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "inside\n");
	swap_in(t, "/data/x");
	link_in(t, "../../../../../../../../etc/hostname", "/data/x");
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)),
			 -ENOENT);
	assert_false(sysroot_exists(sr, "/data/x"));
	/* A link to a FIFO inside the root: refused too. */
	swap_in(t, "/data/x");
	link_in(t, "fifo2", "/data/x");
	snprintf(p, sizeof(p), "%s/data/fifo2", t->root);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)),
			 -SYSROOT_ENOTREG);
	/* A directory, then nothing. */
	swap_in(t, "/data/x");
	mkdir_in(t, "/data/x");
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)),
			 -EISDIR);
	assert_true(sysroot_is_dir(sr, "/data/x"));
	snprintf(p, sizeof(p), "%s/data/x", t->root);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(sysroot_read(sr, "/data/x", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(sysroot_read(sr, "/data/x/..", buf, sizeof(buf)),
			 -ENOENT);
}

static void test_read_bin(void **state)
{
	struct tree *t = *state;
	unsigned char data[300], buf[512];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)i;
	put(t, "/data/cfg", (const char *)data, sizeof(data));
	assert_int_equal(sysroot_read_bin(sr, "/data/cfg", buf, sizeof(buf)), 300);
	assert_memory_equal(buf, data, sizeof(data));
	assert_int_equal(sysroot_read_bin(sr, "/data/cfg", buf, 64), 64);
	assert_int_equal(sysroot_read_bin(sr, "/sys/devices", buf, 64), -EISDIR);
}

/* --- the per-run memo of stable attributes ------------------------------ */

#define DEV "/sys/bus/pci/devices/0000:00:01.0"
#define DEVREAL "/sys/devices/pci0000:00/0000:00:01.0"

static void test_memo_stable_attributes(void **state)
{
	struct tree *t = *state;
	char buf[64];

	assert_int_equal(sysroot_read_line(sr, DEV "/vendor", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x10de");
	/* A PCI id is one answer per run, whatever the file says later... */
	put_str(t, DEVREAL "/vendor", "0x15b3\n");
	assert_int_equal(sysroot_read_line(sr, DEV "/vendor", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x10de");
	/* ...for any buffer it fits in, and not for one it does not. */
	assert_int_equal(sysroot_read(sr, DEV "/vendor", buf, 8), 7);
	assert_string_equal(buf, "0x10de\n");
	assert_int_equal(sysroot_read(sr, DEV "/vendor", buf, 4), -EFBIG);
	/* A missing attribute stays missing. */
	assert_int_equal(sysroot_read_line(sr, DEV "/numa_node", buf, sizeof(buf)),
			 -ENOENT);
	put_str(t, DEVREAL "/numa_node", "0\n");
	assert_int_equal(sysroot_read_line(sr, DEV "/numa_node", buf, sizeof(buf)),
			 -ENOENT);
	/* Counters are read afresh. */
	put_str(t, DEVREAL "/aer_dev_correctable", "TOTAL_ERR_COR 1\n");
	assert_int_equal(sysroot_read_line(sr, DEV "/aer_dev_correctable", buf,
					   sizeof(buf)), 0);
	put_str(t, DEVREAL "/aer_dev_correctable", "TOTAL_ERR_COR 2\n");
	assert_int_equal(sysroot_read_line(sr, DEV "/aer_dev_correctable", buf,
					   sizeof(buf)), 0);
	assert_string_equal(buf, "TOTAL_ERR_COR 2");
	/* Another tree (or the same one set again) forgets them. */
	sysroot_set(sr, t->root);
	assert_int_equal(sysroot_read_line(sr, DEV "/vendor", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x15b3");
	/* So does the other resolution path: the tests compare the two. */
	put_str(t, DEVREAL "/vendor", "0x1000\n");
	sysroot_force_walk(sr, true);
	assert_int_equal(sysroot_read_line(sr, DEV "/vendor", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x1000");
	sysroot_force_walk(sr, false);
}

struct rec_count {
	int files, links;
};

static void count_file(void *arg, const char *path, const char *data,
		       size_t len)
{
	(void)path;
	(void)data;
	(void)len;
	((struct rec_count *)arg)->files++;
}

static void count_link(void *arg, const char *path, const char *target)
{
	(void)path;
	(void)target;
	((struct rec_count *)arg)->links++;
}

static void count_dir(void *arg, const char *path)
{
	(void)arg;
	(void)path;
}

static void count_exists(void *arg, const char *path, bool is_dir)
{
	(void)arg;
	(void)path;
	(void)is_dir;
}

/* --capture records what the memo answers from before it started. */
static void test_memo_recorded(void **state)
{
	static const struct sysroot_recorder rec = {
		.file = count_file, .dir = count_dir, .link = count_link,
		.exists = count_exists,
	};
	struct rec_count n = { 0 };
	char buf[64];

	(void)state;
	assert_int_equal(sysroot_read_line(sr, DEV "/device", buf, sizeof(buf)), 0);
	assert_int_equal(sysroot_link_name(sr, DEV "/driver", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "nvidia");
	sysroot_set_recorder(sr, &rec, &n);
	assert_int_equal(sysroot_read_line(sr, DEV "/device", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0x2335");
	assert_int_equal(sysroot_link_name(sr, DEV "/driver", buf, sizeof(buf)), 0);
	assert_int_equal(n.files, 1);
	assert_int_equal(n.links, 1);
	sysroot_set_recorder(sr, NULL, NULL);
}

#define TREE_TEST(f) \
	cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TREE_TEST(test_set_and_path),
		TREE_TEST(test_exists_is_dir),
		TREE_TEST(test_read_text),
		TREE_TEST(test_read_errors),
		TREE_TEST(test_read_empty),
		TREE_TEST(test_read_fifo_does_not_hang),
		TREE_TEST(test_read_socket_and_device),
		TREE_TEST(test_read_bin),
		TREE_TEST(test_cached_dir_swaps),
		TREE_TEST(test_confined_openat2),
		TREE_TEST(test_confined_walk),
		TREE_TEST(test_confined_long_chain),
		TREE_TEST(test_read_too_big),
		TREE_TEST(test_read_too_big_large),
		TREE_TEST(test_read_head),
		TREE_TEST(test_read_line),
		TREE_TEST(test_read_ll),
		TREE_TEST(test_link_name),
		TREE_TEST(test_realpath_relative),
		TREE_TEST(test_realpath_absolute_rerooted),
		TREE_TEST(test_realpath_stays_inside),
		TREE_TEST(test_realpath_errors),
		TREE_TEST(test_realpath_link_limit),
		TREE_TEST(test_realpath_host_root),
		TREE_TEST(test_list_sorted),
		TREE_TEST(test_list_empty_and_missing),
		TREE_TEST(test_memo_stable_attributes),
		TREE_TEST(test_memo_recorded),
	};

	int failed;

	sr = sysroot_new(NULL);
	if (!sr)
		return 1;
	failed = cmocka_run_group_tests_name("sysroot", tests, NULL, NULL);
	sysroot_free(sr);
	return failed;
}
