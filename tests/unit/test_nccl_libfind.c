// SPDX-License-Identifier: MIT
/*
 * nccl/libfind.h: the loader's cache and the libnccl release, from real
 * formats. tests/unit/data/ld.so.cache-{new,compat,old} were written by
 * glibc 2.36's ldconfig (Debian 12), one per --format, for a root holding
 * /opt/nccl/lib/libnccl.so.2.28.9 (a shared object with soname
 * libnccl.so.2) and /etc/ld.so.conf "/opt/nccl/lib":
 *
 *   ldconfig -c FORMAT -r ROOT -C /etc/ld.so.cache -f /etc/ld.so.conf
 *
 * Damaged caches are made from them here: every truncation, a count, a
 * string offset or a string end moved outside the image.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nccl/libfind.h"
#include "nccl/rules.h"

#define DATA "tests/unit/data/"
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const formats[] = {
	DATA "ld.so.cache-new", DATA "ld.so.cache-compat", DATA "ld.so.cache-old",
};

static size_t slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		fail_msg("%s: %s (run from the source tree)", path,
			 strerror(errno));
	n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

static bool yes(const char *path, void *arg)
{
	(void)path;
	(void)arg;
	return true;
}

static bool no(const char *path, void *arg)
{
	(void)path;
	(void)arg;
	return false;
}

/* Remembers the entries given. */
struct seen {
	int n;
	char key[4][64], value[4][128];
};

static int record(const struct nccl_ldcache_entry *e, void *arg)
{
	struct seen *s = arg;

	if (s->n < 4) {
		snprintf(s->key[s->n], sizeof(s->key[0]), "%s", e->key);
		snprintf(s->value[s->n], sizeof(s->value[0]), "%s", e->value);
	}
	s->n++;
	return 0;
}

static void test_cache_formats(void **state)
{
	char buf[512], out[256];

	(void)state;
	for (size_t f = 0; f < N(formats); f++) {
		size_t n = slurp(formats[f], buf, sizeof(buf));
		struct seen s = { 0 };

		assert_true(n > 40);
		assert_int_equal(nccl_ldcache_walk(buf, n, record, &s), 0);
		/* compat holds the entry twice in its old table: the new is read. */
		assert_int_equal(s.n, 1);
		assert_string_equal(s.key[0], "libnccl.so.2");
		assert_string_equal(s.value[0], "/opt/nccl/lib/libnccl.so.2");
		assert_int_equal(nccl_ldcache_find(buf, n, "libnccl.so.2", yes,
						   NULL, out, sizeof(out)), 1);
		assert_string_equal(out, "/opt/nccl/lib/libnccl.so.2");
		/* The file is gone: no entry. */
		assert_int_equal(nccl_ldcache_find(buf, n, "libnccl.so.2", no,
						   NULL, out, sizeof(out)), 0);
		/* Another name, a suffix without its '/', a short buffer. */
		assert_int_equal(nccl_ldcache_find(buf, n, "libcuda.so.1", yes,
						   NULL, out, sizeof(out)), 0);
		assert_int_equal(nccl_ldcache_find(buf, n, "nccl.so.2", yes,
						   NULL, out, sizeof(out)), 0);
		assert_int_equal(nccl_ldcache_find(buf, n, "libnccl.so.2", yes,
						   NULL, out, 26), 0);
		assert_int_equal(nccl_ldcache_find(buf, n, "libnccl.so.2", yes,
						   NULL, out, 27), 1);
	}
}

static void test_cache_truncated(void **state)
{
	char buf[512], out[256];

	(void)state;
	for (size_t f = 0; f < N(formats); f++) {
		size_t n = slurp(formats[f], buf, sizeof(buf));

		/*
		 * Every prefix fails clearly or still holds every entry whole
		 * (the new format's trailing ldconfig comment may go).
		 */
		for (size_t cut = 0; cut < n; cut++) {
			char *copy = malloc(cut ? cut : 1);
			int ret;

			memcpy(copy, buf, cut);
			ret = nccl_ldcache_find(copy, cut, "libnccl.so.2", yes,
						NULL, out, sizeof(out));
			if (ret != 1 && ret != -EINVAL && ret != -ENOEXEC)
				fail_msg("%s cut at %zu: %d", formats[f], cut, ret);
			if (cut < 11)
				assert_int_equal(ret, -ENOEXEC);
			if (ret == 1)
				assert_string_equal(out, "/opt/nccl/lib/libnccl.so.2");
			free(copy);
		}
	}
}

static void test_cache_malformed(void **state)
{
	char buf[512], bad[512], out[256];
	size_t n = slurp(DATA "ld.so.cache-new", buf, sizeof(buf));
	uint32_t v;

	(void)state;
	assert_int_equal(nccl_ldcache_walk(NULL, 0, NULL, NULL), -EINVAL);
	/* Not a cache. */
	assert_int_equal(nccl_ldcache_find("\x7f" "ELF\2\1\1", 7, "libnccl.so.2",
					   yes, NULL, out, sizeof(out)), -ENOEXEC);
	/* nlibs far beyond the image. */
	memcpy(bad, buf, n);
	v = 0x10000000;
	memcpy(bad + 20, &v, 4);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EINVAL);
	/* The value's offset outside the image, and near UINT32_MAX. */
	memcpy(bad, buf, n);
	v = (uint32_t)n;
	memcpy(bad + 48 + 8, &v, 4);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EINVAL);
	v = UINT32_MAX;
	memcpy(bad + 48 + 8, &v, 4);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EINVAL);
	/* A key pointing at the last byte, which is no NUL. */
	memcpy(bad, buf, n);
	bad[n - 1] = 'x';
	v = (uint32_t)(n - 1);
	memcpy(bad + 48 + 4, &v, 4);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EINVAL);
	/* Written for the other byte order. */
	memcpy(bad, buf, n);
	bad[28] = (char)(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 2 : 3);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EPROTONOSUPPORT);
	/* The old format's count beyond the image. */
	n = slurp(DATA "ld.so.cache-old", buf, sizeof(buf));
	memcpy(bad, buf, n);
	v = 1000;
	memcpy(bad + 12, &v, 4);
	assert_int_equal(nccl_ldcache_find(bad, n, "libnccl.so.2", yes, NULL,
					   out, sizeof(out)), -EINVAL);
}

