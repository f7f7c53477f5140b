// SPDX-License-Identifier: MIT
/*
 * Sysroot-aware file access: the probes, the inventory and the PCIe tree
 * read /sys, /proc and /dev through here. (Not the only reader: libpci
 * reads config space itself, see access/pci.c, and the worker opens
 * /dev/infiniband and /dev/nvidia* through the vendor libraries.)
 */
#include "access/sysroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Paths sysroot_realpath has walked whose every component is known not to
 * be a symlink: the last few results, and the directories that held the
 * last few links it followed (/sys/bus/pci/devices, /sys/class/infiniband).
 * PCI devices are resolved in sorted order and share long prefixes
 * (/sys/devices/pci0000:00/0000:00:01.0/...): without this, most of the
 * lstat calls on a 400-function tree re-check the same directories.
 */
#define KNOWN_PATHS 4

/*
 * Attributes that do not change while gdrcheck runs (PCI ids, link
 * speeds, NUMA node, IOMMU group and driver links, whether a function is
 * a VF (physfn), an IOMMU group's type, RDMA port facts, the NVIDIA
 * driver's parameters), read once per run: the NCCL model, the
 * platform rules and the inventory each ask for them per GPU x NIC pair
 * (3,500 opens on an 8x12 tree). One answer per run is also one fact per
 * report. Other files (AER counters, kmsg, /proc/self) are read afresh.
 * The table starts small and doubles: at its full 16,384 slots (640 KiB)
 * from the start, touching it cost an 8x8 run 360 page faults.
 */
#define MEMO_SLOTS 16384
#define MEMO_FIRST 512

struct memo_entry {
	char *path;			/* NULL: free slot */
	char *data;			/* the text read or the link's target */
	size_t cap;			/* the caller's buffer size it was read with */
	ssize_t ret;			/* what the read returned */
	uint32_t hash;			/* memo_hash(path, kind) */
	unsigned char kind;		/* MEMO_TEXT, MEMO_LINK, MEMO_EXISTS */
};

struct read_memo {
	struct memo_entry *slot;	/* size (a power of two), or NULL */
	size_t size, used;
};

enum { MEMO_TEXT, MEMO_LINK, MEMO_EXISTS };

/*
 * Directories that files were read from, opened once (O_PATH, resolved
 * inside the root like any lookup), so that a file below one is a lookup
 * of one name (see stat_below). A full confined resolution per file, twice
 * (the O_PATH look, then the open), through each PCI function's
 * /sys/bus/pci/devices link, was most of an analysis run's CPU. The tree
 * build, the inventory and the link checks each pass over every function
 * once: the cache holds them all on an 8-GPU node (56 functions, 16 RDMA
 * port directories, the IOMMU groups). Sets of DIR_WAYS, the least recently
 * used one replaced; at most dirs_max descriptors held (a quarter of
 * RLIMIT_NOFILE, for the rest of the tool).
 */
#define DIR_SLOTS 256
#define DIR_WAYS 4
#define DIR_PATH_MAX 128

struct dir_slot {
	char path[DIR_PATH_MAX];	/* "" when free */
	int fd;
	unsigned int last_use;
};

/* One tree to read: everything a lookup needs, nothing process-wide. */
struct sysroot {
	char dir[PATH_MAX];		/* "" for the real root */
	/* The sysroot's directory, opened once: confined lookups start here. */
	int root_fd;
	bool guard_fd;			/* check root_fd before each use */
	dev_t root_dev;
	ino_t root_ino;
	/* openat2(RESOLVE_IN_ROOT), or the userspace walk (old kernels, tests). */
	bool use_walk, forced_walk;
	/* --capture's hook; NULL when nothing records what is read. */
	const struct sysroot_recorder *rec;
	void *rec_arg;
	char known_paths[KNOWN_PATHS][PATH_MAX];
	unsigned int known_next;
	struct read_memo memo;
	struct dir_slot dirs[DIR_SLOTS];
	unsigned int dirs_held, dirs_max, dirs_tick;
	/* Where root_fd is, as the kernel names it (sysroot_realpath's fast
	 * path); 0 not asked yet, 1 known, -1 unavailable. */
	int root_real_state;
	char root_real[PATH_MAX];
};

static void remember_not_link(struct sysroot *sr, const char *path)
{
	for (int i = 0; i < KNOWN_PATHS; i++)
		if (!strcmp(sr->known_paths[i], path))
			return;
	snprintf(sr->known_paths[sr->known_next], PATH_MAX, "%s", path);
	sr->known_next = (sr->known_next + 1) % KNOWN_PATHS;
}

static void memo_clear(struct read_memo *m)
{
	if (!m->slot)
		return;
	for (size_t i = 0; i < m->size; i++) {
		free(m->slot[i].path);
		free(m->slot[i].data);
	}
	free(m->slot);
	m->slot = NULL;
	m->size = 0;
	m->used = 0;
}

