// SPDX-License-Identifier: MIT
/*
 * The libnccl.so.2 a job would load and its release, from bytes
 * (nccl/libfind.h). Formats: glibc sysdeps/generic/dl-cache.h
 * (struct cache_file, file_entry, cache_file_new, file_entry_new) and
 * elf/cache.c save_cache; NCCL's src/init.cc VERSION_STRING.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nccl/libfind.h"
#include "nccl/rules.h"

/* --- the release ---------------------------------------------------------- */

bool nccl_version_parse(const char *s, int *ver)
{
	unsigned int x, y, z;

	if (sscanf(s, "%u.%u.%u", &x, &y, &z) != 3 || x > 9 || y > 99 || z > 99)
		return false;
	*ver = NCCL_VER((int)x, (int)y, (int)z);
	return true;
}

bool nccl_version_from_name(const char *real, int *ver)
{
	const char *b = strrchr(real, '/');

	b = b ? b + 1 : real;
	return !strncmp(b, "libnccl.so.", 11) && strchr(b + 11, '.') &&
	       nccl_version_parse(b + 11, ver);
}

#define VTAG "NCCL version "
#define VTAG_LEN (sizeof(VTAG) - 1)
#define VKEEP 64		/* bytes carried into the next chunk */

int nccl_version_scan(const char *buf, size_t len, int *ver, size_t *keep)
{
	const char *p = buf;

	*keep = len < VKEEP ? len : VKEEP;
	while ((p = memmem(p, len - (size_t)(p - buf), VTAG, VTAG_LEN))) {
		size_t off = (size_t)(p - buf) + VTAG_LEN, n;
		char num[VKEEP];

		/* Cut: the next chunk, with the carried bytes, has it. */
		if (off + 9 > len)
			break;
		n = len - off < sizeof(num) - 1 ? len - off : sizeof(num) - 1;
		memcpy(num, buf + off, n);
		num[n] = '\0';
		if (nccl_version_parse(num, ver))
			return 1;
		p++;
	}
	return 0;
}

bool nccl_version_from_fd(int fd, int *ver)
{
	const size_t size = 1 << 16;
	char *buf = malloc(size);
	size_t keep = 0;
	bool found = false;
	struct stat st;
	/* No further than the file's size, at most 2 GiB (a libnccl is
	 * a few hundred MiB): a file that grows under us ends there. */
	off_t left = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		     st.st_size < ((off_t)2 << 30) ? st.st_size : ((off_t)2 << 30);
	ssize_t n;

	if (!buf)
		return false;
	while (left > 0 && (n = read(fd, buf + keep, size - keep)) > 0) {
		size_t len = keep + (size_t)n;

		left -= n;

		if (nccl_version_scan(buf, len, ver, &keep)) {
			found = true;
			break;
		}
		memmove(buf, buf + len - keep, keep);
	}
	free(buf);
	return found;
}

/* --- the loader's cache ----------------------------------------------------- */

#define OLD_MAGIC "ld.so-1.7.0"		/* CACHEMAGIC */
#define NEW_MAGIC "glibc-ld.so.cache1.1"	/* CACHEMAGIC_NEW + CACHE_VERSION */
#define OLD_HDR 16		/* magic[11] (padded to 12), nlibs */
#define OLD_ENTRY 12		/* flags, key, value */
#define NEW_HDR 48		/* magic, version, nlibs, len_strings, flags... */
#define NEW_ENTRY 24		/* flags, key, value, osversion, hwcap */
#define ENDIAN_MASK 3		/* cache_file_new.flags */
#define ENDIAN_LITTLE 2
#define ENDIAN_BIG 3

static uint32_t u32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The NUL-terminated string at base + off, inside buf[0, n), or NULL. */
static const char *str_at(const char *buf, size_t n, size_t base,
			  uint32_t off)
{
	size_t at = base + off;

	if (at < base || at >= n || !memchr(buf + at, '\0', n - at))
		return NULL;
	return buf + at;
}

