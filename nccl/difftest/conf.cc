// SPDX-License-Identifier: MIT
/*
 * NCCL's setEnvFile (extracted by run.sh from src/misc/param.cc at OLD_VER
 * and NEW_VER) against nccl_conf_load/nccl_conf_get: random files (NUL,
 * CR, '#', '=', long lines) are merged into an empty environment by NCCL,
 * and every variable NCCL set must be what the model returns, no more.
 * The file is $PWD/.nccl.conf with HOME=$PWD for the model.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

extern "C" {
#include "access/sysroot.h"
#include "nccl/conf.h"
#include "nccl/rules.h"
}

extern char **environ;
static void ncclOsSetEnv(const char *name, const char *value)
{
	setenv(name, value, 0);
}
#include "conf_old.inc"
#include "conf_new.inc"

static unsigned long long rs = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (unsigned)(rs % n);
}

int main()
{
	static const char alpha[] = "AB=\n\r# x\0=\n";
	static char text[9000];
	const int ver[2] = { OLD_VER, NEW_VER };
	char dir[200], path[256];
	long bad = 0, runs = 0;

	if (!getcwd(dir, sizeof(dir)))
		return 2;
	/* ~/.nccl.conf: read by every release, NCCL_CONF_FILE only 2.23.4+ */
	snprintf(path, sizeof(path), "%s/.nccl.conf", dir);
	for (int it = 0; it < 20000; it++) {
		int n = (int)rnd(it % 10 ? 60 : sizeof(text));
		FILE *f;

		for (int i = 0; i < n; i++)
			text[i] = rnd(50) ? alpha[rnd(sizeof(alpha) - 1)] : 'L';
		/* every tenth file has lines longer than fgets' 4096 */
		for (int i = 0; it % 10 == 0 && i < n; i++)
			if (text[i] == '\n' && rnd(200))
				text[i] = 'A';
		f = fopen(path, "w");
		if (!f || fwrite(text, 1, (size_t)n, f) != (size_t)n)
			return 2;
		fclose(f);
		for (int v = 0; v < 2; v++) {
			std::string home = std::string("HOME=") + dir;
			const char *envp[] = { home.c_str(), NULL };
			struct nccl_conf c;
			char *snap[4096];
			int ns = 0;

			clearenv();
			if (v)
				setEnvFile_new(path);
			else
				setEnvFile_old(path);
			for (char **e = environ; e && *e && ns < 4096; e++)
				snap[ns++] = strdup(*e);
			clearenv();
			struct sysroot *sr = sysroot_new("/");

			if (!sr || nccl_conf_load(&c, sr, ver[v], envp))
				return 2;
			runs++;
			for (int i = 0; i < ns; i++) {
				char *eq = strchr(snap[i], '=');
				std::string name(snap[i], (size_t)(eq - snap[i]));
				const char *m = nccl_conf_get(&c, name.c_str(), NULL, NULL);

				if ((!m || strcmp(m, eq + 1)) && bad++ < 10)
					printf("conf %d '%s': nccl '%s' model '%s'\n", ver[v],
					       name.c_str(), eq + 1, m ? m : "(unset)");
				free(snap[i]);
			}
			/* /etc/nccl.conf of this host may add more: only if absent */
			if (access("/etc/nccl.conf", F_OK) && (size_t)ns != c.n &&
			    bad++ < 10)
				printf("conf %d: nccl set %d names, model %zu\n", ver[v], ns, c.n);
			nccl_conf_free(&c);
			sysroot_free(sr);
		}
	}
	unlink(path);
	printf("conf: %ld files, %ld mismatches\n", runs, bad);
	return bad != 0;
}