/* Is s one of the n names in list ("/name": s[1] first, no call)? */
static bool one_of(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[1] == list[i][1] && !strcmp(s, list[i]))
			return true;
	return false;
}

/* Is path one of the run-stable attributes above? */
static bool memo_wanted(const char *path)
{
	static const char *const pci[] = {
		"/vendor", "/device", "/class", "/subsystem_vendor",
		"/subsystem_device", "/revision", "/max_link_speed",
		"/max_link_width", "/current_link_speed",
		"/current_link_width", "/numa_node", "/iommu_group",
		"/driver", "/physfn",
	};
	static const char *const port[] = {
		"/link_layer", "/rate", "/state", "/phys_state",
	};

	/* Asked twice for every read: compare the last component only. */
	const char *base = strrchr(path, '/');

	if (!strcmp(path, "/proc/driver/nvidia/params"))
		return true;
	if (strncmp(path, "/sys/", 5))
		return false;
	if (!strncmp(path, "/sys/kernel/pci_switch_link/", 28))
		return true;
	if (!strncmp(path, "/sys/kernel/iommu_groups/", 25))
		return !strcmp(base, "/type");
	if (!strncmp(path, "/sys/bus/pci/devices/", 21))
		return one_of(base, pci, sizeof(pci) / sizeof(pci[0]));
	if (!strncmp(path, "/sys/class/infiniband/", 22) &&
	    strstr(path, "/ports/")) {
		if (strstr(path, "/gids/") || strstr(path, "/gid_attrs/"))
			return true;
		return one_of(base, port, sizeof(port) / sizeof(port[0]));
	}
	return false;
}

/* FNV-1a a word at a time: paths are 30 to 60 bytes, asked 3,000 times. */
static uint32_t memo_hash(const char *path, unsigned char kind)
{
	uint64_t h = 14695981039346656037ull ^ kind, w;
	size_t n = strlen(path), i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, path + i, 8);
		h = (h ^ w) * 1099511628211ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, path + i, n - i);
	h = (h ^ w ^ n) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* The entry for (path, kind): a filled one, a free one, or NULL. */
static struct memo_entry *memo_slot(struct read_memo *m, const char *path,
				    unsigned char kind, uint32_t hash)
{
	if (!m->slot)
		return NULL;
	for (size_t i = 0; i < m->size; i++) {
		struct memo_entry *e = &m->slot[(hash + i) & (m->size - 1)];

		if (!e->path)
			return e;
		if (e->hash == hash && e->kind == kind && !strcmp(e->path, path))
			return e;
	}
	return NULL;
}

/*
 * Room for one more entry: false when the table is at MEMO_SLOTS and
 * three quarters full (a quarter stays free: probes stay short) or out
 * of memory.
 */
static bool memo_room(struct read_memo *m)
{
	struct read_memo big;

	if (m->slot && m->used < m->size / 4 * 3)
		return true;
	if (m->slot && m->size >= MEMO_SLOTS)
		return false;
	big.size = m->slot ? m->size * 2 : MEMO_FIRST;
	big.used = m->used;
	big.slot = calloc(big.size, sizeof(*big.slot));
	if (!big.slot)
		return false;
	for (size_t i = 0; i < m->size; i++) {
		struct memo_entry *e = &m->slot[i];

		if (e->path)
			*memo_slot(&big, e->path, e->kind, e->hash) = *e;
	}
	free(m->slot);
	*m = big;
	return true;
}

/* A remembered answer for (path, kind, cap), or NULL. */
static const struct memo_entry *memo_get(struct sysroot *sr, const char *path,
					 unsigned char kind, size_t cap)
{
	struct memo_entry *e;

	if (!memo_wanted(path))
		return NULL;
	e = memo_slot(&sr->memo, path, kind, memo_hash(path, kind));
	if (!e || !e->path)
		return NULL;
	if (kind != MEMO_TEXT || e->cap == cap)
		return e;
	/*
	 * Another buffer size. A text that was read is the whole file (else
	 * it was EFBIG): the caller sees it, or EFBIG if it does not fit
	 * (read_text). Too big for one buffer may fit a bigger one.
	 */
	if (e->ret == -EFBIG && cap > e->cap)
		return NULL;
	return e;
}

