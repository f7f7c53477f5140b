// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for access/sysroot.c: the sysroot-aware readers and the
 * symlink resolver that every /sys and /proc lookup goes through.
 *
 * A temporary sysroot is created once (LLVMFuzzerInitialize) in $FUZZ_TMPDIR,
 * else /dev/shm, else $TMPDIR or /tmp, and removed at exit. Each input is written to a file in it and read back through
 * sysroot_read (several buffer sizes), sysroot_read_line and sysroot_read_ll.
 * The input, split at NUL bytes (so no target holds a NUL), also gives the
 * targets of three symlinks at different depths and a path to resolve;
 * sysroot_realpath and sysroot_link_name run on them (loops, absolute and
 * dangling targets included) and the links are removed again. The
 * openat2 and the userspace resolution of each must open the same file.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "access/sysroot.h"
#include "tests/fuzz/fuzz_common.h"

static struct sysroot *sr;

static char root[PATH_MAX];

#define DATA_FILE	"/sys/devices/pci0000:00/0000:00:01.0/attr"
#define NLINKS		3
static const char *const link_paths[NLINKS] = {
	"/sys/bus/pci/devices/l0",		/* like a device link */
	"/sys/devices/pci0000:00/l1",
	"/l2",
};

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("FUZZ_TMPDIR");

	(void)argc;
	(void)argv;
	/* Every run creates and removes files and links: on tmpfs that is
	 * several times faster than on a journalling disk file system. */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(root, sizeof(root), "%s/gdrcheck-fuzz-XXXXXX", tmp);
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	/* A little tree for relative and absolute link targets to land in. */
	mkdirs("/sys/bus/pci/devices");
	mkdirs("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
	mkdirs("/sys/class/infiniband");
	mkdirs("/proc/self");
	/* A chain of directories close to PATH_MAX, and /deepest linking to
	 * its end: one more component of 32 bytes overflows the resolver's
	 * buffers (the ENAMETOOLONG paths). */
	{
		char deep[PATH_MAX], full[PATH_MAX];
		size_t n = 0;

		n += (size_t)snprintf(deep + n, sizeof(deep) - n, "/deep");
		/* Up to 32 bytes short of PATH_MAX with the sysroot prefix. */
		while (strlen(root) + n + 2 < PATH_MAX - 32) {
			size_t c = PATH_MAX - 32 - strlen(root) - n - 1;

			c = c > 200 ? 200 : c;
			deep[n++] = '/';
			memset(deep + n, 'd', c);
			n += c;
			deep[n] = '\0';
		}
		mkdirs(deep);
		snprintf(full, sizeof(full), "%s/deepest", root);
		if (symlink(deep, full))
			abort();
	}
	sr = sysroot_new(root);
	if (!sr)
		abort();
	return 0;
}

static void write_file(const char *rel, const uint8_t *data, size_t size)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f))
		abort();
}

static void check_read(const char *path, size_t size, size_t len)
{
	/* SYSFS_MAX_TEXT is far above -max_len: a static buffer (a fresh 64 KiB
	 * heap block per run costs page faults under ASan's quarantine), junk
	 * filled as far as the file can reach. */
	static char big[SYSFS_MAX_TEXT];
	char *buf = len == sizeof(big) ? big : fuzz_buf(len);
	ssize_t n;

	if (buf == big)
		memset(big, 0xa5, size + 2 < len ? size + 2 : len);
	n = sysroot_read(sr, path, buf, len);

	if (len == 0) {
		FUZZ_ASSERT(n == -EINVAL);
	} else if (size < len) {
		FUZZ_ASSERT(n == (ssize_t)size);
		FUZZ_ASSERT(buf[n] == '\0');
	} else {
		FUZZ_ASSERT(n == -EFBIG);
		FUZZ_ASSERT(buf[0] == '\0');
	}
	if (buf != big)
		free(buf);
}

static void check_read_line(const char *path, size_t size, size_t len)
{
	char *buf = fuzz_buf(len);
	int r = sysroot_read_line(sr, path, buf, len);

	if (len)
		FUZZ_ASSERT(memchr(buf, '\0', len));
	if (size >= 4096)
		FUZZ_ASSERT(r == -EFBIG);
	if (r == 0) {
		size_t n = strlen(buf);

		FUZZ_ASSERT(n < len && !strchr(buf, '\n'));
		FUZZ_ASSERT(!n || (buf[n - 1] != ' ' && buf[n - 1] != '\t' &&
				   buf[n - 1] != '\r'));
	} else {
		FUZZ_ASSERT(r < 0);
	}
	free(buf);
}

/* A resolved path: "/" or "/a/b" with no empty, "." or ".." component, that
 * exists below the sysroot and is not itself a symlink. */
static void check_resolved(const char *r, size_t len)
{
	char full[PATH_MAX * 2];
	struct stat st;
	const char *c = r;

	FUZZ_ASSERT(memchr(r, '\0', len));
	FUZZ_ASSERT(r[0] == '/');
	if (strcmp(r, "/")) {
		while (*c) {
			size_t cl;

			FUZZ_ASSERT(*c == '/');
			c++;
			cl = strcspn(c, "/");
			FUZZ_ASSERT(cl > 0);
			FUZZ_ASSERT(!(cl == 1 && c[0] == '.'));
			FUZZ_ASSERT(!(cl == 2 && c[0] == '.' && c[1] == '.'));
			c += cl;
		}
	}
	snprintf(full, sizeof(full), "%s%s", root, strcmp(r, "/") ? r : "");
	FUZZ_ASSERT(lstat(full, &st) == 0 && !S_ISLNK(st.st_mode));
}

