// SPDX-License-Identifier: MIT
/* dlopen + symbol tables, the way NCCL and gdrcopy wrap vendor libraries. */
#include "access/symtab.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void append_name(char *list, size_t len, const char *name,
			const char *version)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, "%s%s%s%s", used ? " " : "", name,
		 version ? "@" : "", version ? version : "");
}

void *symtab_load(const char *path, const struct sym_entry *syms, size_t n,
		  void *table, struct lib_facts *lf)
{
	void *handle;
	bool ok = true;

	lf->attempted = true;
	snprintf(lf->path, sizeof(lf->path), "%s", path);
	dlerror();
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *err = dlerror();

		snprintf(lf->error, sizeof(lf->error), "%s",
			 err ? err : "dlopen failed");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		void *sym = syms[i].version ?
			dlvsym(handle, syms[i].name, syms[i].version) :
			dlsym(handle, syms[i].name);

		/* Object pointer to function pointer slot: copy the bits. */
		memcpy((char *)table + syms[i].offset, &sym, sizeof(sym));
		if (sym)
			continue;
		if (syms[i].required) {
			append_name(lf->missing_required,
				    sizeof(lf->missing_required),
				    syms[i].name, syms[i].version);
			ok = false;
		} else {
			append_name(lf->missing_optional,
				    sizeof(lf->missing_optional),
				    syms[i].name, syms[i].version);
		}
	}
	if (!ok) {
		snprintf(lf->error, sizeof(lf->error), "required symbols missing");
		dlclose(handle);
		return NULL;
	}
	lf->loaded = true;
	return handle;
}