/* Remember an answer (data: len bytes, may be NULL for none). */
static void memo_put(struct sysroot *sr, const char *path, unsigned char kind,
		     size_t cap, ssize_t ret, const char *data, size_t len)
{
	struct memo_entry *e;
	uint32_t hash;
	char *p, *d;

	if (!memo_wanted(path) || !memo_room(&sr->memo))
		return;
	hash = memo_hash(path, kind);
	e = memo_slot(&sr->memo, path, kind, hash);
	/* The first answer stays: it is the one the report already has. */
	if (!e || e->path)
		return;
	p = strdup(path);
	d = malloc(len + 1);
	if (!p || !d) {
		free(p);
		free(d);
		return;
	}
	if (data)
		memcpy(d, data, len);
	d[len] = '\0';
	sr->memo.used++;
	e->path = p;
	e->data = d;
	e->cap = cap;
	e->ret = ret;
	e->hash = hash;
	e->kind = kind;
}

static void dir_cache_clear(struct sysroot *sr)
{
	for (size_t i = 0; i < DIR_SLOTS; i++) {
		if (sr->dirs[i].path[0])
			close(sr->dirs[i].fd);
		sr->dirs[i].path[0] = '\0';
		sr->dirs[i].fd = -1;
	}
	sr->dirs_held = 0;
}

/* Point sr at dir (NULL or "/": the real root); forgets what it cached. */
void sysroot_set(struct sysroot *sr, const char *dir)
{
	const char *how = getenv("GDRCHECK_SYSROOT_RESOLVE");
	struct rlimit nofile;
	size_t n;

	memset(sr->known_paths, 0, sizeof(sr->known_paths));
	sr->known_next = 0;
	memo_clear(&sr->memo);
	dir_cache_clear(sr);
	sr->dirs_max = DIR_SLOTS;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) &&
	    nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur / 4 < DIR_SLOTS)
		sr->dirs_max = (unsigned int)(nofile.rlim_cur / 4);
	if (sr->root_fd >= 0)
		close(sr->root_fd);
	sr->root_fd = -1;
	sr->use_walk = sr->forced_walk || (how && !strcmp(how, "walk"));

	if (!dir || !strcmp(dir, "/")) {
		sr->dir[0] = '\0';
		return;
	}
	snprintf(sr->dir, sizeof(sr->dir), "%s", dir);
	n = strlen(sr->dir);
	while (n > 0 && sr->dir[n - 1] == '/')
		sr->dir[--n] = '\0';
	/* Not a directory: every lookup below it fails (ENOTDIR/ENOENT). */
	sr->root_fd = open(sr->dir[0] ? sr->dir : "/",
			   O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sr->root_fd >= 0) {
		struct stat st;

		if (fstat(sr->root_fd, &st)) {
			close(sr->root_fd);
			sr->root_fd = -1;
			return;
		}
		sr->root_dev = st.st_dev;
		sr->root_ino = st.st_ino;
	}
}

struct sysroot *sysroot_new(const char *dir)
{
	struct sysroot *sr = calloc(1, sizeof(*sr));

	if (!sr)
		return NULL;
	sr->root_fd = -1;
	sysroot_set(sr, dir);
	return sr;
}

void sysroot_free(struct sysroot *sr)
{
	if (!sr)
		return;
	if (sr->root_fd >= 0)
		close(sr->root_fd);
	memo_clear(&sr->memo);
	dir_cache_clear(sr);
	free(sr);
}

void sysroot_guard_fd(struct sysroot *sr)
{
	if (!sr)
		return;
	sr->guard_fd = true;
	/* Not used here (dir_fd): the descriptors go back to the worker. */
	dir_cache_clear(sr);
}

/*
 * The sysroot's directory fd, checked before each use in the worker (see
 * sysroot_guard_fd): a vendor library there may close every descriptor it
 * did not open, and the number may then name another file. A lost or
 * reused fd is opened again by path.
 */
static int sysroot_root_fd(struct sysroot *sr)
{
	struct stat st;

	if (sr->root_fd < 0)
		return -1;
	if (!sr->guard_fd)
		return sr->root_fd;
	if (!fstat(sr->root_fd, &st) && st.st_dev == sr->root_dev &&
	    st.st_ino == sr->root_ino && S_ISDIR(st.st_mode))
		return sr->root_fd;
	sr->root_fd = open(sr->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sr->root_fd >= 0 &&
	    (fstat(sr->root_fd, &st) || st.st_dev != sr->root_dev ||
	     st.st_ino != sr->root_ino)) {
		/* The directory itself was replaced: confine to nothing. */
		close(sr->root_fd);
		sr->root_fd = -1;
	}
	return sr->root_fd;
}

void sysroot_force_walk(struct sysroot *sr, bool on)
{
	sr->forced_walk = on;
	sr->use_walk = on;
	/* Each resolution path answers for itself (the tests compare them). */
	memo_clear(&sr->memo);
	dir_cache_clear(sr);
}

bool sysroot_walking(const struct sysroot *sr)
{
	return sr->use_walk;
}

