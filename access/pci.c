// SPDX-License-Identifier: MIT
/* libpci through a dlopen'd function table (LIBPCI_3.0 version node). */
#include "access/pci.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pci/pci.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/symtab.h"
#include "access/sysroot.h"

struct pci_table {
	struct pci_access *(*alloc)(void);
	void (*init)(struct pci_access *acc);
	void (*cleanup)(struct pci_access *acc);
	int (*set_param)(struct pci_access *acc, char *param, char *value);
	int (*lookup_method)(char *name);
	struct pci_dev *(*get_dev)(struct pci_access *acc, int domain, int bus,
				   int dev, int func);
	void (*free_dev)(struct pci_dev *dev);
	int (*read_block)(struct pci_dev *dev, int pos, uint8_t *buf, int len);
	void (*scan_bus)(struct pci_access *acc);
};

#define PSYM(n, field) { .name = n, .version = "LIBPCI_3.0", \
	.offset = offsetof(struct pci_table, field), .required = true }

static const struct sym_entry pci_syms[] = {
	PSYM("pci_alloc", alloc),
	PSYM("pci_init", init),
	PSYM("pci_cleanup", cleanup),
	PSYM("pci_set_param", set_param),
	PSYM("pci_lookup_method", lookup_method),
	PSYM("pci_get_dev", get_dev),
	PSYM("pci_free_dev", free_dev),
	PSYM("pci_read_block", read_block),
	PSYM("pci_scan_bus", scan_bus),
};

/* One run's libpci: its own handle, access and method (see pci.h). */
struct pci_lib {
	struct pci_table lp;
	void *handle;
	struct pci_access *acc;
	struct lib_facts facts;
	const char *method;
	struct sysroot *sr;
	sigjmp_buf fatal;
};

/*
 * libpci's error callback gets no pointer back to its caller: the one
 * libpci call in flight (pci_open, pci_config_read) names its pci_lib here
 * while it runs, and only then. Process-wide by libpci's design.
 */
static struct pci_lib *pci_armed;

/*
 * libpci's default error handler exits the process. Ours returns control to
 * the call that failed, which then reports the error as a finding.
 */
static void __attribute__((noreturn, format(printf, 1, 2)))
pci_error(char *msg, ...)
{
	char text[sizeof(pci_armed->facts.error)];
	va_list ap;

	va_start(ap, msg);
	vsnprintf(text, sizeof(text), msg, ap);
	va_end(ap);
	if (pci_armed) {
		snprintf(pci_armed->facts.error, sizeof(pci_armed->facts.error),
			 "%s", text);
		siglongjmp(pci_armed->fatal, 1);
	}
	fprintf(stderr, "gdrcheck: libpci: %s\n", text);
	_exit(3);
}

static void __attribute__((format(printf, 1, 2))) pci_quiet(char *msg, ...)
{
	(void)msg;
}

int pci_open(struct pci_lib **out, const struct pci_source *src,
	     struct sysroot *sr)
{
	char path[PATH_MAX], name[32];
	struct pci_lib *pl;
	struct pci_access *acc;

