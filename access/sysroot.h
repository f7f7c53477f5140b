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
 */

/* Largest sysfs/procfs text file we read; longer files are a finding. */
#define SYSFS_MAX_TEXT 65536

/*
 * With a sysroot, every lookup is confined to it: absolute links and ".."
 * resolve inside it (openat2 RESOLVE_IN_ROOT, or a userspace walk where
 * the kernel lacks openat2 or GDRCHECK_SYSROOT_RESOLVE=walk asks for it).
 */
void sysroot_set(const char *dir);
const char *sysroot_get(void);

/*
 * What --capture records, as a hook so this layer knows nothing of the
 * archive: every file read, directory listed or tested, link followed and
 * node tested for existence. NULL (the default) records nothing. Paths are
 * absolute inside the sysroot.
 */
struct sysroot_recorder {
	void (*file)(const char *path, const char *data, size_t len);
	void (*dir)(const char *path);
	void (*link)(const char *path, const char *target);
	void (*exists)(const char *path, bool is_dir);
};
void sysroot_set_recorder(const struct sysroot_recorder *rec);
bool sysroot_recording(void);
/* Record bytes read by someone else (libpci's config space). */
void sysroot_record_file(const char *path, const char *data, size_t len);

/* Test hook: use the userspace walk instead of openat2 (true), or not. */
void sysroot_force_walk(bool on);
bool sysroot_walking(void);

/*
 * A FIFO, socket or device node where a file belongs: refused, never opened
 * for reading (a FIFO blocks, a device acts). Linux has no EFTYPE.
 */
#define SYSROOT_ENOTREG EMEDIUMTYPE

/* strerror() that names SYSROOT_ENOTREG as "not a regular file ...". */
const char *sysroot_strerror(int err);

/* open(2) of path inside the sysroot, confined: an fd or -errno. */
int sysroot_open(const char *path, int flags);

/* stat(2) (following links, inside the sysroot); 0 or -errno. */
int sysroot_stat(const char *path, struct stat *st);

/* Does path exist (links followed inside the sysroot)? 0 or -errno. */
int sysroot_access(const char *path);

/* Build "<sysroot><path>" into buf. Returns buf, or NULL if it does not fit. */
char *sysroot_path(char *buf, size_t len, const char *path);

bool sysroot_exists(const char *path);
bool sysroot_is_dir(const char *path);

/*
 * Read a whole text file below the sysroot into buf (NUL terminated).
 * Returns bytes read, or -errno. -EFBIG when the file is larger than buf,
 * -SYSROOT_ENOTREG when it is not a regular file, -EISDIR for a directory.
 */
ssize_t sysroot_read(const char *path, char *buf, size_t len);

/*
 * Read up to len bytes of a regular file (binary, e.g. config space).
 * Returns the length read, or -errno (-SYSROOT_ENOTREG: not a file).
 */
ssize_t sysroot_read_bin(const char *path, void *buf, size_t len);

/* Read the first line (without newline, trailing blanks trimmed). */
int sysroot_read_line(const char *path, char *buf, size_t len);

/* Read a file holding one integer (decimal or 0x hex). -EINVAL if malformed. */
int sysroot_read_ll(const char *path, long long *val);

/* Basename of the symlink target of path; -errno on failure. */
int sysroot_link_name(const char *path, char *buf, size_t len);

/*
 * Resolve the symlink target of path relative to the sysroot (like
 * realpath, but the result is a path inside the sysroot, without the
 * sysroot prefix). -errno on failure, -ELOOP on link loops.
 */
int sysroot_realpath(const char *path, char *buf, size_t len);

/* Sorted directory listing; caller frees with sysroot_free_list(). */
int sysroot_list(const char *dir, char ***names, size_t *count);
void sysroot_free_list(char **names, size_t count);

#endif
