/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_SYMTAB_H
#define GDRCHECK_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>

#include "access/vendor.h"

/*
 * A function table filled by dlsym/dlvsym. Each entry names the symbol, the
 * version node (NULL = unversioned), the offset of its slot in the table and
 * whether the library is useless without it. An absent optional symbol is a
 * finding, not a failure.
 */
struct sym_entry {
	const char *name;
	const char *version;
	size_t offset;
	bool required;
};

/*
 * dlopen path (RTLD_NOW | RTLD_LOCAL) and resolve every entry into table.
 * Records the outcome in *lf. Returns the handle, or NULL when the library
 * could not be loaded or a required symbol is missing.
 */
void *symtab_load(const char *path, const struct sym_entry *syms, size_t n,
		  void *table, struct lib_facts *lf);

#endif