void sysroot_set_recorder(struct sysroot *sr,
			  const struct sysroot_recorder *rec, void *arg)
{
	sr->rec = rec;
	sr->rec_arg = arg;
	/* What is read from now on is recorded: nothing comes from before
	 * (a directory the walk opened before recorded no links). */
	memo_clear(&sr->memo);
	dir_cache_clear(sr);
}

bool sysroot_recording(const struct sysroot *sr)
{
	return sr->rec != NULL;
}

void sysroot_record_file(struct sysroot *sr, const char *path,
			 const char *data, size_t len)
{
	if (sr->rec)
		sr->rec->file(sr->rec_arg, path, data, len);
}

const char *sysroot_get(const struct sysroot *sr)
{
	return sr->dir[0] ? sr->dir : "/";
}

char *sysroot_path(const struct sysroot *sr, char *buf, size_t len,
		   const char *path)
{
	int n = snprintf(buf, len, "%s%s", sr->dir, path);

	if (n < 0 || (size_t)n >= len)
		return NULL;
	return buf;
}

const char *sysroot_strerror(int err)
{
	if (err == SYSROOT_ENOTREG)
		return "not a regular file (a FIFO, socket or device)";
	return strerror(err);
}

/*
 * Open the already resolved path (no links left, no "." or "..") below
 * the root, one component at a time and never following a link: a link
 * swapped in after the resolution fails with ELOOP instead of leading out.
 */