	pl = calloc(1, sizeof(*pl));
	*out = pl;
	if (!pl)
		return -ENOMEM;
	pl->method = "none";
	pl->sr = sr;
	pl->handle = symtab_load(src->libpci ? src->libpci : LIBPCI_DEFAULT,
				 pci_syms, sizeof(pci_syms) / sizeof(pci_syms[0]),
				 &pl->lp, &pl->facts);
	if (!pl->handle)
		return -ENOSYS;
	acc = pl->lp.alloc();
	if (!acc)
		goto fail;
	acc->error = pci_error;
	acc->warning = pci_quiet;
	acc->debug = pci_quiet;
	acc->writeable = 0;
	pci_armed = pl;
	if (sigsetjmp(pl->fatal, 1))
		goto fail;
	if (src->dump) {
		snprintf(name, sizeof(name), "dump");
		acc->method = (unsigned int)pl->lp.lookup_method(name);
		snprintf(name, sizeof(name), "dump.name");
		pl->lp.set_param(acc, name, (char *)src->dump);
		pl->method = "dump";
	} else {
		snprintf(name, sizeof(name), "linux-sysfs");
		acc->method = (unsigned int)pl->lp.lookup_method(name);
		if (!sysroot_path(sr, path, sizeof(path), "/sys/bus/pci"))
			goto fail;
		snprintf(name, sizeof(name), "sysfs.path");
		pl->lp.set_param(acc, name, path);
		pl->method = "linux-sysfs";
	}
	if ((int)acc->method <= 0) {
		snprintf(pl->facts.error, sizeof(pl->facts.error),
			 "libpci lacks the %s access method", pl->method);
		goto fail;
	}
	pl->lp.init(acc);
	/* The dump method only knows devices after a scan. */
	if (src->dump)
		pl->lp.scan_bus(acc);
	pci_armed = NULL;
	pl->acc = acc;
	return 0;
fail:
	pci_armed = NULL;
	pl->facts.loaded = false;
	/* acc may be half set up after a fatal error: leak it, do not touch. */
	return -EIO;
}

void pci_close(struct pci_lib *pl)
{
	if (!pl)
		return;
	if (pl->acc)
		pl->lp.cleanup(pl->acc);
	if (pl->handle)
		dlclose(pl->handle);
	free(pl);
}

const struct lib_facts *pci_lib_facts(const struct pci_lib *pl)
{
	static const struct lib_facts none;

	return pl ? &pl->facts : &none;
}

const char *pci_method(const struct pci_lib *pl)
{
	return pl ? pl->method : "none";
}

/*
 * libpci opens <sysroot>/sys/bus/pci/devices/BDF/config itself, blocking
 * and unconfined. It gets to only if the node is a regular file and the
 * kernel's unconfined resolution of that path lands where the confined
 * one does (no absolute link or ".." leads out of the sysroot).
 */
static int config_node_ok(struct sysroot *sr, const char *bdf)
{
	char rel[128], full[PATH_MAX];
	struct stat st, free_st;
	int ret;

	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/config", bdf);
	ret = sysroot_stat(sr, rel, &st);
	if (ret)
		return ret;
	if (!S_ISREG(st.st_mode))
		return -SYSROOT_ENOTREG;
	if (!strcmp(sysroot_get(sr), "/"))
		return 0;
	/* The same file both ways: the same inode (two calls, not a walk
	 * of every component). */
	if (!sysroot_path(sr, full, sizeof(full), rel) || stat(full, &free_st) ||
	    free_st.st_dev != st.st_dev || free_st.st_ino != st.st_ino)
		return -EXDEV;
	return 0;
}

int pci_config_read(struct pci_lib *pl, const char *bdf, uint8_t *buf,
		    size_t len)
{
	static const int sizes[] = { PCI_CFG_MAX, 256, 64 };
	unsigned int d, b, s, f;
	struct pci_dev *volatile dev = NULL;
	volatile int got = -EIO;

	if (!pl || !pl->acc)
		return -ENOSYS;
	if (sscanf(bdf, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
		return -EINVAL;
	if (!strcmp(pl->method, "linux-sysfs")) {
		int ret = config_node_ok(pl->sr, bdf);

		if (ret)
			return ret;
	}
	pci_armed = pl;
	if (sigsetjmp(pl->fatal, 1)) {
		pci_armed = NULL;
		if (dev)
			pl->lp.free_dev(dev);
		return -EIO;
	}
	dev = pl->lp.get_dev(pl->acc, (int)d, (int)b, (int)s, (int)f);
	if (!dev) {
		pci_armed = NULL;
		return -ENODEV;
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if ((size_t)sizes[i] > len)
			continue;
		if (pl->lp.read_block(dev, 0, buf, sizes[i])) {
			got = sizes[i];
			break;
		}
	}
	pl->lp.free_dev(dev);
	pci_armed = NULL;
	return got;
}
