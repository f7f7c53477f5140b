// SPDX-License-Identifier: MIT
/*
 * NCCL's ncclGetLevel, parseStringList and matchIfList (extracted by run.sh
 * from the NCCL repository at OLD_VER and NEW_VER) against
 * nccl_parse_level, nccl_hca_parse and nccl_hca_match, on random input.
 * Only the stubs NCCL's functions need are defined here.
 */
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

extern "C" {
#include "nccl/rules.h"
}

typedef int ncclResult_t;
#define ncclSuccess 0
#define INFO(...) do { } while (0)
static const char *ncclGetEnv(const char *n) { return getenv(n); }
static char *ncclOsStrSep(char **s, const char *d) { return strsep(s, d); }
struct netIf {
	char prefix[64];
	int port;
	int16_t rail;
	int16_t plane;
};

/* NCCL's PATH_* numbers of the release each include is compiled for. */
static const int PATH_LOC_OLD = nccl_path_code(OLD_VER, NPT_LOC);
static const int PATH_PIX_OLD = nccl_path_code(OLD_VER, NPT_PIX);
static const int PATH_PXB_OLD = nccl_path_code(OLD_VER, NPT_PXB);
static const int PATH_PHB_OLD = nccl_path_code(OLD_VER, NPT_PHB);
static const int PATH_SYS_OLD = nccl_path_code(OLD_VER, NPT_SYS);
static const int PATH_LOC_NEW = nccl_path_code(NEW_VER, NPT_LOC);
static const int PATH_PIX_NEW = nccl_path_code(NEW_VER, NPT_PIX);
static const int PATH_PXB_NEW = nccl_path_code(NEW_VER, NPT_PXB);
static const int PATH_PHB_NEW = nccl_path_code(NEW_VER, NPT_PHB);
static const int PATH_SYS_NEW = nccl_path_code(NEW_VER, NPT_SYS);
#define PATH_LOC PATH_LOC_OLD
#define PATH_PIX PATH_PIX_OLD
#define PATH_PXB PATH_PXB_OLD
#define PATH_PHB PATH_PHB_OLD
#define PATH_SYS PATH_SYS_OLD
#include "names_old.inc"
#include "utils_old.inc"
#include "level_old.inc"
#undef PATH_LOC
#undef PATH_PIX
#undef PATH_PXB
#undef PATH_PHB
#undef PATH_SYS
#define PATH_LOC PATH_LOC_NEW
#define PATH_PIX PATH_PIX_NEW
#define PATH_PXB PATH_PXB_NEW
#define PATH_PHB PATH_PHB_NEW
#define PATH_SYS PATH_SYS_NEW
#include "names_new.inc"
#include "utils_new.inc"
#include "level_new.inc"

/* matchIfList gained an ifId argument in 2.20; call either form. */
template <typename F>
static bool call_match(F f, const char *dev, int port, netIf *ifs, int n,
		       bool exact)
{
	if constexpr (std::is_invocable_v<F, const char *, int, netIf *, int,
					  bool, int *>)
		return f(dev, port, ifs, n, exact, nullptr);
	else
		return f(dev, port, ifs, n, exact);
}

static unsigned long long rs = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (unsigned)(rs % n);
}

static void rstr(char *b, int max, const char *alpha)
{
	int n = (int)rnd((unsigned)max);
	size_t a = strlen(alpha);

	for (int i = 0; i < n; i++)
		b[i] = alpha[rnd((unsigned)a)];
	b[n] = 0;
}

int main()
{
	static const char *const devs[] = { "mlx5_0", "mlx5_1", "mlx5_10",
					    "mlx5_11", "mlx5_2", "ib0", "m",
					    "3", "13", "31", "m1" };
	static const char *const names[] = { "PIX", "PXB", "PXN", "P2C", "C2C",
					     "NVL", "NVB", "LOC", "SYS", "PHB",
					     "NET", "DIS", "pxb" };
	const int ver[2] = { OLD_VER, NEW_VER };
	long bad = 0, runs = 0;

	for (int it = 0; it < 100000; it++) {
		char env[80], lv[24];

		if (rnd(2))
			rstr(env, 30, "mlx5_0112,,::^=3ib");
		else	/* many short entries: past 16 */
			rstr(env, 70, "13,,,m:");
		for (int v = 0; v < 2; v++) {
			struct netIf ifs[32];
			struct nccl_hca_filter f;
			const char *e = env;
			bool no = e[0] == '^', ex;
			int n, max;

			if (no)
				e++;
			ex = e[0] == '=';
			if (ex)
				e++;
			memset(ifs, 0, sizeof(ifs));
			/* MAX_IB_DEVS: 16 before 2.18.5, 32 since */
			max = ver[v] < NCCL_VER(2, 18, 5) ? 16 : 32;
			n = v ? parseStringList_new(e, ifs, max) :
				parseStringList_old(e, ifs, max);
			nccl_hca_parse(ver[v], env, &f);
			for (const char *dev : devs)
				for (int port = 1; port <= 3; port++) {
					bool a = (v ? call_match(matchIfList_new, dev, port, ifs, n, ex) :
						      call_match(matchIfList_old, dev, port, ifs, n, ex)) ^ no;
					bool b = nccl_hca_match(&f, dev, port);

					runs++;
					if (a != b && bad++ < 10)
						printf("NCCL_IB_HCA %d '%s' %s:%d nccl %d model %d\n",
						       ver[v], env, dev, port, a, b);
				}
		}
		rstr(lv, 12, "0123456789xXPIXBSYNVLHC2");
		if (rnd(4) == 0)
			strcpy(lv, names[rnd(sizeof(names) / sizeof(names[0]))]);
		setenv("DIFFTEST_LEVEL", lv, 1);
		for (int v = 0; v < 2; v++) {
			enum nccl_ptype t;
			int r = nccl_parse_level(ver[v], lv, &t), l = -1;

			runs++;
			if (r == -ERANGE)
				continue;	/* NCCL reads out of bounds */
			if (v)
				ncclGetLevel_new(&l, NULL, "DIFFTEST_LEVEL");
			else
				ncclGetLevel_old(&l, NULL, "DIFFTEST_LEVEL");
			if ((r ? -2 : nccl_path_code(ver[v], t)) != l && bad++ < 20)
				printf("NCCL_NET_GDR_LEVEL %d '%s' nccl %d model %d\n",
				       ver[v], lv, l, r ? -2 : nccl_path_code(ver[v], t));
		}
	}
	printf("levels_hca: %ld comparisons, %ld mismatches\n", runs, bad);
	return bad != 0;
}