/* --- the release ------------------------------------------------------------ */

static void test_version_name(void **state)
{
	static const struct {
		const char *path;
		bool ok;
		int ver;
	} rows[] = {
		{ "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9", true, NCCL_VER(2, 28, 9) },
		{ "libnccl.so.2.12.12", true, NCCL_VER(2, 12, 12) },
		{ "/x/libnccl.so.2.30.7-1", true, NCCL_VER(2, 30, 7) },
		{ "/x/libnccl.so.2", false, 0 },
		{ "/x/libnccl.so.2.28", false, 0 },
		{ "/x/libnccl-net.so.2.28.9", false, 0 },
		{ "/x/libnccl.so.2.100.1", false, 0 },
		{ "/x/libnccl.so.10.1.1", false, 0 },
		{ "", false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < N(rows); i++) {
		int ver = 0;
		bool ok = nccl_version_from_name(rows[i].path, &ver);

		if (ok != rows[i].ok || (ok && ver != rows[i].ver))
			fail_msg("%s: %d %d", rows[i].path, ok, ver);
	}
}

/* A libnccl-like file: ELF magic, filler, the string at offset at. */
static int lib_file(size_t size, size_t at, const char *text)
{
	char path[] = "/tmp/gdrcheck-libnccl-XXXXXX";
	int fd = mkstemp(path);
	char *b = calloc(1, size);

	assert_true(fd >= 0 && b);
	unlink(path);
	memcpy(b, "\x7f" "ELF\2\1\1", 7);
	for (size_t i = 64; i < size; i++)
		b[i] = (char)(i * 7 % 251 + 1);
	if (text)
		memcpy(b + at, text, strlen(text));
	assert_int_equal(write(fd, b, size), (ssize_t)size);
	free(b);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void test_version_file(void **state)
{
	static const char v[] = "NCCL version 2.28.9+cuda12.9";
	static const struct {
		size_t size, at;
		const char *text;
		bool ok;
		int ver;
	} rows[] = {
		/* init.cc VERSION_STRING in .rodata. */
		{ 14000, 9000, v, true, NCCL_VER(2, 28, 9) },
		/* Cut by the 64 KiB read: the carried bytes hold it. */
		{ 200000, 65536 - 5, v, true, NCCL_VER(2, 28, 9) },
		{ 200000, 65536 - 16, v, true, NCCL_VER(2, 28, 9) },
		{ 200000, 2 * 65536 - 40, v, true, NCCL_VER(2, 28, 9) },
		/* A tag without a number first, the real one later. */
		{ 20000, 100, "NCCL version unknown.......NCCL version 2.19.3", true,
		  NCCL_VER(2, 19, 3) },
		/* Cut at the end of the file: no version. */
		{ 20000, 20000 - 16, "NCCL version 2.2", false, 0 },
		{ 20000, 0, NULL, false, 0 },
		{ 0, 0, NULL, false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < N(rows); i++) {
		int ver = 0, fd;
		bool ok;

		if (!rows[i].size) {
			int p[2];

			assert_int_equal(pipe(p), 0);
			close(p[1]);
			fd = p[0];
		} else {
			fd = lib_file(rows[i].size, rows[i].at, rows[i].text);
		}
		ok = nccl_version_from_fd(fd, &ver);
		close(fd);
		if (ok != rows[i].ok || (ok && ver != rows[i].ver))
			fail_msg("row %zu: %d %d", i, ok, ver);
	}
	/* A closed fd reads nothing. */
	assert_false(nccl_version_from_fd(-1, &(int){ 0 }));
}

static void test_version_scan(void **state)
{
	size_t keep;
	int ver = 0;

	(void)state;
	/* No NUL needed after the number: exactly 9 bytes after the tag. */
	assert_int_equal(nccl_version_scan("NCCL version 2.30.7-1", 22, &ver,
					   &keep), 1);
	assert_int_equal(ver, NCCL_VER(2, 30, 7));
	/* Fewer: the caller carries the tail. */
	assert_int_equal(nccl_version_scan("xxNCCL version 2.30", 19, &ver,
					   &keep), 0);
	assert_int_equal(keep, 19);
	assert_int_equal(nccl_version_scan("", 0, &ver, &keep), 0);
	assert_int_equal(keep, 0);
	assert_true(nccl_version_parse("2.12.7", &ver));
	assert_int_equal(ver, NCCL_VER(2, 12, 7));
	assert_false(nccl_version_parse("2.12", &ver));
	assert_false(nccl_version_parse("x", &ver));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_formats),
		cmocka_unit_test(test_cache_truncated),
		cmocka_unit_test(test_cache_malformed),
		cmocka_unit_test(test_version_name),
		cmocka_unit_test(test_version_file),
		cmocka_unit_test(test_version_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
