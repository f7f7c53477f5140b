/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_SYSROOT_H
#define GDRCHECK_SYSROOT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Every /sys, /proc and /dev lookup goes through these helpers so that
 * --sysroot DIR can point the whole tool at a captured node.
 *
 * The API in one paragraph: a struct sysroot is one tree to read. Make it
 * with sysroot_new(dir) (NULL or "/" is the real root) and release it with
 * sysroot_free(). Every sysroot_* call that looks something up takes it as
 * its first argument; nothing is process-wide, so two trees can be read in
 * one process. In a probe it is ctx->sr:
 *
 *	n = sysroot_read(ctx->sr, "/proc/cmdline", buf, sizeof(buf));
 *
 * Only sysroot_strerror() and sysroot_free_list() take no sysroot.
 *
 * Threads: a struct sysroot belongs to one thread at a time. Its caches
 * (run-stable answers, the directories it holds open, the walk's known
 * paths) take no lock, and sysroot_set/free close what it holds. Work on
 * another thread reads through its own sysroot_new(sysroot_get(sr)) (with
 * the same recorder when capturing, which must then be safe to call from
 * both), or hands its reads to the owner.
 *
 * Descriptors: under a sysroot it keeps the directories of files it read
 * open (O_PATH), at most 256 and at most a quarter of RLIMIT_NOFILE; none
 * for the real root, none after sysroot_guard_fd.
 */

/* Largest sysfs/procfs text file we read; longer files are a finding. */
#define SYSFS_MAX_TEXT 65536

struct sysroot;

/*
 * A new reader of dir (NULL or "/": the real root), or NULL when out of
 * memory. dir need not exist: every lookup below it then fails (ENOENT or
 * ENOTDIR; sysroot_is_dir(sr, "/") says so).
 *
 * With a sysroot, every lookup is confined to it: absolute links and ".."
 * resolve inside it (openat2 RESOLVE_IN_ROOT, or a userspace walk where
 * the kernel lacks openat2 or GDRCHECK_SYSROOT_RESOLVE=walk asks for it).
 */
struct sysroot *sysroot_new(const char *dir);
void sysroot_free(struct sysroot *sr);
/* Point an existing sr at another tree (tests); its caches are dropped. */
void sysroot_set(struct sysroot *sr, const char *dir);
/* The tree's directory, "/" for the real root. */
const char *sysroot_get(const struct sysroot *sr);

/*
 * What --capture records, as a hook so this layer knows nothing of the
 * archive: every file read, directory listed or tested, link followed and
 * node tested for existence. Each sysroot has its own hook (NULL, the
 * default, records nothing); arg is passed back to every call. Paths are
 * absolute inside the sysroot.
 */
struct sysroot_recorder {
	void (*file)(void *arg, const char *path, const char *data, size_t len);
	void (*dir)(void *arg, const char *path);
	void (*link)(void *arg, const char *path, const char *target);
	void (*exists)(void *arg, const char *path, bool is_dir);
};
void sysroot_set_recorder(struct sysroot *sr,
			  const struct sysroot_recorder *rec, void *arg);
bool sysroot_recording(const struct sysroot *sr);
/* Record bytes read by someone else (libpci's config space). */
void sysroot_record_file(struct sysroot *sr, const char *path,
			 const char *data, size_t len);

/*
 * From now on the tree's directory fd is checked (and reopened) before each
 * use: called in the forked worker, where a vendor library may close every
 * descriptor it did not open. The parent loads no vendor library.
 */
void sysroot_guard_fd(struct sysroot *sr);

/* Test hook: use the userspace walk instead of openat2 (true), or not. */
void sysroot_force_walk(struct sysroot *sr, bool on);
bool sysroot_walking(const struct sysroot *sr);

/*
 * A FIFO, socket or device node where a file belongs: refused, never opened
 * for reading (a FIFO blocks, a device acts). Linux has no EFTYPE.
 */
#define SYSROOT_ENOTREG EMEDIUMTYPE

/* strerror() that names SYSROOT_ENOTREG as "not a regular file ...". */
const char *sysroot_strerror(int err);

/* open(2) of path inside the sysroot, confined: an fd or -errno. */
int sysroot_open(struct sysroot *sr, const char *path, int flags);

/*
 * The one rule for a file read whole or streamed (kallsyms, a kernel
 * config, a capture member, a library): looked at with O_PATH first and
 * opened (read-only, non-blocking) only when it is a regular file, so a
 * FIFO never blocks and a device is never opened; an fd, or -EISDIR,
 * -SYSROOT_ENOTREG, -errno. Not recorded by --capture: the caller says
 * what it read.
 */
int sysroot_open_regular(struct sysroot *sr, const char *path);

/* stat(2) (following links, inside the sysroot); 0 or -errno. */
int sysroot_stat(struct sysroot *sr, const char *path, struct stat *st);

/* Does path exist (links followed inside the sysroot)? 0 or -errno. */
int sysroot_access(struct sysroot *sr, const char *path);

/* Build "<sysroot><path>" into buf. Returns buf, or NULL if it does not fit. */
char *sysroot_path(const struct sysroot *sr, char *buf, size_t len,
		   const char *path);

bool sysroot_exists(struct sysroot *sr, const char *path);
bool sysroot_is_dir(struct sysroot *sr, const char *path);

/*
 * Read a whole text file below the sysroot into buf (NUL terminated).
 * Returns bytes read, or -errno. -EFBIG when the file is larger than buf,
 * -SYSROOT_ENOTREG when it is not a regular file, -EISDIR for a directory.
 */
ssize_t sysroot_read(struct sysroot *sr, const char *path, char *buf,
		     size_t len);

/*
 * The first len - 1 bytes of a text file (NUL terminated), for files whose
 * head is all a probe reads (/proc/cpuinfo's first CPU on a 200-CPU node).
 * Never -EFBIG; a capture records the head it read, not the whole file.
 */
ssize_t sysroot_read_head(struct sysroot *sr, const char *path, char *buf,
			  size_t len);

/*
 * Read up to len bytes of a regular file (binary, e.g. config space).
 * Returns the length read, or -errno (-SYSROOT_ENOTREG: not a file).
 */
ssize_t sysroot_read_bin(struct sysroot *sr, const char *path, void *buf,
			 size_t len);

/* Read the first line (without newline, trailing blanks trimmed). */
int sysroot_read_line(struct sysroot *sr, const char *path, char *buf,
		      size_t len);

/* Read a file holding one integer (decimal or 0x hex). -EINVAL if malformed. */
int sysroot_read_ll(struct sysroot *sr, const char *path, long long *val);

/* Basename of the symlink target of path; -errno on failure. */
int sysroot_link_name(struct sysroot *sr, const char *path, char *buf,
		      size_t len);

/*
 * Resolve the symlink target of path relative to the sysroot (like
 * realpath, but the result is a path inside the sysroot, without the
 * sysroot prefix). -errno on failure, -ELOOP on link loops.
 */
int sysroot_realpath(struct sysroot *sr, const char *path, char *buf,
		     size_t len);

/* Sorted directory listing; caller frees with sysroot_free_list(). */
int sysroot_list(struct sysroot *sr, const char *dir, char ***names,
		 size_t *count);
void sysroot_free_list(char **names, size_t count);

#endif
