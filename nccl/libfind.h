/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_NCCL_LIBFIND_H
#define GDRCHECK_NCCL_LIBFIND_H
/*
 * Finding the libnccl.so.2 a job would load and its release, from bytes:
 * the dynamic loader's cache (/etc/ld.so.cache as glibc's ldconfig writes
 * it, elf/cache.c, sysdeps/generic/dl-cache.h) and the library file
 * itself (the "NCCL version 2.X.Y" string init.cc compiles in). Pure
 * parsing: the caller reads the files (probes/nccl_facts.c, below the
 * sysroot).
 */
#include <stdbool.h>
#include <stddef.h>

/* "2.28.9" (trailing text ignored): NCCL_VER code in *ver. */
bool nccl_version_parse(const char *s, int *ver);

/* The release in a resolved file name "…/libnccl.so.2.28.9". */
bool nccl_version_from_name(const char *path, int *ver);

/*
 * Look for "NCCL version X.Y.Z" in buf[0, len) (no NUL needed). 1 and *ver
 * when found; 0 when not, and *keep is how many bytes at the end of buf
 * the caller must put in front of the next chunk (a tag cut by the chunk
 * end is found then).
 */
int nccl_version_scan(const char *buf, size_t len, int *ver, size_t *keep);

/* Read fd to its end in 64 KiB chunks with nccl_version_scan. */
bool nccl_version_from_fd(int fd, int *ver);

/* One entry of an ld.so.cache: the name looked up, the path mapped. */
struct nccl_ldcache_entry {
	const char *key;	/* soname, e.g. "libnccl.so.2" */
	const char *value;	/* path, e.g. "/usr/lib/x86_64-linux-gnu/libnccl.so.2" */
};

/*
 * Walk the entries of an ld.so.cache image buf[0, n): the new format
 * ("glibc-ld.so.cache1.1", glibc >= 2.32's default), the compat format (the
 * old table, then the new one, which is read) or the old format alone
 * ("ld.so-1.7.0"). Every entry is checked before the first fn call;
 * fn(entry, arg) returning non-zero stops the walk with that value.
 * 0 when every entry was given; -ENOEXEC not an ld.so.cache (magic);
 * -EPROTONOSUPPORT written for the other byte order; -EINVAL truncated or
 * malformed (a count, table or string offset outside the image, a string
 * without its NUL).
 */
int nccl_ldcache_walk(const char *buf, size_t n,
		      int (*fn)(const struct nccl_ldcache_entry *e, void *arg),
		      void *arg);

/*
 * The first entry, in the cache's order, whose path starts with '/' and
 * ends in "/" name, is shorter than len and for which exists(path, arg)
 * holds: copied to out. 1 found, 0 none, or nccl_ldcache_walk's error.
 */
int nccl_ldcache_find(const char *buf, size_t n, const char *name,
		      bool (*exists)(const char *path, void *arg), void *arg,
		      char *out, size_t len);

#endif
