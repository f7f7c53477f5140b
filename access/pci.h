/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PCI_H
#define GDRCHECK_PCI_H

/*
 * PCI configuration space through libpci (pciutils), dlopen'd so that the
 * binary starts on nodes without libpci.so.3 (its absence is a finding).
 * The sysfs method is pointed at the sysroot's /sys/bus/pci with libpci's
 * "sysfs.path" parameter; --pci-dump uses libpci's dump method instead.
 * Opened read-only: gdrcheck never writes config space.
 */
#include <stddef.h>
#include <stdint.h>

#include "access/vendor.h"

#define LIBPCI_DEFAULT "libpci.so.3"
#define PCI_CFG_MAX 4096

struct pci_source {
	const char *libpci;	/* NULL: libpci.so.3 */
	const char *dump;	/* lspci -xxxx output to read instead */
};

/*
 * One run's libpci, per context (two contexts, two of them). pci_open()
 * loads libpci and sets it up for the tree sr (its sysfs method reads
 * <sysroot>/sys/bus/pci); *out is set even when it fails (NULL only when
 * out of memory), so that pci_lib_facts() can say why. 0 or -errno.
 * pci_close() releases it (NULL is fine).
 */
struct pci_lib;
struct sysroot;
int pci_open(struct pci_lib **out, const struct pci_source *src,
	     struct sysroot *sr);
void pci_close(struct pci_lib *pl);
const struct lib_facts *pci_lib_facts(const struct pci_lib *pl);
const char *pci_method(const struct pci_lib *pl);

/*
 * Read as much config space of bdf ("0000:00:06.0") as the method allows:
 * 4096, 256 or only 64 bytes (an unprivileged sysfs reader gets 64).
 * Returns the length read, or -errno (-ENODEV: no such device, -ENOSYS:
 * libpci unavailable).
 */
int pci_config_read(struct pci_lib *pl, const char *bdf, uint8_t *buf,
		    size_t len);

#endif