struct table {
	size_t entries;		/* offset of the first entry */
	size_t count, size;	/* entries and their size */
	size_t strbase;		/* string offsets are relative to this */
};

static int locate(const char *buf, size_t n, struct table *t)
{
	size_t newat = 0;
	bool big = false;

	if (n >= sizeof(NEW_MAGIC) - 1 &&
	    !memcmp(buf, NEW_MAGIC, sizeof(NEW_MAGIC) - 1)) {
		newat = 0;
	} else if (n >= sizeof(OLD_MAGIC) - 1 &&
		   !memcmp(buf, OLD_MAGIC, sizeof(OLD_MAGIC) - 1)) {
		size_t old;

		if (n < OLD_HDR)
			return -EINVAL;
		t->count = u32(buf + 12);
		if (t->count > (n - OLD_HDR) / OLD_ENTRY)
			return -EINVAL;
		old = OLD_HDR + t->count * OLD_ENTRY;
		/* compat: the new table follows, aligned (ALIGN_CACHE). */
		newat = (old + 7) & ~(size_t)7;
		if (n < newat + sizeof(NEW_MAGIC) - 1 ||
		    memcmp(buf + newat, NEW_MAGIC, sizeof(NEW_MAGIC) - 1)) {
			/* The old format alone: strings after the table. */
			t->entries = OLD_HDR;
			t->size = OLD_ENTRY;
			t->strbase = old;
			return 0;
		}
	} else {
		return -ENOEXEC;
	}
	if (n - newat < NEW_HDR)
		return -EINVAL;
	big = (buf[newat + 28] & ENDIAN_MASK) == ENDIAN_BIG;
	if (big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) &&
	    (buf[newat + 28] & ENDIAN_MASK) >= ENDIAN_LITTLE)
		return -EPROTONOSUPPORT;
	t->count = u32(buf + newat + 20);
	if (t->count > (n - newat - NEW_HDR) / NEW_ENTRY)
		return -EINVAL;
	t->entries = newat + NEW_HDR;
	t->size = NEW_ENTRY;
	t->strbase = newat;
	return 0;
}

int nccl_ldcache_walk(const char *buf, size_t n,
		      int (*fn)(const struct nccl_ldcache_entry *e, void *arg),
		      void *arg)
{
	struct table t = { 0 };
	int ret = buf ? locate(buf, n, &t) : -EINVAL;

	if (ret)
		return ret;
	/* Every entry first: a damaged cache fails whole, as ld.so's does. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < t.count; i++) {
			const char *e = buf + t.entries + i * t.size;
			struct nccl_ldcache_entry ent;

			ent.key = str_at(buf, n, t.strbase, u32(e + 4));
			ent.value = str_at(buf, n, t.strbase, u32(e + 8));
			if (!ent.key || !ent.value)
				return -EINVAL;
			if (pass && (ret = fn(&ent, arg)))
				return ret;
		}
	}
	return 0;
}

struct find {
	const char *name;
	bool (*exists)(const char *path, void *arg);
	void *arg;
	char *out;
	size_t len;
};

static int find_one(const struct nccl_ldcache_entry *e, void *arg)
{
	struct find *f = arg;
	size_t l = strlen(e->value), nl = strlen(f->name);

	if (e->value[0] != '/' || l <= nl + 1 || l >= f->len ||
	    e->value[l - nl - 1] != '/' || strcmp(e->value + l - nl, f->name) ||
	    !f->exists(e->value, f->arg))
		return 0;
	memcpy(f->out, e->value, l + 1);
	return 1;
}

int nccl_ldcache_find(const char *buf, size_t n, const char *name,
		      bool (*exists)(const char *path, void *arg), void *arg,
		      char *out, size_t len)
{
	struct find f = { name, exists, arg, out, len };

	return nccl_ldcache_walk(buf, n, find_one, &f);
}