static void check_realpath(const char *path, size_t len)
{
	char *buf = fuzz_buf(len);
	int r = sysroot_realpath(sr, path, buf, len);

	if (r == 0)
		check_resolved(buf, len);
	else
		FUZZ_ASSERT(r < 0);
	free(buf);
}

/*
 * The two confined resolutions agree: what the userspace walk opens, the
 * kernel's openat2(RESOLVE_IN_ROOT) opens too (the same inode, which is
 * where sysroot_realpath says, inside the root), and the reverse unless
 * the walk's PATH_MAX buffers ran out.
 */
static void check_confined(const char *path)
{
	char real[PATH_MAX], full[PATH_MAX * 2];
	struct stat a, b, c;
	int ra, rb;

	ra = sysroot_stat(sr, path, &a);
	sysroot_force_walk(sr, true);
	rb = sysroot_stat(sr, path, &b);
	sysroot_force_walk(sr, false);
	FUZZ_ASSERT(ra <= 0 && rb <= 0);
	if (sysroot_walking(sr))		/* no openat2 here: nothing to compare */
		return;
	if (rb == 0)
		FUZZ_ASSERT(ra == 0 && a.st_dev == b.st_dev &&
			    a.st_ino == b.st_ino);
	if (ra == 0 && rb != -ENAMETOOLONG)
		FUZZ_ASSERT(rb == 0);
	if (rb == 0 && path[0] == '/' &&
	    sysroot_realpath(sr, path, real, sizeof(real)) == 0) {
		snprintf(full, sizeof(full), "%s%s", root,
			 strcmp(real, "/") ? real : "");
		FUZZ_ASSERT(lstat(full, &c) == 0 && c.st_ino == b.st_ino);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t read_sizes[] = { 0, 1, 2, 16, 64, 4096,
					     SYSFS_MAX_TEXT };
	char seg[NLINKS + 1][PATH_MAX];
	size_t nseg = 0, off = 0;
	long long v;
	int r;

	/* --- the readers -------------------------------------------------- */
	write_file(DATA_FILE, data, size);
	for (size_t i = 0; i < sizeof(read_sizes) / sizeof(read_sizes[0]); i++)
		check_read(DATA_FILE, size, read_sizes[i]);
	if (size)
		check_read(DATA_FILE, size, size);	/* exactly full: EFBIG */
	check_read(DATA_FILE, size, size + 1);		/* just fits */
	check_read_line(DATA_FILE, size, 1);
	check_read_line(DATA_FILE, size, 8);
	check_read_line(DATA_FILE, size, 128);
	check_read_line(DATA_FILE, size, 4096);
	r = sysroot_read_ll(sr, DATA_FILE, &v);
	FUZZ_ASSERT(r == 0 || r < 0);
	FUZZ_ASSERT(sysroot_exists(sr, DATA_FILE) && !sysroot_is_dir(sr, DATA_FILE));

	/* --- symlinks: targets from the NUL-separated segments ------------ */
	while (nseg < NLINKS + 1 && off < size) {
		const uint8_t *nul = memchr(data + off, '\0', size - off);
		size_t l = nul ? (size_t)(nul - (data + off)) : size - off;
		size_t cl = l < PATH_MAX - 1 ? l : PATH_MAX - 1;

		memcpy(seg[nseg], data + off, cl);
		seg[nseg][cl] = '\0';
		nseg++;
		off += l + 1;
	}
	for (size_t i = 0; i < NLINKS; i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s%s", root, link_paths[i]);
		unlink(p);
		/* An empty target is refused by symlink(2): no link then. */
		if (i < nseg && seg[i][0] && symlink(seg[i], p))
			abort();
	}
	for (size_t i = 0; i < NLINKS; i++) {
		char name[64];

		check_realpath(link_paths[i], PATH_MAX);
		check_realpath(link_paths[i], 16);
		check_confined(link_paths[i]);
		r = sysroot_link_name(sr, link_paths[i], name, sizeof(name));
		if (r == 0)
			FUZZ_ASSERT(strlen(name) < sizeof(name) && !strchr(name, '/'));
		else
			FUZZ_ASSERT(r < 0);
	}
	/* The last segment is a path of its own, resolved from the root. */
	if (nseg == NLINKS + 1) {
		check_realpath(seg[NLINKS], PATH_MAX);
		check_confined(seg[NLINKS]);
		(void)sysroot_exists(sr, seg[NLINKS]);
		(void)sysroot_is_dir(sr, seg[NLINKS]);
	}
	check_realpath("/sys/bus/pci/devices/l0/../l1/x", PATH_MAX);
	for (size_t i = 0; i < NLINKS; i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s%s", root, link_paths[i]);
		unlink(p);
	}
	return 0;
}
