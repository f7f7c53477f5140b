// SPDX-License-Identifier: MIT
/*
 * NCCL's path numbers (PATH_* of src/graph/topo.h, src/include/graph.h
 * since 2.29) and mergePathType (src/graph/paths.cc, 2.27.5+; before, the
 * std::max run.sh finds in addInterStep), extracted by run.sh at the tag
 * whose version code is VER, against nccl_path_code and nccl_merge_path:
 * every pair of path types that release has. The merge is what turns a
 * GPU's C2C path to its CPU and the CPU's PHB path to a NIC into P2C
 * (ncclTopoComputePaths, addInterStep). NOGDR_GUARD (run.sh: 1 when that
 * release's no-GDR step tests "gpu->paths[NET][n].type < PATH_PHB")
 * checks nccl_nogdr_path over every GPU->NIC, GPU->CPU and CPU->NIC type.
 */
#include <algorithm>
#include <cstdio>

extern "C" {
#include "nccl/rules.h"
}

#include "path_defs.inc"
#include "merge.inc"

int main()
{
	static const struct {
		enum nccl_ptype t;
		int code;
	} tbl[] = {
		{ NPT_LOC, PATH_LOC }, { NPT_NVL, PATH_NVL }, { NPT_NVB, PATH_NVB },
#ifdef PATH_C2C
		{ NPT_C2C, PATH_C2C },
#endif
		{ NPT_PIX, PATH_PIX }, { NPT_PXB, PATH_PXB },
#ifdef PATH_P2C
		{ NPT_P2C, PATH_P2C },
#endif
		{ NPT_PXN, PATH_PXN }, { NPT_PHB, PATH_PHB },
		{ NPT_SYS, PATH_SYS },
#ifdef PATH_NET
		{ NPT_NET, PATH_NET },
#endif
#if PATH_DIS != PATH_SYS
		/* 2.12-2.17 define DIS as SYS (rules.c: never an input). */
		{ NPT_DIS, PATH_DIS },
#endif
	};
	const int n = sizeof(tbl) / sizeof(tbl[0]);
	long cases = 0, bad = 0;

	for (int i = 0; i < n; i++) {
		cases++;
		if (nccl_path_code(VER, tbl[i].t) != tbl[i].code && bad++ < 10)
			printf("paths %d: %s is %d in NCCL, %d in the model\n",
			       VER, nccl_ptype_name(tbl[i].t), tbl[i].code,
			       nccl_path_code(VER, tbl[i].t));
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int want = mergePathType(tbl[i].code, tbl[j].code);
			int got = nccl_path_code(VER,
				nccl_merge_path(VER, tbl[i].t, tbl[j].t));

			cases++;
			if (got != want && bad++ < 10)
				printf("paths %d: merge(%s, %s) NCCL %d model %d\n",
				       VER, nccl_ptype_name(tbl[i].t),
				       nccl_ptype_name(tbl[j].t), want, got);
		}
	/* ncclTopoComputePaths: if (guard) { checkGdr == 0: addInterStep } */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			for (int k = 0; k < n; k++)
				for (int gdr = 0; gdr < 2; gdr++) {
					bool want_r = !gdr && (!NOGDR_GUARD ||
						tbl[i].code < PATH_PHB);
					int want = want_r ? mergePathType(
						tbl[j].code, tbl[k].code) :
						tbl[i].code;
					enum nccl_ptype out;
					bool r = nccl_nogdr_path(VER, tbl[i].t,
						gdr, tbl[j].t, tbl[k].t, &out);

					cases++;
					if ((r != want_r ||
					     nccl_path_code(VER, out) != want) &&
					    bad++ < 10)
						printf("paths %d: nogdr(%s, gdr %d, "
						       "%s, %s) NCCL %d %d model "
						       "%d %d\n", VER,
						       nccl_ptype_name(tbl[i].t), gdr,
						       nccl_ptype_name(tbl[j].t),
						       nccl_ptype_name(tbl[k].t),
						       want_r, want, r,
						       nccl_path_code(VER, out));
				}
	printf("paths %d: %ld comparisons, %ld mismatches\n", VER, cases, bad);
	return bad != 0;
}