static int open_resolved(struct sysroot *sr, const char *real, int flags)
{
	char comp[NAME_MAX + 1];
	const char *p = real;
	int dfd, fd;

	if (sysroot_root_fd(sr) < 0)
		return -ENOENT;
	dfd = fcntl(sr->root_fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	for (;;) {
		const char *end;
		size_t len;
		bool last;

		while (*p == '/')
			p++;
		if (!*p) {
			/* The root itself. */
			fd = openat(dfd, ".", flags | O_CLOEXEC);
			fd = fd < 0 ? -errno : fd;
			break;
		}
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len > NAME_MAX) {
			fd = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		last = !*p;
		fd = openat(dfd, comp, last ? flags | O_NOFOLLOW | O_CLOEXEC :
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			break;
		}
		if (last)
			break;
		close(dfd);
		dfd = fd;
	}
	close(dfd);
	return fd;
}

/* The userspace resolution: sysroot_realpath, then a link-free open. */
static int walk_open(struct sysroot *sr, const char *path, int flags)
{
	char real[PATH_MAX], parent[PATH_MAX];
	const char *base = strrchr(path, '/');
	int ret;

	/* "file/" is not a directory, as the kernel says too. */
	if (base && !base[1] && base != path)
		flags |= O_DIRECTORY;
	if (!(flags & O_NOFOLLOW) || !base || !base[1] ||
	    !strcmp(base, "/.") || !strcmp(base, "/..")) {
		ret = sysroot_realpath(sr, path, real, sizeof(real));
		if (ret)
			return ret;
		return open_resolved(sr, real, flags);
	}
	/* The last component itself, not what it points to. */
	if ((size_t)(base - path) >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, (size_t)(base - path));
	parent[base - path] = '\0';
	ret = sysroot_realpath(sr, parent[0] ? parent : "/", real, sizeof(real));
	if (ret)
		return ret;
	if (strlen(real) + strlen(base) >= sizeof(real))
		return -ENAMETOOLONG;
	if (!strcmp(real, "/"))
		real[0] = '\0';
	strcat(real, base);
	return open_resolved(sr, real, flags);
}

int sysroot_open(struct sysroot *sr, const char *path, int flags)
{
	struct open_how how;
	int fd, tries = 0;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (!sr->dir[0]) {
		fd = open(path, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (sysroot_root_fd(sr) < 0)
		return -ENOENT;
	while (!sr->use_walk) {
		memset(&how, 0, sizeof(how));
		how.flags = (unsigned long long)(flags | O_CLOEXEC);
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, sr->root_fd,
				  path[1] ? path + 1 : ".", &how, sizeof(how));
		if (fd >= 0)
			return fd;
		/* A rename elsewhere in the tree: the kernel asks to retry. */
		if (errno == EAGAIN && ++tries < 8)
			continue;
		if (errno != ENOSYS)
			return -errno;
		sr->use_walk = true;	/* a kernel before 5.6 */
	}
	return walk_open(sr, path, flags);
}

/* May this sysroot keep directories open (see dir_fd)? */
static bool dirs_cached(const struct sysroot *sr)
{
	return sr->dir[0] && !sr->guard_fd;
}

/*
 * The cached descriptor of the directory named by the first len bytes of
 * path, or -1 and *slot: where to keep it once opened (NULL: nowhere).
 */
static int dir_find(struct sysroot *sr, const char *path, size_t len,
		    struct dir_slot **slot)
{
	struct dir_slot *set, *free_slot = NULL, *oldest = NULL;
	uint32_t h = 2166136261u;

	*slot = NULL;
	if (len >= DIR_PATH_MAX)
		return -1;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 16777619u;
	set = &sr->dirs[h % (DIR_SLOTS / DIR_WAYS) * DIR_WAYS];
	for (int i = 0; i < DIR_WAYS; i++) {
		struct dir_slot *s = &set[i];

		if (!strncmp(s->path, path, len) && s->path[len] == '\0') {
			s->last_use = ++sr->dirs_tick;
			return s->fd;
		}
		if (!s->path[0])
			free_slot = free_slot ? free_slot : s;
		else if (!oldest || s->last_use < oldest->last_use)
			oldest = s;
	}
	*slot = free_slot && sr->dirs_held < sr->dirs_max ? free_slot : oldest;
	return -1;
}

/* Keep fd, a directory opened as path's first len bytes, in slot. */
static void dir_keep(struct sysroot *sr, struct dir_slot *slot,
		     const char *path, size_t len, int fd)
{
	if (slot->path[0]) {
		close(slot->fd);
		sr->dirs_held--;
	}
	memcpy(slot->path, path, len);
	slot->path[len] = '\0';
	slot->fd = fd;
	slot->last_use = ++sr->dirs_tick;
	sr->dirs_held++;
}

/*
 * The directory holding path, from the cache or opened now, and the name
 * below it; -1 where the full resolution must answer: the real root (its
 * files are read afresh, a device may come and go), the worker (a vendor
 * library may close our descriptors: sysroot_guard_fd), a path whose last
 * component is "." or "..", or a directory that does not open.
 */
static int dir_fd(struct sysroot *sr, const char *path, const char **name)
{
	const char *base = strrchr(path, '/');
	struct dir_slot *slot;
	char dir[DIR_PATH_MAX];
	size_t len;
	int fd;

	if (!dirs_cached(sr) || !base || base == path || !base[1] ||
	    !strcmp(base, "/.") || !strcmp(base, "/.."))
		return -1;
	*name = base + 1;
	len = (size_t)(base - path);
	fd = dir_find(sr, path, len, &slot);
	if (fd >= 0 || !slot)
		return fd;
	memcpy(dir, path, len);
	dir[len] = '\0';
	fd = sysroot_open(sr, dir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return -1;
	dir_keep(sr, slot, path, len, fd);
	return fd;
}

/*
 * stat(2) of path as the name below its cached directory: 0 (*dfd and
 * *name set, st filled), -ENOENT, or 1 where the full resolution must
 * answer (no cached directory, a link, an error other than absence).
 *
 * Why this stays confined: the directory was resolved inside the root
 * (sysroot_open), and one plain name (no "/", no "." or "..") looked up
 * without following a link cannot leave it. A link there goes the long
 * way, resolved inside the root. What is left is a directory moved out of
 * the tree after this run resolved it: a captured tree is not changed
 * while it is analysed, and the real root never comes here (dir_fd).
 */
static int stat_below(struct sysroot *sr, const char *path, struct stat *st,
		      int *dfd, const char **name)
{
	*dfd = dir_fd(sr, path, name);
	if (*dfd < 0)
		return 1;
	if (fstatat(*dfd, *name, st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? -ENOENT : 1;
	return S_ISLNK(st->st_mode) ? 1 : 0;
}

int sysroot_stat(struct sysroot *sr, const char *path, struct stat *st)
{
	const char *name;
	int dfd, fd, ret = stat_below(sr, path, st, &dfd, &name);

	if (ret <= 0)
		return ret;
	fd = sysroot_open(sr, path, O_PATH);
	if (fd < 0)
		return fd;
	ret = 0;
	if (fstat(fd, st))
		ret = -errno;
	close(fd);
	return ret;
}

int sysroot_access(struct sysroot *sr, const char *path)
{
	const struct memo_entry *e = memo_get(sr, path, MEMO_EXISTS, 0);
	struct stat st;
	int ret;

	if (e)
		return (int)e->ret;
	ret = sysroot_stat(sr, path, &st);
	/* A --capture replays only what it recorded as existing. */
	if (!ret && sr->rec)
		sr->rec->exists(sr->rec_arg, path, S_ISDIR(st.st_mode));
	memo_put(sr, path, MEMO_EXISTS, 0, ret, NULL, 0);
	return ret;
}

/* 0 for a regular file, else what reading it answers. */
static int regular_or_error(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	return S_ISREG(st->st_mode) ? 0 : -SYSROOT_ENOTREG;
}

/* fd if it is still the file st described, else -SYSROOT_ENOTREG. */
static int same_file(int fd, const struct stat *st)
{
	struct stat now;

	/* Swapped since it was looked at: refuse what was not checked. */
	if (fstat(fd, &now) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		return -SYSROOT_ENOTREG;
	}
	return fd;
}

/*
 * Open a file for reading only if it is a regular file. It is looked at
 * first (fstatat below its cached directory, else O_PATH): opening a FIFO
 * can block and opening a device can act on the device, so neither is
 * opened for reading at all.
 */
int sysroot_open_regular(struct sysroot *sr, const char *path)
{
	const char *name;
	struct stat st;
	int dfd, pfd, fd;

	fd = stat_below(sr, path, &st, &dfd, &name);
	if (fd < 0)
		return fd;
	if (fd == 0) {
		fd = regular_or_error(&st);
		if (fd)
			return fd;
		/* O_NOFOLLOW: a link swapped in since goes the long way. */
		fd = openat(dfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return same_file(fd, &st);
		if (errno != ELOOP)
			return -errno;
	}
	pfd = sysroot_open(sr, path, O_PATH);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st))
		fd = -errno;
	else
		fd = regular_or_error(&st);
	if (!fd) {
		fd = sysroot_open(sr, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0)
			fd = same_file(fd, &st);
	}
	close(pfd);
	return fd;
}

/*
 * A listing is replayed only if its entries exist: record the directories
 * and links in it (files count once they are read). Looked up relative to
 * the listed directory's descriptor, so the entries stay inside it.
 */
static void capture_listing(struct sysroot *sr, int dfd, const char *dir,
			    char **names, size_t n)
{
	sr->rec->dir(sr->rec_arg, dir);
	for (size_t i = 0; i < n; i++) {
		char rel[PATH_MAX], target[PATH_MAX];
		struct stat st;
		ssize_t len;

		if (snprintf(rel, sizeof(rel), "%s/%s", dir, names[i]) >=
		    (int)sizeof(rel) ||
		    fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			sr->rec->dir(sr->rec_arg, rel);
		} else if (S_ISLNK(st.st_mode)) {
			len = readlinkat(dfd, names[i], target,
					 sizeof(target) - 1);
			if (len < 0)
				continue;
			target[len] = '\0';
			sr->rec->link(sr->rec_arg, rel, target);
		}
	}
}

bool sysroot_exists(struct sysroot *sr, const char *path)
{
	return sysroot_access(sr, path) == 0;
}

bool sysroot_is_dir(struct sysroot *sr, const char *path)
{
	struct stat st;

	if (sysroot_stat(sr, path, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (sr->rec)
		sr->rec->dir(sr->rec_arg, path);
	return true;
}

static ssize_t read_text(struct sysroot *sr, const char *path, char *buf,
			 size_t len, bool head_only)
{
	const struct memo_entry *e;
	size_t used = 0;
	ssize_t ret;
	bool whole;
	int fd;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	e = head_only ? NULL : memo_get(sr, path, MEMO_TEXT, len);
	if (e) {
		if (e->ret >= 0 && (size_t)e->ret > len - 1)
			return -EFBIG;
		if (e->ret >= 0)
			memcpy(buf, e->data, (size_t)e->ret + 1);
		return e->ret;
	}
	fd = sysroot_open_regular(sr, path);
	if (fd < 0) {
		if (!head_only)
			memo_put(sr, path, MEMO_TEXT, len, fd, NULL, 0);
		return fd;
	}
	/*
	 * A sysfs attribute comes whole from one read (and a captured one is
	 * a regular file, where a short read is the end): no second read to
	 * see the end. procfs files can come in pieces: read to the end.
	 */
	whole = !strncmp(path, "/sys/", 5);
	for (;;) {
		if (used == len - 1 && head_only)
			break;
		if (used == len - 1) {
			char probe;

			/* Full: one more byte means the file is too big. */
			if (read(fd, &probe, 1) > 0) {
				ret = -EFBIG;
				goto out;
			}
			break;
		}
		ret = read(fd, buf + used, len - 1 - used);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (ret == 0)
			break;
		used += (size_t)ret;
		if (whole && used < len - 1)
			break;
	}
	buf[used] = '\0';
	ret = (ssize_t)used;
	if (sr->rec)
		sr->rec->file(sr->rec_arg, path, buf, used);
out:
	close(fd);
	if (ret < 0)
		buf[0] = '\0';
	if (!head_only)
		memo_put(sr, path, MEMO_TEXT, len, ret, buf,
			 ret < 0 ? 0 : (size_t)ret);
	return ret;
}

ssize_t sysroot_read(struct sysroot *sr, const char *path, char *buf,
		     size_t len)
{
	return read_text(sr, path, buf, len, false);
}

ssize_t sysroot_read_head(struct sysroot *sr, const char *path, char *buf,
			  size_t len)
{
	return read_text(sr, path, buf, len, true);
}

ssize_t sysroot_read_bin(struct sysroot *sr, const char *path, void *buf,
			 size_t len)
{
	size_t used = 0;
	ssize_t ret = 0;
	int fd = sysroot_open_regular(sr, path);

	if (fd < 0)
		return fd;
	while (used < len) {
		ret = pread(fd, (char *)buf + used, len - used, (off_t)used);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			break;
		used += (size_t)ret;
	}
	close(fd);
	if (ret < 0)
		return -errno;
	return (ssize_t)used;
}

int sysroot_read_line(struct sysroot *sr, const char *path, char *buf,
		      size_t len)
{
	char tmp[4096];
	ssize_t n = sysroot_read(sr, path, tmp, sizeof(tmp));
	char *nl;
	size_t l;

	if (len)
		buf[0] = '\0';
	if (n < 0)
		return (int)n;
	nl = strchr(tmp, '\n');
	if (nl)
		*nl = '\0';
	l = strlen(tmp);
	while (l > 0 && (tmp[l - 1] == ' ' || tmp[l - 1] == '\t' ||
			 tmp[l - 1] == '\r'))
		tmp[--l] = '\0';
	if (l >= len)
		return -EOVERFLOW;
	memcpy(buf, tmp, l + 1);
	return 0;
}

int sysroot_read_ll(struct sysroot *sr, const char *path, long long *val)
{
	char line[128];
	char *end;
	long long v;
	int ret = sysroot_read_line(sr, path, line, sizeof(line));
	bool hex;

	if (ret)
		return ret;
	hex = line[0] == '0' && (line[1] == 'x' || line[1] == 'X');
	if (!line[0] || (hex && !line[2]))
		return -EINVAL;
	errno = 0;
	v = strtoll(line, &end, hex ? 16 : 10);
	if (errno || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

/* The target of the link at path (recorded when capturing). */
static int read_link(struct sysroot *sr, const char *path, char *target,
		     size_t len)
{
	struct stat st;
	ssize_t n;
	int fd = sysroot_open(sr, path, O_PATH | O_NOFOLLOW);

	target[0] = '\0';
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISLNK(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = readlinkat(fd, "", target, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (sr->rec)
		sr->rec->link(sr->rec_arg, path, target);
	return 0;
}

int sysroot_link_name(struct sysroot *sr, const char *path, char *buf,
		      size_t len)
{
	const struct memo_entry *e = memo_get(sr, path, MEMO_LINK, 0);
	char target[PATH_MAX];
	const char *base;
	int ret;

	if (e) {
		if (e->ret < 0)
			return (int)e->ret;
		snprintf(target, sizeof(target), "%s", e->data);
	} else {
		ret = read_link(sr, path, target, sizeof(target));
		memo_put(sr, path, MEMO_LINK, 0, ret, target,
			 ret < 0 ? 0 : strlen(target));
		if (ret < 0)
			return ret;
	}
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -EOVERFLOW;
	strcpy(buf, base);
	return 0;
}

/* Append component to path (in place), handling "." and "..". */
static int path_push(char *path, size_t len, const char *comp, size_t clen)
{
	size_t n = strlen(path);

	if (clen == 0 || (clen == 1 && comp[0] == '.'))
		return 0;
	if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
		char *slash = strrchr(path, '/');

		if (slash)
			*slash = '\0';
		return 0;
	}
	if (n + 1 + clen >= len)
		return -ENAMETOOLONG;
	path[n] = '/';
	memcpy(path + n + 1, comp, clen);
	path[n + 1 + clen] = '\0';
	return 0;
}

/* Is path a remembered path or one of its leading directories? */
static bool known_not_link(const struct sysroot *sr, const char *path)
{
	size_t n = strlen(path);

	for (int i = 0; n && i < KNOWN_PATHS; i++)
		if (!strncmp(sr->known_paths[i], path, n) &&
		    (sr->known_paths[i][n] == '/' || sr->known_paths[i][n] == '\0'))
			return true;
	return false;
}

/*
 * Walk path component by component, following symlinks inside the sysroot
 * (absolute link targets are re-rooted). At most 40 links, like the kernel.
 */
static int realpath_walk(struct sysroot *sr, const char *path, char *buf,
			 size_t len);

/* The kernel's name of @fd (/proc/self/fd/N), or -1. */
static ssize_t fd_name(int fd, char *buf, size_t len)
{
	char link[40];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * The kernel resolves the path inside the root (openat2 RESOLVE_IN_ROOT)
 * and names what it reached: three calls instead of a stat per component.
 * Not while capturing (the walk records each link it follows), nor on a
 * kernel without openat2 or a /proc to ask. 1: use the walk.
 */
static int realpath_by_kernel(struct sysroot *sr, const char *path, char *buf,
			      size_t len)
{
	struct dir_slot *slot = NULL;
	char real[PATH_MAX];
	struct stat st;
	const char *rest;
	size_t plen;
	int fd;

	if (sr->rec || sr->use_walk || sr->root_real_state < 0)
		return 1;
	if (sr->root_real_state == 0) {
		sr->root_real_state = -1;
		if (sysroot_root_fd(sr) < 0 ||
		    fd_name(sr->root_fd, sr->root_real, sizeof(sr->root_real)) < 0 ||
		    sr->root_real[0] != '/')
			return 1;
		if (!strcmp(sr->root_real, "/"))
			sr->root_real[0] = '\0';
		sr->root_real_state = 1;
	}
	/* A directory read from (a PCI function's) is open already. */
	fd = dirs_cached(sr) ? dir_find(sr, path, strlen(path), &slot) : -1;
	if (fd >= 0) {
		if (fd_name(fd, real, sizeof(real)) < 0)
			return 1;
	} else {
		fd = sysroot_open(sr, path, O_PATH);
		if (fd < 0)
			return sr->use_walk ? 1 : fd;
		if (fd_name(fd, real, sizeof(real)) < 0) {
			close(fd);
			return 1;
		}
		/* Keep a directory: its files are read next. */
		if (slot && !fstat(fd, &st) && S_ISDIR(st.st_mode))
			dir_keep(sr, slot, path, strlen(path), fd);
		else
			close(fd);
	}
	plen = strlen(sr->root_real);
	if (strncmp(real, sr->root_real, plen) ||
	    (real[plen] != '/' && real[plen] != '\0'))
		return 1;	/* renamed meanwhile, or " (deleted)": walk */
	rest = real[plen] ? real + plen : "/";
	if (strlen(rest) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, rest);
	return 0;
}

int sysroot_realpath(struct sysroot *sr, const char *path, char *buf,
		     size_t len)
{
	int fast = realpath_by_kernel(sr, path, buf, len);

	if (fast <= 0)
		return fast;
	return realpath_walk(sr, path, buf, len);
}

static int realpath_walk(struct sysroot *sr, const char *path, char *buf,
			 size_t len)
{
	char todo[PATH_MAX], done[PATH_MAX] = "";
	char full[PATH_MAX], target[PATH_MAX];
	int links = 0;

	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return -ENAMETOOLONG;
	while (todo[0]) {
		char *comp = todo, *next;
		size_t clen;
		struct stat st;
		ssize_t n;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		clen = next ? (size_t)(next - comp) : strlen(comp);
		if (clen == 0)
			break;
		{
			char saved[PATH_MAX];
			int ret;

			snprintf(saved, sizeof(saved), "%s", done);
			ret = path_push(done, sizeof(done), comp, clen);
			if (ret)
				return ret;
			if (known_not_link(sr, done)) {
				memmove(todo, comp + clen, strlen(comp + clen) + 1);
				continue;
			}
			if (!sysroot_path(sr, full, sizeof(full), done[0] ? done : "/"))
				return -ENAMETOOLONG;
			if (lstat(full, &st) < 0)
				return -errno;
			if (!S_ISLNK(st.st_mode)) {
				memmove(todo, comp + clen, strlen(comp + clen) + 1);
				continue;
			}
			if (++links > 40)
				return -ELOOP;
			if (saved[0])	/* the link's directory: no links */
				remember_not_link(sr, saved);
			n = readlink(full, target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			if (sr->rec)
				sr->rec->link(sr->rec_arg, done, target);
			/* Rest of the path after this component. */
			{
				char rest[PATH_MAX];

				snprintf(rest, sizeof(rest), "%s", comp + clen);
				if (snprintf(todo, sizeof(todo), "%s%s", target,
					     rest) >= (int)sizeof(todo))
					return -ENAMETOOLONG;
			}
			if (target[0] == '/')
				done[0] = '\0';
			else
				snprintf(done, sizeof(done), "%s", saved);
		}
	}
	if (!done[0])
		snprintf(done, sizeof(done), "/");
	if (strlen(done) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, done);
	remember_not_link(sr, done);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sysroot_list(struct sysroot *sr, const char *dir, char ***names,
		 size_t *count)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0, fd;

	*names = NULL;
	*count = 0;
	fd = sysroot_open(sr, dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				ret = -ENOMEM;
				goto fail;
			}
			v = nv;
			cap = ncap;
		}
		v[n] = strdup(de->d_name);
		if (!v[n]) {
			ret = -ENOMEM;
			goto fail;
		}
		n++;
	}
	if (sr->rec)
		capture_listing(sr, dirfd(d), dir, v, n);
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	*count = n;
	return 0;
fail:
	closedir(d);
	sysroot_free_list(v, n);
	return ret;
}

void sysroot_free_list(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}
