// SPDX-License-Identifier: MIT
/*
 * Unit tables for nccl/rules.h and nccl/conf.h, and nccl/model.h's steps
 * over typed facts. Every row cites the NCCL source line it mirrors as
 * "tag file:line" (github.com/NVIDIA/nccl); a row that disagrees with that
 * line is a bug in the model.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "access/sysroot.h"
#include "nccl/conf.h"
#include "nccl/model.h"
#include "nccl/netdev.h"
#include "nccl/rules.h"

/* The tree under test: one reader, pointed at each fixture in turn. */
static struct sysroot *sr;

#define V(x, y, z) NCCL_VER(x, y, z)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Name the failing row: cmocka prints only the line of the assert. */
#define ROW_FAIL(i, src) print_error("row %zu (%s)\n", (size_t)(i), (src))

/* --- path codes ------------------------------------------------------------ */

static void test_path_codes(void **state)
{
	static const struct {
		int ver;
		enum nccl_ptype t;
		int code;
		const char *src;
	} rows[] = {
		{ V(2, 11, 4), NPT_PHB, 5, "v2.11.4-1 src/graph/topo.cc:24" },
		{ V(2, 11, 4), NPT_PXN, -1, "v2.11.4-1 src/graph/topo.cc:24" },
		{ V(2, 12, 7), NPT_PXN, 5, "v2.12.7-1 src/graph/topo.cc:24" },
		{ V(2, 12, 7), NPT_SYS, 7, "v2.12.7-1 src/graph/topo.cc:24" },
		{ V(2, 23, 4), NPT_C2C, -1, "v2.23.4-1 src/graph/topo.cc:26" },
		{ V(2, 26, 2), NPT_C2C, 3, "v2.26.2-1 src/graph/topo.cc:26" },
		{ V(2, 26, 2), NPT_P2C, -1, "v2.26.2-1 src/graph/topo.cc:26" },
		{ V(2, 26, 2), NPT_PHB, 7, "v2.26.2-1 src/graph/topo.cc:26" },
		{ V(2, 27, 3), NPT_PXN, 6, "v2.27.3-1 src/graph/topo.cc:24" },
		{ V(2, 27, 3), NPT_P2C, 7, "v2.27.3-1 src/graph/topo.cc:24" },
		{ V(2, 27, 5), NPT_P2C, 6, "v2.27.5-1 src/graph/topo.cc (P2C before PXN)" },
		{ V(2, 30, 7), NPT_PXN, 7, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), NPT_SYS, 9, "v2.30.7-1 src/graph/topo.cc:34" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		if (nccl_path_code(rows[i].ver, rows[i].t) != rows[i].code)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(nccl_path_code(rows[i].ver, rows[i].t),
				 rows[i].code);
	}
}

/* --- ncclGetLevel ------------------------------------------------------------ */

static void test_parse_level(void **state)
{
	static const struct {
		int ver;
		const char *in;
		int ret;
		enum nccl_ptype level;
		const char *src;
	} rows[] = {
		{ V(2, 30, 7), "PXB", 0, NPT_PXB, "v2.30.7-1 src/graph/paths.cc:259 strcmp" },
		{ V(2, 30, 7), "pxb", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:259 case-sensitive" },
		{ V(2, 30, 7), "NVL", 0, NPT_NVL, "v2.30.7-1 src/graph/topo.cc:34 names to SYS" },
		{ V(2, 30, 7), "NVB", 0, NPT_NVB, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "LOC", 0, NPT_LOC, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "C2C", 0, NPT_C2C, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "P2C", 0, NPT_P2C, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "PXN", 0, NPT_PXN, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "SYS", 0, NPT_SYS, "v2.30.7-1 src/graph/topo.cc:34" },
		{ V(2, 30, 7), "NET", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:258 i <= PATH_SYS" },
		{ V(2, 30, 7), "DIS", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:258 i <= PATH_SYS" },
		{ V(2, 26, 2), "P2C", -ENOENT, 0, "v2.26.2-1 src/graph/topo.cc:26 no P2C" },
		{ V(2, 23, 4), "C2C", -ENOENT, 0, "v2.23.4-1 src/graph/topo.cc:26 no C2C" },
		{ V(2, 11, 4), "PXN", -ENOENT, 0, "v2.11.4-1 src/graph/topo.cc:24 no PXN" },
		{ V(2, 30, 7), "0", 0, NPT_LOC, "v2.30.7-1 src/graph/paths.cc:243 levelsOldToNew[0]" },
		{ V(2, 30, 7), "1", 0, NPT_PIX, "v2.30.7-1 src/graph/paths.cc:243" },
		{ V(2, 30, 7), "2", 0, NPT_PXB, "v2.30.7-1 src/graph/paths.cc:243" },
		{ V(2, 30, 7), "3", 0, NPT_PHB, "v2.30.7-1 src/graph/paths.cc:243" },
		{ V(2, 30, 7), "4", 0, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:243" },
		{ V(2, 30, 7), "5", 0, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:243" },
		{ V(2, 30, 7), "9", 0, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:271 clamp" },
		{ V(2, 30, 7), "2abc", 0, NPT_PXB, "v2.30.7-1 src/graph/paths.cc:269 strtol, tail ignored" },
		{ V(2, 30, 7), "0x3", 0, NPT_PHB, "v2.30.7-1 src/graph/paths.cc:269 base 0 hex" },
		{ V(2, 30, 7), "010", 0, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:269 octal 8, clamped" },
		{ V(2, 30, 7), "08", 0, NPT_LOC, "v2.30.7-1 src/graph/paths.cc:269 octal stops at 8" },
		{ V(2, 30, 7), " 2", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:268 str[0] digit" },
		{ V(2, 30, 7), "-1", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:268 str[0] digit" },
		{ V(2, 30, 7), "", -ENOENT, 0, "v2.30.7-1 src/graph/paths.cc:268" },
		{ V(2, 30, 7), "4294967298", 0, NPT_PXB, "v2.30.7-1 src/graph/paths.cc:269 int of long: 2" },
		{ V(2, 30, 7), "4294967295", -ERANGE, 0, "v2.30.7-1 src/graph/paths.cc:269 int of long: -1, out of table" },
		{ V(2, 12, 7), "4", 0, NPT_SYS, "v2.12.7-1 src/graph/topo.cc levelsOldToNew" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		enum nccl_ptype lv = NPT_COUNT;
		int ret = nccl_parse_level(rows[i].ver, rows[i].in, &lv);

		if (ret != rows[i].ret || (!ret && lv != rows[i].level))
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(ret, rows[i].ret);
		if (!ret)
			assert_int_equal(lv, rows[i].level);
	}
	assert_int_equal(nccl_parse_level(V(2, 30, 7), NULL, &(enum nccl_ptype){ 0 }),
			 -ENOENT);
}

/* --- ncclLoadParam ------------------------------------------------------------ */

static void test_parse_param(void **state)
{
	static const struct {
		const char *in;
		int64_t deflt;
		bool set;
		int64_t out;
		const char *src;
	} rows[] = {
		{ NULL, -2, false, -2, "v2.30.7-1 src/misc/param.cc:93 unset" },
		{ "", -2, false, -2, "v2.30.7-1 src/misc/param.cc:93 strlen > 0" },
		{ "1", -2, true, 1, "v2.30.7-1 src/misc/param.cc:95" },
		{ "0", 1, true, 0, "v2.30.7-1 src/misc/param.cc:95" },
		{ "-1", -2, true, -1, "v2.30.7-1 src/misc/param.cc:95 negative = auto for GDR_READ" },
		{ "0x10", 0, true, 16, "v2.30.7-1 src/misc/param.cc:95 base 0" },
		{ "010", 0, true, 8, "v2.30.7-1 src/misc/param.cc:95 base 0 octal" },
		{ "1abc", 0, true, 1, "v2.30.7-1 src/misc/param.cc:95 tail ignored" },
		{ "yes", 1, true, 0, "v2.30.7-1 src/misc/param.cc:95 no digits: 0, errno 0" },
		{ " 7", 0, true, 7, "v2.30.7-1 src/misc/param.cc:95 leading blanks" },
		{ "99999999999999999999", 1, false, 1, "v2.30.7-1 src/misc/param.cc:96 ERANGE keeps default" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		int64_t v = 12345;
		bool set = nccl_parse_param(rows[i].in, rows[i].deflt, &v);

		if (set != rows[i].set || v != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(set, rows[i].set);
		assert_int_equal(v, rows[i].out);
	}
}

static void test_gdr_read_param(void **state)
{
	/* v2.30.7-1 src/graph/paths.cc:460 default -2; param.cc:93-96 */
	assert_int_equal(nccl_gdr_read_param(NULL), -2);
	assert_int_equal(nccl_gdr_read_param(""), -2);
	assert_int_equal(nccl_gdr_read_param("1"), 1);
	assert_int_equal(nccl_gdr_read_param("0"), 0);
	assert_int_equal(nccl_gdr_read_param("-1"), -1);
	assert_int_equal(nccl_gdr_read_param("on"), 0);
	assert_int_equal(nccl_gdr_read_param("0x1"), 1);
}

/* --- defaults ------------------------------------------------------------------ */

static void test_defaults(void **state)
{
	static const struct {
		int ver;
		int gdr_c2c, pxn_c2c;
		enum nccl_ptype level;	/* with the default NET_GDR_C2C */
		int64_t gid_index, cumem;
		const char *src;
	} rows[] = {
		{ V(2, 19, 4), -1, -1, NPT_PXB, 0, -2, "v2.20.5-1 src/transport/net_ib.cc:80 GID 0" },
		{ V(2, 23, 4), -1, -1, NPT_PXB, -1, -2, "v2.30.7-1 src/transport/net_ib/connect.cc:12 GID -1" },
		{ V(2, 26, 2), 0, -1, NPT_PXB, -1, -2, "v2.26.2-1 src/graph/paths.cc:381 NET_GDR_C2C 0" },
		{ V(2, 27, 3), 1, 0, NPT_PXB, -1, -2, "v2.27.3-1 src/graph/paths.cc:386,609" },
		{ V(2, 28, 9), 1, 1, NPT_PXB, -1, -2, "v2.28.9-1 src/graph/paths.cc:453 PATH_PXB" },
		{ V(2, 29, 2), 1, 1, NPT_P2C, -1, -2, "v2.30.7-1 src/graph/paths.cc:511 P2C" },
		{ V(2, 30, 7), 1, 1, NPT_P2C, -1, -2, "v2.30.7-1 src/graph/paths.cc:511,719" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		int c2c = nccl_gdr_c2c_default(rows[i].ver);
		enum nccl_ptype lv = nccl_default_gdr_level(rows[i].ver, c2c > 0);

		if (c2c != rows[i].gdr_c2c || lv != rows[i].level ||
		    nccl_pxn_c2c_default(rows[i].ver) != rows[i].pxn_c2c ||
		    nccl_gid_index_default(rows[i].ver) != rows[i].gid_index ||
		    nccl_cumem_param_default(rows[i].ver) != rows[i].cumem)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(c2c, rows[i].gdr_c2c);
		assert_int_equal(lv, rows[i].level);
		assert_int_equal(nccl_pxn_c2c_default(rows[i].ver), rows[i].pxn_c2c);
		assert_int_equal(nccl_gid_index_default(rows[i].ver), rows[i].gid_index);
		assert_int_equal(nccl_cumem_param_default(rows[i].ver), rows[i].cumem);
	}
	/* NCCL_NET_GDR_C2C=0 keeps PXB: v2.30.7-1 src/graph/paths.cc:511 */
	assert_int_equal(nccl_default_gdr_level(V(2, 30, 7), 0), NPT_PXB);
	assert_int_equal(nccl_cumem_param_default(V(2, 18, 6)), 0);
}

/* --- ncclTopoCheckGdr ----------------------------------------------------------- */

struct gdr_row {
	int ver;
	bool read;
	int cc, ngpus;
	bool nvlink;
	enum nccl_ptype dist, relay;
	bool cpu_c2c;
	int64_t gdr_read, gdr_c2c;
	bool level_set;
	enum nccl_ptype level;
	enum nccl_gdr_mode mode;
	enum nccl_gdr_why why;
	const char *src;
};

#define R_AUTO NCCL_GDR_READ_DEFAULT

static void test_gdr_decide(void **state)
{
	static const struct gdr_row rows[] = {
		/* read rule */
		{ V(2, 30, 7), true, 70, 8, false, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_READ_DEFAULT_OFF, "v2.30.7-1 src/graph/paths.cc:494 cc < 80" },
		{ V(2, 30, 7), true, 70, 8, true, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:501 NVLink peer" },
		{ V(2, 30, 7), true, 70, 1, false, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:498 single GPU" },
		{ V(2, 30, 7), false, 70, 8, false, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:490 write side" },
		{ V(2, 30, 7), true, 90, 8, false, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:494 cc >= 80" },
		{ V(2, 30, 7), true, 90, 8, true, NPT_PIX, 0, false, 0, 1, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_READ_OFF, "v2.30.7-1 src/graph/paths.cc:492 GDR_READ=0" },
		{ V(2, 30, 7), true, 70, 8, false, NPT_PIX, 0, false, 1, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:494 GDR_READ=1" },
		{ V(2, 30, 7), true, 70, 8, false, NPT_PIX, 0, false, -5, 1, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_READ_DEFAULT_OFF, "v2.30.7-1 src/graph/paths.cc:494 any negative is auto" },
		{ V(2, 18, 6), true, 90, 8, false, NPT_PIX, 0, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_READ_DEFAULT_OFF, "v2.18.6-1 src/graph/paths.cc:363 no cc test" },
		{ V(2, 19, 1), true, 90, 8, false, NPT_PIX, 0, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.19.1-1 src/graph/paths.cc cudaCompCap < 80" },
		/* level */
		{ V(2, 23, 4), false, 90, 8, false, NPT_PXB, 0, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.28.9-1 src/graph/paths.cc:453 PXB <= PXB" },
		{ V(2, 23, 4), false, 90, 8, false, NPT_PHB, 0, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.30.7-1 src/graph/paths.cc:528 PHB > PXB" },
		{ V(2, 23, 4), false, 90, 8, false, NPT_PHB, 0, false, R_AUTO, 0, true, NPT_PHB,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:513 user level" },
		{ V(2, 23, 4), false, 90, 8, false, NPT_SYS, 0, false, R_AUTO, 0, true, NPT_PHB,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.30.7-1 src/graph/paths.cc:528" },
		/* PXN: the relay's distance */
		{ V(2, 23, 4), true, 90, 8, true, NPT_PXN, NPT_PIX, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:515-521 PXN via relay" },
		{ V(2, 23, 4), true, 90, 8, true, NPT_PXN, NPT_PHB, false, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.30.7-1 src/graph/paths.cc:521 relay too far" },
		/* C2C: 2.26 rewrites PHB with NET_GDR_C2C (default 0) */
		{ V(2, 26, 2), false, 90, 1, false, NPT_PHB, 0, true, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.26.2-1 src/graph/paths.cc:381,433 C2C off" },
		{ V(2, 26, 2), false, 90, 1, false, NPT_PHB, 0, true, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.26.2-1 src/graph/paths.cc:433 PHB -> C2C" },
		{ V(2, 26, 2), false, 90, 1, false, NPT_PXB, 0, true, R_AUTO, 0, false, 0,
		  NCCL_GDR_PCI, NCCL_GDR_OK, "v2.26.2-1 src/graph/paths.cc:445 PCI mode" },
		/* 2.27.3-2.28.9: P2C counts as C2C */
		{ V(2, 27, 3), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.28.9-1 src/graph/paths.cc:467 P2C -> C2C" },
		{ V(2, 28, 9), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 1, true, NPT_PIX,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.28.9-1 src/graph/paths.cc:467 C2C <= PIX" },
		{ V(2, 28, 9), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.28.9-1 src/graph/paths.cc:453 P2C > PXB" },
		{ V(2, 27, 3), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 0, true, NPT_PXN,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.27.3-1 src/graph/topo.cc:24 P2C(7) > PXN(6)" },
		{ V(2, 27, 5), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 0, true, NPT_PXN,
		  NCCL_GDR_PCI, NCCL_GDR_OK, "v2.27.5-1 src/graph/topo.cc P2C(6) <= PXN(7)" },
		/* 2.29.2+: default level P2C, compared as P2C */
		{ V(2, 29, 2), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:511,540" },
		{ V(2, 30, 7), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 1, true, NPT_PXB,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.30.7-1 src/graph/paths.cc:528 P2C > PXB" },
		{ V(2, 30, 7), false, 90, 1, false, NPT_P2C, 0, true, R_AUTO, 0, false, 0,
		  NCCL_GDR_DISABLED, NCCL_GDR_TOO_FAR, "v2.30.7-1 src/graph/paths.cc:511 C2C=0 -> PXB" },
		{ V(2, 30, 7), false, 90, 1, false, NPT_PIX, 0, true, R_AUTO, 1, false, 0,
		  NCCL_GDR_PCI, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:540 PCI mode" },
		{ V(2, 30, 7), false, 90, 1, false, NPT_PIX, 0, false, R_AUTO, 1, false, 0,
		  NCCL_GDR_DEFAULT, NCCL_GDR_OK, "v2.30.7-1 src/graph/paths.cc:541" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		const struct gdr_row *r = &rows[i];
		struct nccl_gdr_in in = {
			.ver = r->ver, .read = r->read, .net_gdr = true,
			.gpu_gdr = true, .cc = r->cc, .ngpus = r->ngpus,
			.nvlink_peer = r->nvlink, .dist = r->dist,
			.relay_dist = r->relay, .cpu_c2c = r->cpu_c2c,
			.gdr_read = r->gdr_read, .gdr_c2c = r->gdr_c2c,
			.level_set = r->level_set, .level = r->level,
		};
		struct nccl_gdr_out out;

		if (nccl_gdr_decide(&in, &out) || out.mode != r->mode ||
		    out.why != r->why)
			ROW_FAIL(i, r->src);
		assert_int_equal(nccl_gdr_decide(&in, &out), 0);
		assert_int_equal(out.mode, r->mode);
		assert_int_equal(out.why, r->why);
	}
}

static void test_gdr_support_and_errors(void **state)
{
	struct nccl_gdr_in in = {
		.ver = V(2, 30, 7), .net_gdr = false, .gpu_gdr = true, .cc = 90,
		.ngpus = 8, .dist = NPT_PIX, .gdr_read = R_AUTO, .gdr_c2c = 1,
	};
	struct nccl_gdr_out out;

	/* v2.30.7-1 src/graph/paths.cc:485 net gdrSupport == 0 */
	assert_int_equal(nccl_gdr_decide(&in, &out), 0);
	assert_int_equal(out.why, NCCL_GDR_NO_SUPPORT);
	/* v2.30.7-1 src/graph/paths.cc:487 MLO partition */
	in.net_gdr = true;
	in.mlo_part = true;
	assert_int_equal(nccl_gdr_decide(&in, &out), 0);
	assert_int_equal(out.why, NCCL_GDR_MLO_PART);
	in.gdr_mlopart = 1;
	assert_int_equal(nccl_gdr_decide(&in, &out), 0);
	assert_int_equal(out.why, NCCL_GDR_OK);
	/* not in 2.30.4: v2.30.4-1 paths.cc has no mloPart test */
	in.ver = V(2, 30, 4);
	in.gdr_mlopart = 0;
	assert_int_equal(nccl_gdr_decide(&in, &out), 0);
	assert_int_equal(out.why, NCCL_GDR_OK);
	/* P2C does not exist in 2.26: v2.26.2-1 src/graph/topo.cc:26 */
	in.ver = V(2, 26, 2);
	in.dist = NPT_P2C;
	assert_int_equal(nccl_gdr_decide(&in, &out), -EINVAL);
}

/* --- paths: P2C, PXN -------------------------------------------------------------- */

static void test_gpu_cpu_path(void **state)
{
	static const struct {
		int ver;
		bool c2c;
		int cc;
		enum nccl_ptype out;
		const char *src;
	} rows[] = {
		{ V(2, 18, 6), true, 90, NPT_PHB, "v2.18.6-1 src/graph/xml.cc: no <c2c> node" },
		{ V(2, 19, 1), true, 90, NPT_NVL, "v2.19.1-1 src/graph/xml.cc:701, topo.cc:564 LINK_NVL" },
		{ V(2, 25, 1), true, 90, NPT_NVL, "v2.25.1-1 src/graph/topo.cc:647 LINK_NVL" },
		{ V(2, 26, 2), true, 90, NPT_C2C, "v2.26.2-1 src/graph/topo.cc:656 LINK_C2C" },
		{ V(2, 30, 7), true, 100, NPT_C2C, "v2.30.7-1 src/graph/topo.cc:942 LINK_C2C" },
		{ V(2, 30, 7), true, 80, NPT_PHB, "v2.30.7-1 src/graph/xml.cc:1005 sm >= 90" },
		{ V(2, 30, 7), false, 90, NPT_PHB, "v2.30.7-1 src/graph/xml.cc:1025 count > 0" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		enum nccl_ptype t = nccl_gpu_cpu_path(rows[i].ver, rows[i].c2c,
						      rows[i].cc);

		if (t != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(t, rows[i].out);
	}
}

static void test_p2c_path(void **state)
{
	static const struct {
		int ver;
		enum nccl_ptype gpu_net, gpu_cpu, net_cpu;
		bool local;
		enum nccl_ptype out;
		const char *src;
	} rows[] = {
		{ V(2, 26, 6), NPT_PHB, NPT_C2C, NPT_PHB, true, NPT_PHB, "v2.26.6-1 no P2C step" },
		{ V(2, 27, 3), NPT_PHB, NPT_C2C, NPT_PHB, true, NPT_P2C, "v2.27.3-1 src/graph/paths.cc:677" },
		{ V(2, 27, 3), NPT_SYS, NPT_C2C, NPT_PHB, true, NPT_SYS, "v2.27.3-1 src/graph/paths.cc:677 PHB only" },
		{ V(2, 27, 5), NPT_SYS, NPT_C2C, NPT_PHB, false, NPT_P2C, "v2.27.5-1 paths.cc mergePathType, any NIC" },
		{ V(2, 27, 5), NPT_PIX, NPT_C2C, NPT_PHB, true, NPT_PIX, "v2.30.7-1 src/graph/paths.cc:806 std::min" },
		{ V(2, 30, 7), NPT_SYS, NPT_C2C, NPT_PHB, false, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:801 local NICs only" },
		{ V(2, 30, 7), NPT_PHB, NPT_C2C, NPT_PHB, true, NPT_P2C, "v2.30.7-1 src/graph/paths.cc:805" },
		{ V(2, 30, 7), NPT_PHB, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.30.7-1 src/graph/paths.cc:206 no C2C" },
		{ V(2, 30, 7), NPT_SYS, NPT_C2C, NPT_SYS, true, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:206 max SYS" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		enum nccl_ptype t = nccl_p2c_path(rows[i].ver, rows[i].gpu_net,
						  rows[i].gpu_cpu, rows[i].net_cpu,
						  rows[i].local);

		if (t != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(t, rows[i].out);
	}
}

static void test_nogdr_path(void **state)
{
	static const struct {
		int ver;
		enum nccl_ptype gpu_net;
		bool gdr;
		enum nccl_ptype gpu_cpu, cpu_net;
		bool rerouted;
		enum nccl_ptype out;
		const char *src;
	} rows[] = {
		{ V(2, 12, 7), NPT_PIX, true, NPT_PHB, NPT_PHB, false, NPT_PIX, "v2.12.7-1 src/graph/paths.cc:547 gdr != 0" },
		{ V(2, 12, 7), NPT_PIX, false, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.12.7-1 src/graph/paths.cc:551-552, :186 std::max" },
		{ V(2, 12, 7), NPT_SYS, false, NPT_PHB, NPT_SYS, true, NPT_SYS, "v2.12.7-1 src/graph/paths.cc:544 every pair" },
		{ V(2, 20, 5), NPT_PHB, false, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.20.5-1 src/graph/paths.cc:621-629 no PHB test" },
		{ V(2, 20, 5), NPT_PHB, false, NPT_NVL, NPT_PHB, true, NPT_PHB, "v2.20.5-1 src/graph/paths.cc:186 max(NVL, PHB)" },
		{ V(2, 21, 5), NPT_PHB, false, NPT_PHB, NPT_PHB, false, NPT_PHB, "v2.21.5-1 src/graph/paths.cc:625 < PATH_PHB" },
		{ V(2, 21, 5), NPT_SYS, false, NPT_PHB, NPT_SYS, false, NPT_SYS, "v2.21.5-1 src/graph/paths.cc:625 < PATH_PHB" },
		{ V(2, 21, 5), NPT_PXB, false, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.21.5-1 src/graph/paths.cc:628-634" },
		{ V(2, 23, 4), NPT_PXN, false, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.23.4-1 src/graph/paths.cc:618-627 PXN < PHB, CPU step replaces it" },
		{ V(2, 26, 6), NPT_PIX, false, NPT_C2C, NPT_PHB, true, NPT_PHB, "v2.26.6-1 src/graph/paths.cc:190 std::max" },
		{ V(2, 27, 3), NPT_P2C, false, NPT_C2C, NPT_PHB, true, NPT_PHB, "v2.27.3-1 src/graph/paths.cc:190, :714 P2C < PHB" },
		{ V(2, 27, 5), NPT_P2C, false, NPT_C2C, NPT_PHB, true, NPT_P2C, "v2.27.5-1 src/graph/paths.cc:178-182, :197 mergePathType" },
		{ V(2, 30, 7), NPT_PIX, false, NPT_PHB, NPT_PHB, true, NPT_PHB, "v2.30.7-1 src/graph/paths.cc:844-853" },
		{ V(2, 30, 7), NPT_PIX, true, NPT_PHB, NPT_PHB, false, NPT_PIX, "v2.30.7-1 src/graph/paths.cc:848 gdr == 0" },
		{ V(2, 30, 7), NPT_PXN, false, NPT_C2C, NPT_PHB, true, NPT_P2C, "v2.30.7-1 src/graph/paths.cc:203-207, :224" },
		{ V(2, 30, 7), NPT_PXB, false, NPT_C2C, NPT_SYS, true, NPT_SYS, "v2.30.7-1 src/graph/paths.cc:206 max SYS" },
		{ V(2, 30, 7), NPT_PHB, false, NPT_PHB, NPT_PHB, false, NPT_PHB, "v2.30.7-1 src/graph/paths.cc:844 < PATH_PHB" },
		{ V(2, 25, 1), NPT_P2C, false, NPT_PHB, NPT_PHB, false, NPT_P2C, "v2.25.1-1 src/graph/topo.cc:26 no P2C type" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		enum nccl_ptype t;
		bool r = nccl_nogdr_path(rows[i].ver, rows[i].gpu_net,
					 rows[i].gdr, rows[i].gpu_cpu,
					 rows[i].cpu_net, &t);

		if (r != rows[i].rerouted || t != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(r, rows[i].rerouted);
		assert_int_equal(t, rows[i].out);
	}
}

static void test_pxn(void **state)
{
	static const struct {
		int ver;
		int64_t disable, c2c;
		enum nccl_ptype gpu_net;
		double gpu_bw;
		enum nccl_ptype peer_net;
		double peer_bw;
		bool nvl, same, relay, peer_gdr, out;
		const char *src;
	} rows[] = {
		{ V(2, 11, 4), 0, 0, NPT_SYS, 12, NPT_PIX, 24, true, true, true, true, false, "v2.11.4-1 no PXN" },
		{ V(2, 12, 7), 0, 0, NPT_SYS, 12, NPT_PIX, 24, true, true, true, true, true, "v2.12.7-1 src/graph/paths.cc:523-535" },
		{ V(2, 12, 7), 0, 0, NPT_PXB, 12, NPT_PIX, 24, true, true, true, true, false, "v2.12.7-1 src/graph/paths.cc:523 > PXB only" },
		{ V(2, 12, 7), 0, 0, NPT_SYS, 12, NPT_PIX, 24, true, true, false, true, false, "v2.12.7-1 src/graph/paths.cc:532 relay's own NIC" },
		{ V(2, 12, 7), 1, 0, NPT_SYS, 12, NPT_PIX, 24, true, true, true, true, false, "v2.12.7-1 src/graph/paths.cc:523 PXN_DISABLE" },
		{ V(2, 16, 5), 0, 0, NPT_PXB, 12, NPT_PIX, 24, true, true, false, true, true, "v2.16.5-1 src/graph/paths.cc:589 higher bw, any peer" },
		{ V(2, 19, 4), 0, 0, NPT_PXB, 12, NPT_PIX, 24, true, true, true, true, true, "v2.19.4-1 src/graph/paths.cc:594-597 bw" },
		{ V(2, 19, 4), 0, 0, NPT_PXB, 24, NPT_PIX, 24, true, true, true, true, false, "v2.19.4-1 src/graph/paths.cc:596 equal bw, PXB" },
		{ V(2, 19, 4), 0, 0, NPT_PHB, 24, NPT_PIX, 24, true, true, true, true, true, "v2.19.4-1 src/graph/paths.cc:597 > PXB" },
		{ V(2, 19, 4), 0, 0, NPT_PHB, 24, NPT_PIX, 24, false, true, true, true, false, "v2.19.4-1 src/graph/paths.cc:595 NVLink" },
		{ V(2, 19, 4), 0, 0, NPT_PHB, 24, NPT_PHB, 24, true, true, true, true, false, "v2.19.4-1 src/graph/paths.cc:594 relay > PXB" },
		{ V(2, 19, 4), 0, 0, NPT_PHB, 24, NPT_PIX, 24, true, false, true, true, true, "v2.19.4-1 no same-node test" },
		{ V(2, 23, 4), 0, 0, NPT_PHB, 24, NPT_PIX, 24, true, false, true, true, false, "v2.23.4-1 src/graph/paths.cc:609 same node" },
		{ V(2, 23, 4), 2, 0, NPT_PHB, 24, NPT_PIX, 24, true, true, true, true, true, "v2.30.7-1 src/graph/paths.cc:819 only 1 disables" },
		{ V(2, 27, 3), 0, 1, NPT_SYS, 24, NPT_P2C, 24, true, true, true, true, true, "v2.27.3-1 src/graph/paths.cc:701 P2C relay" },
		{ V(2, 27, 3), 0, 0, NPT_SYS, 24, NPT_P2C, 24, true, true, true, true, false, "v2.27.3-1 src/graph/paths.cc:609 PXN_C2C 0" },
		{ V(2, 28, 9), 0, 1, NPT_P2C, 24, NPT_P2C, 24, true, true, true, true, false, "v2.28.9-1 paths.cc gpu > pxnType" },
		{ V(2, 29, 2), 0, 1, NPT_PHB, 24, NPT_P2C, 24, true, true, true, true, true, "v2.30.7-1 src/graph/paths.cc:836 > PXN" },
		{ V(2, 29, 2), 0, 1, NPT_P2C, 24, NPT_PIX, 24, true, true, true, true, false, "v2.30.7-1 src/graph/paths.cc:836 P2C < PXN" },
		{ V(2, 29, 2), 0, 1, NPT_PHB, 24, NPT_PIX, 24, true, true, true, false, true, "v2.29.2-1 no relay GDR test" },
		{ V(2, 30, 7), 0, 1, NPT_PHB, 24, NPT_PIX, 24, true, true, true, false, false, "v2.30.7-1 src/graph/paths.cc:830 relay GDR" },
		{ V(2, 30, 7), 0, 1, NPT_PHB, 24, NPT_PIX, 24, true, true, false, true, false, "v2.30.7-1 src/graph/paths.cc:822 NIC's local GPU" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		struct nccl_pxn_in in = {
			.ver = rows[i].ver, .pxn_disable = rows[i].disable,
			.pxn_c2c = rows[i].c2c, .gpu_net = rows[i].gpu_net,
			.gpu_net_bw = rows[i].gpu_bw, .peer_net = rows[i].peer_net,
			.peer_net_bw = rows[i].peer_bw, .peer_nvlink = rows[i].nvl,
			.same_system = rows[i].same, .peer_is_relay = rows[i].relay,
			.peer_gdr_read = rows[i].peer_gdr,
		};

		if (nccl_pxn_applies(&in) != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(nccl_pxn_applies(&in), rows[i].out);
	}
}

/* --- mechanism -------------------------------------------------------------------- */

static void test_dmabuf(void **state)
{
	static const struct {
		int ver;
		int64_t enable;
		int driver, attr, probe;
		bool comm, nic;
		const char *src;
	} rows[] = {
		{ V(2, 12, 12), 1, 12040, 1, EBADF, false, false, "v2.12.12-1 no DMA-BUF" },
		{ V(2, 13, 4), 1, 12040, 1, EBADF, true, true, "v2.30.7-1 src/init.cc:399 default 1" },
		{ V(2, 30, 7), 0, 12040, 1, EBADF, false, true, "v2.30.7-1 src/init.cc:403 ENABLE=0" },
		{ V(2, 30, 7), 1, 11060, 1, EBADF, false, true, "v2.30.7-1 src/init.cc:411 driver < 11070" },
		{ V(2, 30, 7), 1, 12040, 0, EBADF, false, true, "v2.30.7-1 src/init.cc:415 attribute" },
		{ V(2, 30, 7), 1, 12040, 1, EOPNOTSUPP, true, false, "v2.30.7-1 src/transport/net_ib/gdr.cc:59" },
		{ V(2, 30, 7), 1, 12040, 1, EPROTONOSUPPORT, true, false, "v2.30.7-1 src/transport/net_ib/gdr.cc:59" },
		{ V(2, 30, 7), 1, 12040, 1, EINVAL, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 any other errno" },
		{ V(2, 30, 7), 1, 12040, 1, 0, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 errno 0" },
		{ V(2, 13, 4), 1, 12040, 1, EPROTONOSUPPORT, true, true, "v2.13.4-1 src/transport/net_ib.cc:292 EOPNOTSUPP only" },
		/*
		 * One row per probe errno (fd -1): NCCL's nic verdict follows
		 * these, not mech.dmabuf_provider's stricter classification.
		 */
		{ V(2, 13, 4), 1, 12040, 1, EOPNOTSUPP, true, false, "v2.13.4-1 src/transport/net_ib.cc:292 EOPNOTSUPP" },
		{ V(2, 14, 3), 1, 12040, 1, EPROTONOSUPPORT, true, false, "v2.14.3-1 src/transport/net_ib.cc:291 EPROTONOSUPPORT" },
		{ V(2, 14, 3), 1, 12040, 1, EBADF, true, true, "v2.14.3-1 src/transport/net_ib.cc:291 EBADF" },
		{ V(2, 26, 2), 1, 12040, 1, EINVAL, true, true, "v2.26.2-1 src/transport/net_ib.cc:735 EINVAL" },
		{ V(2, 28, 9), 1, 12040, 1, EPROTONOSUPPORT, true, false, "v2.28.9-1 src/transport/net_ib.cc:589 EPROTONOSUPPORT" },
		{ V(2, 29, 7), 1, 12040, 1, EOPNOTSUPP, true, false, "v2.29.7-1 src/transport/net_ib/gdr.cc:60 EOPNOTSUPP" },
		{ V(2, 30, 7), 1, 12040, 1, EBADF, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 EBADF" },
		{ V(2, 30, 7), 1, 12040, 1, EFAULT, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 EFAULT" },
		{ V(2, 30, 7), 1, 12040, 1, ENOSYS, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 ENOSYS" },
		{ V(2, 30, 7), 1, 12040, 1, EACCES, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 EACCES" },
		{ V(2, 30, 7), 1, 12040, 1, ENODEV, true, true, "v2.30.7-1 src/transport/net_ib/gdr.cc:59 ENODEV" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		bool comm = nccl_dmabuf_comm(rows[i].ver, rows[i].enable, true,
					     rows[i].driver, rows[i].attr);
		bool nic = nccl_dmabuf_probe_ok(rows[i].ver, rows[i].probe);

		if (comm != rows[i].comm || nic != rows[i].nic)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(comm, rows[i].comm);
		assert_int_equal(nic, rows[i].nic);
	}
	/* v2.30.7-1 src/init.cc:403 plugin without regMrDmaBuf */
	assert_false(nccl_dmabuf_comm(V(2, 30, 7), 1, false, 12040, 1));
}

static void test_mechanism(void **state)
{
	static const struct {
		int ver;
		bool use_gdr, comm, nic, peermem;
		bool net_gdr;
		enum nccl_mech mech;
		bool no_fallback, unprobed;
		const char *src;
	} rows[] = {
		{ V(2, 30, 7), true, true, true, true, true, NCCL_MECH_DMABUF, true, false,
		  "v2.30.7-1 src/transport/net.cc:754,997 DMA-BUF first, NCCLCHECK" },
		{ V(2, 30, 7), true, true, true, false, true, NCCL_MECH_DMABUF, true, false,
		  "v2.30.7-1 src/graph/topo.cc:1652 DMA-BUF alone" },
		{ V(2, 30, 7), true, false, true, true, true, NCCL_MECH_PEERMEM, false, false,
		  "v2.30.7-1 src/transport/net.cc:754 DMABUF_ENABLE=0 -> regMr" },
		{ V(2, 30, 7), true, true, false, true, true, NCCL_MECH_PEERMEM, false, false,
		  "v2.30.7-1 src/transport/net.cc:754 NIC probe failed" },
		{ V(2, 30, 7), true, true, false, false, false, NCCL_MECH_HOST, false, false,
		  "v2.30.7-1 src/graph/topo.cc:1652 no GDR at all" },
		{ V(2, 30, 7), false, true, true, true, true, NCCL_MECH_HOST, false, false,
		  "v2.30.7-1 src/transport/net.cc:754 useGdr 0" },
		{ V(2, 13, 4), true, true, false, true, true, NCCL_MECH_DMABUF, true, true,
		  "v2.13.4-1 src/transport/net.cc:592 comm->dmaBufSupport only" },
		{ V(2, 14, 3), true, true, false, true, true, NCCL_MECH_PEERMEM, false, false,
		  "v2.14.3-1 src/transport/net.cc useDmaBuf needs NCCL_PTR_DMABUF" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		struct nccl_mech_out o;

		nccl_mechanism(rows[i].ver, rows[i].use_gdr, rows[i].comm,
			       rows[i].nic, rows[i].peermem, &o);
		if (o.net_gdr != rows[i].net_gdr || o.mech != rows[i].mech ||
		    o.no_fallback != rows[i].no_fallback ||
		    o.dmabuf_unprobed != rows[i].unprobed)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(o.net_gdr, rows[i].net_gdr);
		assert_int_equal(o.mech, rows[i].mech);
		assert_int_equal(o.no_fallback, rows[i].no_fallback);
		assert_int_equal(o.dmabuf_unprobed, rows[i].unprobed);
	}
}

/* --- NCCL_IB_HCA, NCCL_NET ---------------------------------------------------------- */

static void test_hca(void **state)
{
	static const struct {
		int ver;
		const char *env, *dev;
		int port;
		bool use;
		const char *src;
	} rows[] = {
		{ V(2, 30, 7), NULL, "mlx5_0", 1, true, "v2.30.7-1 src/misc/utils.cc:234 no list" },
		{ V(2, 30, 7), "", "mlx5_0", 1, true, "v2.30.7-1 src/misc/utils.cc:234 empty list" },
		{ V(2, 30, 7), "mlx5_1", "mlx5_1", 1, true, "v2.30.7-1 src/misc/utils.cc:220 prefix" },
		{ V(2, 30, 7), "mlx5_1", "mlx5_11", 1, true, "v2.30.7-1 src/misc/utils.cc:220 prefix trap" },
		{ V(2, 30, 7), "mlx5_1", "mlx5_0", 1, false, "v2.30.7-1 src/misc/utils.cc:220" },
		{ V(2, 30, 7), "=mlx5_1", "mlx5_11", 1, false, "v2.30.7-1 src/transport/net_ib/init.cc:322 exact" },
		{ V(2, 30, 7), "=mlx5_1", "mlx5_1", 1, true, "v2.30.7-1 src/misc/utils.cc:220 strlen+1" },
		{ V(2, 30, 7), "^mlx5_1", "mlx5_11", 1, false, "v2.30.7-1 src/transport/net_ib/init.cc:370 ^ prefix" },
		{ V(2, 30, 7), "^mlx5_1", "mlx5_2", 1, true, "v2.30.7-1 src/transport/net_ib/init.cc:370" },
		{ V(2, 30, 7), "^=mlx5_1", "mlx5_11", 1, true, "v2.30.7-1 src/transport/net_ib/init.cc:320-323" },
		{ V(2, 30, 7), "=^mlx5_1", "mlx5_1", 1, false, "v2.30.7-1 src/transport/net_ib/init.cc:320 ^ first" },
		{ V(2, 30, 7), "^", "mlx5_0", 1, false, "v2.30.7-1 src/misc/utils.cc:234 empty list ^ excludes all" },
		{ V(2, 30, 7), "mlx5_0:1", "mlx5_0", 2, false, "v2.30.7-1 src/misc/utils.cc:225 port" },
		{ V(2, 30, 7), "mlx5_0:1", "mlx5_0", 1, true, "v2.30.7-1 src/misc/utils.cc:225" },
		{ V(2, 30, 7), "mlx5_0:", "mlx5_0", 1, true, "v2.30.7-1 src/misc/utils.cc:205 empty port -1" },
		{ V(2, 29, 7), "mlx5_0:", "mlx5_0", 1, false, "v2.29.7-1 src/misc/utils.cc:170 atoi(\"\") = 0" },
		{ V(2, 30, 7), "mlx5_2,mlx5_0:1", "mlx5_0", 1, true, "v2.30.7-1 src/misc/utils.cc:202 list" },
		{ V(2, 29, 7), "mlx5_2,mlx5_0:1", "mlx5_0", 1, true, "v2.29.7-1 src/misc/utils.cc:168" },
		{ V(2, 29, 7), " mlx5_0", "mlx5_0", 1, false, "v2.29.7-1 src/misc/utils.cc no trimming" },
		{ V(2, 29, 7), "mlx5_0:1:2,mlx5_3", "mlx5_3", 1, true, "v2.29.7-1 src/misc/utils.cc skip to ','" },
		{ V(2, 29, 7), ",,mlx5_3", "mlx5_3", 1, true, "v2.29.7-1 src/misc/utils.cc:168 empty dropped" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		struct nccl_hca_filter f;
		bool use;

		assert_int_equal(nccl_hca_parse(rows[i].ver, rows[i].env, &f), 0);
		use = nccl_hca_match(&f, rows[i].dev, rows[i].port);
		if (use != rows[i].use)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(use, rows[i].use);
	}
}

static void test_hca_fields_and_limits(void **state)
{
	struct nccl_hca_filter f;
	char list[40 * 8 + 1] = "", name[80];

	/* v2.30.7-1 src/misc/utils.cc:205-209 port, rail, plane */
	assert_int_equal(nccl_hca_parse(V(2, 30, 7), "mlx5_0:1:3:1", &f), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.ifs[0].port, 1);
	assert_int_equal(f.ifs[0].rail, 3);
	assert_int_equal(f.ifs[0].plane, 1);
	/* MAX_IB_DEVS: 16 in v2.12.7-1 src/transport/net_ib.cc:69, 32 later */
	for (int i = 0; i < 40; i++) {
		size_t len = strlen(list);

		snprintf(list + len, sizeof(list) - len, "%sm%d", i ? "," : "", i);
	}
	assert_int_equal(nccl_hca_parse(V(2, 12, 7), list, &f), 0);
	assert_int_equal(f.n, 16);
	assert_int_equal(nccl_hca_parse(V(2, 30, 7), list, &f), 0);
	assert_int_equal(f.n, 32);
	/* prefix[64]: the old loop overflows, the new one truncates */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(nccl_hca_parse(V(2, 29, 7), name, &f), -ENAMETOOLONG);
	assert_int_equal(nccl_hca_parse(V(2, 30, 7), name, &f), 0);
	assert_int_equal(strlen(f.ifs[0].prefix), 63);
}

static void test_net_name(void **state)
{
	/* v2.12.7-1 src/net.cc:173 strcmp; v2.13.4-1 src/net.cc:275 strcasecmp */
	assert_true(nccl_net_selects(V(2, 30, 7), NULL, "IB"));
	assert_true(nccl_net_selects(V(2, 30, 7), "ib", "IB"));
	assert_false(nccl_net_selects(V(2, 12, 7), "ib", "IB"));
	assert_true(nccl_net_selects(V(2, 12, 7), "IB", "IB"));
	assert_false(nccl_net_selects(V(2, 30, 7), "Socket", "IB"));
	assert_true(nccl_net_selects(V(2, 13, 4), "SOCKET", "Socket"));
}

/* --- GID index ----------------------------------------------------------------------- */

static void gid_v4(struct nccl_gid *g, uint8_t a, uint8_t b, uint8_t c,
		   uint8_t d, int roce)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	g->raw[12] = a;
	g->raw[13] = b;
	g->raw[14] = c;
	g->raw[15] = d;
	g->roce_ver = roce;
}

static void gid_link_local(struct nccl_gid *g, int roce)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xfe;
	g->raw[1] = 0x80;
	g->raw[8] = 0x02;
	g->raw[15] = 0x01;
	g->roce_ver = roce;
}

static void gid_v6(struct nccl_gid *g, int roce)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0x20;
	g->raw[1] = 0x01;
	g->raw[2] = 0x0d;
	g->raw[3] = 0xb8;
	g->raw[15] = 0x05;
	g->roce_ver = roce;
}

static void test_gid_classes(void **state)
{
	struct nccl_gid g;

	/* v2.30.7-1 src/transport/net_ib/connect.cc:165 IPv4-mapped */
	gid_v4(&g, 10, 0, 0, 1, 2);
	assert_int_equal(nccl_gid_family(g.raw), NCCL_AF_INET);
	assert_true(nccl_gid_valid(g.raw));
	/* connect.cc:224 link-local fe80::/64 */
	gid_link_local(&g, 1);
	assert_int_equal(nccl_gid_family(g.raw), NCCL_AF_INET6);
	assert_false(nccl_gid_valid(g.raw));
	/* connect.cc:216 all zero is not configured */
	memset(&g, 0, sizeof(g));
	assert_false(nccl_gid_valid(g.raw));
	/* connect.cc:166 ff0e::ffff:a.b.c.d counts as IPv4 */
	gid_v4(&g, 239, 1, 1, 1, 2);
	g.raw[0] = 0xff;
	g.raw[1] = 0x0e;
	assert_int_equal(nccl_gid_family(g.raw), NCCL_AF_INET);
	gid_v6(&g, 2);
	assert_int_equal(nccl_gid_family(g.raw), NCCL_AF_INET6);
	assert_true(nccl_gid_valid(g.raw));
}

static void test_gid_index(void **state)
{
	/* A typical RoCE table: link-local v1/v2, then IPv4 v1/v2. */
	struct nccl_gid roce[4], v6tbl[4], ib[2];
	struct nccl_gid_in in = {
		.ver = V(2, 30, 7), .gid_index = -1, .roce_ver = 2,
		.flid_index = 1, .family = NCCL_AF_INET, .tbl = roce, .n = 4,
	};
	int idx;

	gid_link_local(&roce[0], 1);
	gid_link_local(&roce[1], 2);
	gid_v4(&roce[2], 10, 1, 0, 7, 1);
	gid_v4(&roce[3], 10, 1, 0, 7, 2);
	/* connect.cc:279 family, :290 RoCE v2: index 3 */
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 3);
	/* connect.cc:14 NCCL_IB_ROCE_VERSION_NUM=1: index 2 */
	in.roce_ver = 1;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 2);
	in.roce_ver = 2;
	/* connect.cc:318 NCCL_IB_GID_INDEX wins */
	in.gid_index = 1;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 1);
	in.gid_index = -1;
	/* connect.cc:188 NCCL_IB_ADDR_RANGE 192.168.0.0/16 excludes 10.x */
	in.range_set = true;
	in.range[0] = 192;
	in.range[1] = 168;
	in.prefixlen = 16;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 0);
	in.range[0] = 10;
	in.range[1] = 1;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 3);
	in.range_set = false;
	/* v2.20.5-1 src/transport/net_ib.cc:80 default 0, no choice */
	in.ver = V(2, 20, 5);
	in.gid_index = nccl_gid_index_default(in.ver);
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 0);
	in.ver = V(2, 30, 7);
	in.gid_index = -1;
	/* connect.cc:242 unreadable types file: NCCL fails */
	roce[3].roce_ver = -1;
	assert_int_equal(nccl_gid_index(&in, &idx), -EIO);
	roce[3].roce_ver = 2;
	/* NCCL_IB_ADDR_FAMILY=AF_INET6 with a global IPv6 GID */
	gid_link_local(&v6tbl[0], 1);
	gid_v6(&v6tbl[1], 1);
	gid_v6(&v6tbl[2], 2);
	gid_v4(&v6tbl[3], 10, 1, 0, 7, 2);
	in.tbl = v6tbl;
	in.family = NCCL_AF_INET6;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 2);
	/*
	 * An IPv6-only RoCE port (Thor-2 on an IPv6 fabric; platform.provider):
	 * link-local v1/v2, global IPv6 v1/v2, nothing IPv4-mapped.
	 * v2.30.7-1 connect.cc:279 no candidate of family AF_INET (the
	 * default): NCCL stays at index 0, a link-local GID; with
	 * NCCL_IB_ADDR_FAMILY=AF_INET6 the global RoCE v2 GID, index 3.
	 */
	gid_link_local(&v6tbl[0], 1);
	gid_link_local(&v6tbl[1], 2);
	gid_v6(&v6tbl[2], 1);
	gid_v6(&v6tbl[3], 2);
	in.family = NCCL_AF_INET;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 0);
	assert_false(nccl_gid_valid(v6tbl[idx].raw));
	in.family = NCCL_AF_INET6;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 3);
	/* v2.21.5-1 src/transport/net_ib.cc envIbAddrFamily: same choice */
	in.ver = V(2, 21, 5);
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 3);
	in.ver = V(2, 30, 7);
	/* connect.cc:308 IB: the FLID GID at index 1 when its FLID is set */
	memset(ib, 0, sizeof(ib));
	ib[0].raw[0] = 0xfe;
	ib[0].raw[1] = 0x80;
	ib[1].raw[0] = 0xfe;
	ib[1].raw[1] = 0x80;
	in.infiniband = true;
	in.tbl = ib;
	in.n = 2;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 0);
	ib[1].raw[5] = 0x12;
	assert_int_equal(nccl_gid_index(&in, &idx), 0);
	assert_int_equal(idx, 1);
}

/* --- Data Direct, cuMem --------------------------------------------------------------- */

static void test_data_direct(void **state)
{
	static const struct {
		int ver;
		int64_t param;
		bool capable, plain, dma;
		const char *src;
	} rows[] = {
		{ V(2, 26, 6), 1, true, true, false, "v2.26.6-1 no Data Direct" },
		{ V(2, 27, 3), 1, true, true, true, "v2.27.3-1 src/transport/net_ib.cc:658 both" },
		{ V(2, 27, 3), 0, true, true, false, "v2.27.3-1 src/transport/net_ib.cc:128,658" },
		{ V(2, 27, 5), -1, true, true, true, "v2.27.5-1 src/transport/net_ib.cc:660 if (ncclParamIbDataDirect()): any non-zero, both" },
		{ V(2, 27, 6), 1, true, false, true, "v2.27.6-1 src/transport/net_ib.cc:662 == 1: skipNetDevForDataDirect, _dma only" },
		{ V(2, 27, 7), 2, true, true, true, "v2.27.7-1 src/transport/net_ib.cc:663 == 2: both" },
		{ V(2, 27, 7), -1, true, true, false, "v2.27.7-1 src/transport/net_ib.cc:662-663 neither 1 nor 2: plain only" },
		{ V(2, 27, 7), 3, true, true, false, "v2.27.7-1 src/transport/net_ib.cc:662-663 3: plain only" },
		{ V(2, 28, 3), 3, true, false, true, "v2.28.3-1 src/transport/net_ib.cc:702,709 > 0, != 2: _dma only" },
		{ V(2, 28, 3), 1, true, false, true, "v2.30.7-1 src/transport/net_ib/init.cc:386 _dma only" },
		{ V(2, 30, 7), 2, true, true, true, "v2.30.7-1 src/transport/net_ib/init.cc:386 2: both" },
		{ V(2, 30, 7), 0, true, true, false, "v2.30.7-1 src/transport/net_ib/init.cc:378 off" },
		{ V(2, 30, 7), -1, true, true, false, "v2.30.7-1 src/transport/net_ib/init.cc:378 > 0" },
		{ V(2, 30, 7), 1, false, true, false, "v2.30.7-1 src/transport/net_ib/init.cc:378 not capable" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		struct nccl_dd_out o;

		nccl_data_direct(rows[i].ver, rows[i].param, rows[i].capable, &o);
		if (o.plain != rows[i].plain || o.dma != rows[i].dma)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(o.plain, rows[i].plain);
		assert_int_equal(o.dma, rows[i].dma);
	}
}

static void test_cumem(void **state)
{
	static const struct {
		int ver;
		int64_t param;
		int driver;
		bool create;
		int vmm, gdr_vmm;
		bool on;
		const char *src;
	} rows[] = {
		{ V(2, 17, 1), 1, 12040, true, 1, 1, false, "v2.17.1-1 no cuMem" },
		{ V(2, 18, 1), 0, 12040, true, 1, 1, false, "v2.18.1-1 src/misc/cudawrap.cc:15 default 0" },
		{ V(2, 18, 1), -1, 12040, true, 1, 0, true, "v2.18.1-1 src/misc/cudawrap.cc:46 || param" },
		{ V(2, 19, 1), -2, 12040, true, 1, 1, true, "v2.30.7-1 src/misc/cudawrap.cc:50 auto" },
		{ V(2, 19, 1), -2, 12040, true, 1, 0, false, "v2.23.4-1 src/misc/cudawrap.cc:39 GDR with VMM" },
		{ V(2, 24, 3), -2, 12040, true, 1, 0, true, "v2.24.3-1 cudawrap.cc no GDR/VMM test" },
		{ V(2, 30, 7), -2, 11080, true, 1, 1, false, "v2.30.7-1 src/misc/cudawrap.cc:34 driver < 12000" },
		{ V(2, 30, 7), -2, 12040, false, 1, 1, false, "v2.30.7-1 src/misc/cudawrap.cc:36 no cuMemCreate" },
		{ V(2, 30, 7), -2, 12040, true, 0, 1, false, "v2.30.7-1 src/misc/cudawrap.cc:39 VMM" },
		{ V(2, 30, 7), -1, 12040, true, 1, 1, false, "v2.30.7-1 src/misc/cudawrap.cc:50 -1 is off" },
		{ V(2, 30, 7), 0, 12040, true, 1, 1, false, "v2.30.7-1 src/misc/cudawrap.cc:50" },
		{ V(2, 30, 7), 1, 11080, false, 0, 0, true, "v2.30.7-1 src/misc/cudawrap.cc:50 forced" },
		/* Checked again for data.nccl's buffer kind (probes/nccl.c cumem_of). */
		{ V(2, 18, 6), -2, 12080, true, 1, 1, true, "v2.18.6-1 src/misc/cudawrap.cc:46 -2 && supported" },
		{ V(2, 18, 6), 2, 11080, false, 0, 0, true, "v2.18.6-1 src/misc/cudawrap.cc:46 || param" },
		{ V(2, 19, 1), -1, 12080, true, 1, 1, false, "v2.19.1-1 src/misc/cudawrap.cc:47-48 -1 is off" },
		{ V(2, 19, 1), -2, 12080, true, 1, 1, true, "v2.19.1-1 src/misc/cudawrap.cc:15,48 default -2" },
		{ V(2, 23, 4), -2, 12080, true, 1, 0, false, "v2.23.4-1 src/misc/cudawrap.cc:39-40 GDR with VMM" },
		{ V(2, 24, 3), -2, 12080, true, 0, 1, false, "v2.24.3-1 src/misc/cudawrap.cc:35-37 VMM" },
		{ V(2, 30, 7), -2, 12000, true, 1, 0, true, "v2.30.7-1 src/misc/cudawrap.cc:34 12000 is enough" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		bool on = nccl_cumem_enable(rows[i].ver, rows[i].param,
					    rows[i].driver, rows[i].create,
					    rows[i].vmm, rows[i].gdr_vmm);

		if (on != rows[i].on)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(on, rows[i].on);
	}
}

/* --- topology: Broadcom, NUMA, rails ---------------------------------------------------- */

static void test_bcm(void **state)
{
	uint64_t g4top = nccl_pci_id(0x1000, 0xc010, 0x1000, 0xa064);
	uint64_t g4sub = nccl_pci_id(0x1000, 0xc010, 0x1000, 0xa064);
	uint64_t g4sub2 = nccl_pci_id(0x1000, 0xc010, 0x1000, 0xa065);
	uint64_t g5top = nccl_pci_id(0x1000, 0xc030, 0x1000, 0x0100);
	uint64_t g5sub = nccl_pci_id(0x1000, 0xc030, 0x1000, 0x1100);
	uint64_t g5none = nccl_pci_id(0x1000, 0xc030, 0, 0);
	uint64_t other = nccl_pci_id(0x10b5, 0x9797, 0x10b5, 0x9797);
	static const struct {
		int ver;
		int top, sub;	/* index into ids[] */
		bool flat;
		const char *src;
	} rows[] = {
		{ V(2, 12, 7), 0, 1, true, "v2.12.7-1 src/graph/topo.cc:193 Gen4, same id" },
		{ V(2, 19, 4), 0, 2, false, "v2.19.4-1 src/graph/topo.cc:196 id must be equal" },
		{ V(2, 20, 3), 0, 2, true, "v2.20.3-1 src/graph/topo.cc:184 getBcmGen a0xx both levels" },
		{ V(2, 19, 4), 3, 4, false, "v2.19.4-1 src/graph/topo.cc:188 no Gen5 before 2.20.3" },
		{ V(2, 20, 3), 3, 4, true, "v2.20.3-1 src/graph/topo.cc:185 Gen5 0xxx over 1xxx" },
		{ V(2, 30, 7), 3, 4, true, "v2.30.7-1 src/graph/topo.cc:201 Gen5" },
		{ V(2, 30, 7), 4, 4, false, "v2.30.7-1 src/graph/topo.cc:208 1xxx is no top" },
		{ V(2, 30, 7), 3, 3, false, "v2.30.7-1 src/graph/topo.cc:218 0xxx is no sub" },
		{ V(2, 30, 7), 3, 1, false, "v2.30.7-1 src/graph/topo.cc:218 other generation kept" },
		{ V(2, 30, 7), 5, 5, false, "v2.30.7-1 src/graph/topo.cc:201 no subsystem id" },
		{ V(2, 30, 7), 6, 6, false, "v2.30.7-1 src/graph/topo.cc:200 not Broadcom" },
	};
	const uint64_t ids[] = { g4top, g4sub, g4sub2, g5top, g5sub, g5none, other };

	(void)state;
	/* v2.30.7-1 src/graph/topo.cc:525 id layout */
	assert_true(g4top == 0x1000c0101000a064ULL);
	assert_int_equal(nccl_bcm_gen(V(2, 12, 7), g4top, 0), 4);
	assert_int_equal(nccl_bcm_gen(V(2, 30, 7), g5top, 0), 5);
	assert_int_equal(nccl_bcm_gen(V(2, 30, 7), g5sub, 1), 5);
	assert_int_equal(nccl_bcm_gen(V(2, 30, 7), g5sub, 0), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool f = nccl_bcm_flattens(rows[i].ver, ids[rows[i].top],
					   ids[rows[i].sub]);

		if (f != rows[i].flat)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(f, rows[i].flat);
	}
	/* v2.22.3-1 src/graph/xml.cc:413 virtual_switch_links; absent in 2.21.5 */
	assert_false(nccl_bcm_virtual_links(V(2, 21, 5)));
	assert_true(nccl_bcm_virtual_links(V(2, 22, 3)));
	/* v2.30.7-1 src/os/linux.cc:681 */
	assert_true(nccl_bcm_virtual_links(V(2, 30, 7)));
	/* v2.12.7-1 src/graph/paths.cc:92 PCI -> PCI hop is PXB */
	assert_int_equal(nccl_pci_switch_path(1), NPT_PIX);
	assert_int_equal(nccl_pci_switch_path(2), NPT_PXB);
	assert_int_equal(nccl_pci_switch_path(3), NPT_PXB);
}

static void test_pci_bw(void **state)
{
	static const struct {
		const char *ds, *ps, *dw, *pw;
		double bw;
		const char *src;
	} rows[] = {
		{ "32.0 GT/s PCIe", "32.0 GT/s PCIe", "16", "16", 48, "v2.30.7-1 src/graph/topo.cc:657 16 * 240 / 80" },
		{ "32.0 GT/s PCIe", "16.0 GT/s PCIe", "16", "16", 24, "v2.30.7-1 src/graph/xml.cc:688 the lower speed" },
		{ "16.0 GT/s PCIe", "32.0 GT/s PCIe", "8", "16", 12, "v2.30.7-1 src/graph/xml.cc:718 the narrower width" },
		{ "8 GT/s", "8 GT/s", "16", "16", 12, "v2.12.7-1 src/graph/topo.cc:374 kernel <= 5.6 names" },
		{ "2.5 GT/s PCIe", NULL, "16", NULL, 3, "v2.30.7-1 src/graph/xml.cc:672 NVML current gen" },
		{ "", "", "", "", 12, "v2.12.7-1 src/graph/topo.cc:376 fallback 60, width 0 -> 16" },
		{ "32.0 GT/s PCIe", "", "16", "", 48, "v2.30.7-1 src/graph/xml.cc:686 no port: device" },
		{ "Unknown", "Unknown", "16", "16", 12, "v2.30.7-1 src/graph/xml.h:428 no match: 60" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double bw = nccl_pci_bw(rows[i].ds, rows[i].ps, rows[i].dw,
					rows[i].pw);

		if (bw != rows[i].bw)
			ROW_FAIL(i, rows[i].src);
		assert_true(bw == rows[i].bw);
	}
}

static void test_ib_speed(void **state)
{
	static const struct {
		int ver;
		const char *rate;
		int mbps;
		const char *src;
	} rows[] = {
		{ V(2, 30, 7), "400 Gb/sec (4X NDR)", 400000, "v2.30.7-1 src/transport/net_ib/init.cc:117 NDR" },
		{ V(2, 16, 2), "400 Gb/sec (4X NDR)", 200000, "v2.16.2-1 src/transport/net_ib.cc ibvSpeeds ends at HDR" },
		{ V(2, 16, 5), "400 Gb/sec (4X NDR)", 400000, "v2.16.5-1 src/transport/net_ib.cc:125 + NDR" },
		{ V(2, 27, 3), "800 Gb/sec (4X XDR)", 400000, "v2.27.3-1 src/transport/net_ib/init.cc ends at NDR" },
		{ V(2, 27, 5), "800 Gb/sec (4X XDR)", 800000, "v2.27.5-1 src/transport/net_ib.cc:489 + XDR" },
		{ V(2, 30, 7), "25 Gb/sec (1X EDR)", 25000, "v2.30.7-1 src/transport/net_ib/init.cc:117 EDR" },
		{ V(2, 30, 7), "100 Gb/sec (2X HDR)", 100000, "v2.14.3-1 src/transport/net_ib.cc:122 2X" },
		{ V(2, 13, 4), "100 Gb/sec (2X HDR)", 600000, "v2.12.7-1 src/transport/net_ib.cc:123 2X reads as 12" },
		{ V(2, 30, 7), "56 Gb/sec (4X FDR)", 56000, "v2.30.7-1 src/transport/net_ib/init.cc:117 FDR" },
		{ V(2, 30, 7), "40 Gb/sec (4X FDR10)", 40000, "v2.30.7-1 src/transport/net_ib/init.cc:117 FDR10" },
		{ V(2, 30, 7), "10 Gb/sec (4X)", 10000, "kernel rate_show without a name: SDR" },
		{ V(2, 30, 7), "unknown", 0, "unparseable" },
		{ V(2, 30, 7), "400 Gb/sec (4X ZZZ)", 0, "unknown speed name" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int m = nccl_ib_port_mbps(rows[i].ver, rows[i].rate);

		if (m != rows[i].mbps)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(m, rows[i].mbps);
	}
	/* v2.30.7-1 src/graph/topo.cc:417-418 */
	assert_true(nccl_net_bw(400000) == 50.0);
	assert_true(nccl_net_bw(0) == 1.25);
}

static void test_cpu_path(void **state)
{
	/* v2.30.7-1 src/graph/xml.cc:771 CPU node keyed by numa_node text */
	assert_int_equal(nccl_cpu_path(-1, -1), NPT_PHB);
	assert_int_equal(nccl_cpu_path(-1, 0), NPT_SYS);
	assert_int_equal(nccl_cpu_path(0, 0), NPT_PHB);
	assert_int_equal(nccl_cpu_path(0, 1), NPT_SYS);
}

static void test_local_nets(void **state)
{
	/* v2.30.7-1 src/graph/topo.cc:1954: bandwidth first, then type */
	const struct nccl_net_path p[] = {
		{ NPT_PIX, 24 }, { NPT_PXB, 48 }, { NPT_SYS, 12 }, { NPT_PXB, 48 },
	};
	const struct nccl_net_path q[] = {
		{ NPT_PHB, 24 }, { NPT_PIX, 24 }, { NPT_PIX, 24 }, { NPT_SYS, 24 },
	};
	int locals[4];

	assert_int_equal(nccl_local_nets(V(2, 30, 7), p, 4, locals), 2);
	assert_int_equal(locals[0], 1);
	assert_int_equal(locals[1], 3);
	assert_int_equal(nccl_local_nets(V(2, 30, 7), q, 4, locals), 2);
	assert_int_equal(locals[0], 1);
	assert_int_equal(locals[1], 2);
}

static void test_net_local_gpus(void **state)
{
	/*
	 * nccl-pxn-hgx's mlx5_0 seen from the NIC: GPU0 PIX, GPU2 PXB, the
	 * socket's NIC-less GPUs PHB, the other socket SYS. GPU1's own path
	 * to it is PXN through GPU0, on the GPU's side only.
	 */
	static const struct nccl_net_path p[] = {
		{ NPT_PIX, 24 }, { NPT_PHB, 24 }, { NPT_PXB, 24 }, { NPT_PHB, 24 },
		{ NPT_SYS, 24 }, { NPT_SYS, 24 }, { NPT_SYS, 24 }, { NPT_SYS, 24 },
	};
	/* Two GPUs under one switch with the NIC. */
	static const struct nccl_net_path q[] = {
		{ NPT_PIX, 24 }, { NPT_PIX, 24 }, { NPT_SYS, 24 },
	};
	static const struct {
		int ver;
		const struct nccl_net_path *p;
		int n, out;
		const char *src;
	} rows[] = {
		{ V(2, 18, 5), p, 8, 1, "v2.18.5-1 src/graph/topo.cc:709" },
		{ V(2, 21, 5), p, 8, 1, "v2.21.5-1 src/graph/topo.cc:829" },
		{ V(2, 23, 4), p, 8, 1, "v2.23.4-1 src/graph/topo.cc:918" },
		{ V(2, 27, 5), p, 8, 1, "v2.27.5-1 src/graph/topo.cc:1508" },
		{ V(2, 28, 9), p, 8, 1, "v2.28.9-1 src/graph/topo.cc:1654" },
		{ V(2, 30, 7), p, 8, 1, "v2.30.7-1 src/graph/topo.cc:2056" },
		{ V(2, 30, 7), q, 3, 2, "v2.30.7-1 src/graph/topo.cc:2056" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		int got = nccl_net_local_gpus(rows[i].ver, rows[i].p, rows[i].n);

		if (got != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(got, rows[i].out);
	}
}

static void test_rewrite_net_side(void **state)
{
	static const struct {
		int ver;
		enum nccl_rewrite rw;
		bool out;
		const char *src;
	} rows[] = {
		{ V(2, 18, 5), NCCL_RW_PXN, false, "v2.18.5-1 src/graph/paths.cc:599 GPU->NET only" },
		{ V(2, 21, 5), NCCL_RW_PXN, false, "v2.21.5-1 src/graph/paths.cc:622" },
		{ V(2, 28, 9), NCCL_RW_PXN, false, "v2.28.9-1 src/graph/paths.cc:740" },
		{ V(2, 30, 7), NCCL_RW_PXN, false, "v2.30.7-1 src/graph/paths.cc:840" },
		{ V(2, 27, 5), NCCL_RW_P2C, true, "v2.27.5-1 src/graph/paths.cc:686 netNode->paths[GPU]" },
		{ V(2, 28, 9), NCCL_RW_P2C, true, "v2.28.9-1 src/graph/paths.cc:709" },
		{ V(2, 30, 7), NCCL_RW_P2C, true, "v2.30.7-1 src/graph/paths.cc:807" },
		{ V(2, 12, 7), NCCL_RW_NOGDR, true, "v2.12.7-1 src/graph/paths.cc:551 NET->CPU->GPU" },
		{ V(2, 21, 5), NCCL_RW_NOGDR, true, "v2.21.5-1 src/graph/paths.cc:633" },
		{ V(2, 28, 9), NCCL_RW_NOGDR, true, "v2.28.9-1 src/graph/paths.cc:751" },
		{ V(2, 30, 7), NCCL_RW_NOGDR, true, "v2.30.7-1 src/graph/paths.cc:852" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		bool got = nccl_rewrite_net_side(rows[i].ver, rows[i].rw);

		if (got != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(got, rows[i].out);
	}
}

static void test_rail_pick(void **state)
{
	static const struct {
		int ver, dev, channel, nets, gpus, set_idx, set_n;
		enum nccl_netdevs policy;
		int max, out;
		const char *src;
	} rows[] = {
		{ V(2, 16, 5), 3, 0, 2, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.16.5-1 src/graph/topo.cc:706 rr % count" },
		{ V(2, 18, 3), 0, 1, 2, 2, 1, 2, NCCL_NETDEVS_AUTO, 0, 1, "v2.18.3-1 src/graph/topo.cc:736 round robin" },
		/* 8 GPUs, one NIC each: GPU d gets its own NIC */
		{ V(2, 30, 7), 5, 0, 1, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 0, "v2.30.7-1 src/graph/topo.cc:2070" },
		/* 2 GPUs share 4 NICs: mirrored, 2 per GPU */
		{ V(2, 30, 7), 1, 0, 4, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.30.7-1 src/graph/topo.cc:2071 mirrorBits(1,4)=2" },
		{ V(2, 30, 7), 1, 1, 4, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 3, "v2.30.7-1 src/graph/topo.cc:2072 + channel" },
		{ V(2, 30, 7), 0, 1, 4, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.30.7-1 src/graph/topo.cc:2058 DIVUP" },
		/* gpu.dev 5 of a pair: % localGpuCount since 2.30.7 only */
		{ V(2, 30, 7), 5, 0, 2, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.30.7-1 src/graph/topo.cc:2070 % localGpuCount" },
		{ V(2, 29, 7), 5, 0, 4, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.29.7-1 src/graph/topo.cc:1720 no modulo" },
		{ V(2, 30, 7), 5, 0, 4, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.30.7-1 src/graph/topo.cc:2070" },
		{ V(2, 30, 7), 0, 3, 4, 2, 0, 0, NCCL_NETDEVS_ALL, 0, 3, "v2.30.7-1 src/graph/topo.cc:2060 ALL" },
		{ V(2, 30, 7), 0, 3, 4, 1, 0, 0, NCCL_NETDEVS_MAX, 1, 0, "v2.30.7-1 src/graph/topo.cc:2062 MAX:1" },
		{ V(2, 27, 7), 0, 3, 4, 1, 0, 0, NCCL_NETDEVS_MAX, 1, 3, "v2.27.7-1 no NETDEVS_POLICY" },
		{ V(2, 30, 7), 2, 0, 3, 3, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.30.7-1 src/graph/topo.cc:2071 not pow2" },
		{ V(2, 30, 7), 4, 0, 3, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 0, "v2.30.7-1 src/graph/topo.cc:2070 4 % 2" },
		{ V(2, 29, 7), 4, 0, 3, 2, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.29.7-1 src/graph/topo.cc:1720 4 % 3 at the end" },
		/*
		 * nccl-pxn-hgx GPU1 (dev 1): 4 PXN NICs, one GPU nearest the
		 * first of them from the NIC: all 4, one per channel.
		 */
		{ V(2, 21, 5), 1, 0, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.21.5-1 src/graph/topo.cc:830-831 mirrorBits(1,4)=2" },
		{ V(2, 21, 5), 1, 3, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.21.5-1 src/graph/topo.cc:832 DIVUP(4,1)" },
		{ V(2, 23, 4), 1, 2, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 0, "v2.23.4-1 src/graph/topo.cc:921 DIVUP(4,1)" },
		{ V(2, 27, 5), 1, 1, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 3, "v2.27.5-1 src/graph/topo.cc:1512 DIVUP(4,1)" },
		{ V(2, 28, 9), 1, 3, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 1, "v2.28.9-1 src/graph/topo.cc:1655 DIVUP(4,1)" },
		{ V(2, 28, 9), 1, 1, 4, 1, 0, 0, NCCL_NETDEVS_MAX, 1, 2, "v2.28.9-1 src/graph/topo.cc:1659 MAX:1" },
		/* 2.30.7: dev 1 % 1 = 0, so it starts at the first NIC */
		{ V(2, 30, 7), 1, 0, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 0, "v2.30.7-1 src/graph/topo.cc:2070 1 % 1" },
		{ V(2, 30, 7), 1, 3, 4, 1, 0, 0, NCCL_NETDEVS_AUTO, 0, 3, "v2.30.7-1 src/graph/topo.cc:2058 DIVUP(4,1)" },
		/* the old count (5 GPUs list mlx5_0) gave one NIC, and moved the start */
		{ V(2, 30, 7), 1, 3, 4, 5, 0, 0, NCCL_NETDEVS_AUTO, 0, 2, "v2.30.7-1 src/graph/topo.cc:2070 1 % 5 mirrored" },
	};

	for (size_t i = 0; i < N(rows); i++) {
		struct nccl_rail_in in = {
			.ver = rows[i].ver, .gpu_dev = rows[i].dev,
			.channel = rows[i].channel, .local_nets = rows[i].nets,
			.local_gpus = rows[i].gpus,
			.same_set_index = rows[i].set_idx,
			.same_set_count = rows[i].set_n,
			.policy = rows[i].policy, .policy_max = rows[i].max,
		};
		int got = nccl_rail_pick(&in);

		if (got != rows[i].out)
			ROW_FAIL(i, rows[i].src);
		assert_int_equal(got, rows[i].out);
	}
	assert_int_equal(nccl_rail_pick(&(struct nccl_rail_in){
		.ver = V(2, 30, 7), .local_nets = 0, .local_gpus = 1 }), -EINVAL);
}

/*
 * nccl/model.h over typed facts alone, no gate context: two GPUs, each
 * with a PIX NIC and the other's at SYS. Each GPU's rail is its own NIC
 * (ncclTopoGetLocal), GDR is on there (PIX <= the default level) and off
 * on the SYS pairs (above it, not re-routed: not < PHB, 2.21.5+).
 */
static void test_model_paths(void **state)
{
	static const int pair_gpu[4] = { 0, 0, 1, 1 };
	static const int pair_nic[4] = { 0, 1, 0, 1 };
	static const int pair_at[4] = { 0, 1, 2, 3 };
	static const int npeers[2] = { 0, 0 };
	static const int peers[4] = { -1, -1, -1, -1 };
	struct nccl_gpu_facts gpu[2];
	struct nccl_nic_facts nic[2] = { { true, NULL }, { true, NULL } };
	struct nccl_pair_model pm[4];
	struct nccl_node nd;
	int ver = V(2, 30, 7);

	memset(gpu, 0, sizeof(gpu));
	for (int g = 0; g < 2; g++) {
		gpu[g].dev = g;
		gpu[g].cpu_path = NPT_PHB;
		gpu[g].gdr = true;
		gpu[g].cc = 90;
		gpu[g].comm_dmabuf = true;
	}
	memset(pm, 0, sizeof(pm));
	for (int i = 0; i < 4; i++) {
		pm[i].known = pm[i].used = true;
		pm[i].port = 1;
		pm[i].relay = -1;
		pm[i].gid_index = -1;
		pm[i].type = pm[i].net_type = pm[i].pci_type =
			pair_gpu[i] == pair_nic[i] ? NPT_PIX : NPT_SYS;
		pm[i].bw = pm[i].net_bw = 24.0;
		pm[i].bw_gpu_cpu = pm[i].bw_cpu_net = 24.0;
	}
	memset(&nd, 0, sizeof(nd));
	nd.ver = ver;
	nd.ngpu = nd.nnic = 2;
	nd.npair = 4;
	nd.pair_gpu = pair_gpu;
	nd.pair_nic = pair_nic;
	nd.pair_at = pair_at;
	nd.gpu = gpu;
	nd.nic = nic;
	nd.npeers = npeers;
	nd.peers = peers;
	nd.gdr_read = nccl_gdr_read_param(NULL);
	nd.gdr_c2c = nccl_gdr_c2c_default(ver);
	nd.level = nccl_default_gdr_level(ver, nd.gdr_c2c);
	nd.pxn_c2c = nccl_pxn_c2c_default(ver);
	nccl_model_paths(&nd, pm);
	assert_true(pm[0].rail && pm[3].rail);
	assert_false(pm[1].rail || pm[2].rail);
	assert_int_not_equal(pm[0].wr.mode, NCCL_GDR_DISABLED);
	assert_int_not_equal(pm[0].rd.mode, NCCL_GDR_DISABLED);
	assert_int_equal(pm[0].mwr.mech, NCCL_MECH_DMABUF);
	assert_int_equal(pm[1].wr.mode, NCCL_GDR_DISABLED);
	assert_int_equal(pm[1].wr.why, NCCL_GDR_TOO_FAR);
	assert_int_equal(pm[1].type, NPT_SYS);
	assert_int_equal(pm[1].relay, -1);
}

static void test_netdevs_policy(void **state)
{
	int max;

	/* v2.30.7-1 src/graph/topo.cc:2007-2016 */
	assert_int_equal(nccl_netdevs_parse(NULL, &max), NCCL_NETDEVS_AUTO);
	assert_int_equal(nccl_netdevs_parse("all", &max), NCCL_NETDEVS_ALL);
	assert_int_equal(nccl_netdevs_parse("max:2", &max), NCCL_NETDEVS_MAX);
	assert_int_equal(max, 2);
	assert_int_equal(nccl_netdevs_parse("MAX:0", &max), NCCL_NETDEVS_AUTO);
	assert_int_equal(nccl_netdevs_parse("many", &max), NCCL_NETDEVS_AUTO);
}


/* Two ACTIVE ports of one device: fused or not, per release and setting. */
static int fused(int ver, int ports, const char *nics, const char *level,
		 bool mixed)
{
	struct nccl_fusion_in in = {
		.ver = ver, .ports = ports, .merge_nics = nics,
		.merge_level = level, .mixed = mixed,
	};

	return nccl_fused_ports(&in);
}

static void test_port_fusion(void **state)
{
	char name[64];

	(void)state;
	/* No fusion before ncclIbFindMatchingDev (absent at v2.19.4-1). */
	assert_int_equal(fused(NCCL_VER(2, 19, 3), 2, NULL, NULL, false), 1);
	/* v2.20.3-1..v2.23.4-1 net_ib.cc ncclIbInit: 2 per device, off for a
	 * mix of single and multi-port devices or NCCL_IB_MERGE_NICS=0. */
	assert_int_equal(fused(NCCL_VER(2, 20, 3), 2, NULL, NULL, false), 2);
	assert_int_equal(fused(NCCL_VER(2, 23, 4), 4, NULL, NULL, false), 2);
	assert_int_equal(fused(NCCL_VER(2, 23, 4), 2, NULL, NULL, true), 1);
	assert_int_equal(fused(NCCL_VER(2, 21, 5), 2, "0", NULL, false), 1);
	assert_int_equal(fused(NCCL_VER(2, 21, 5), 2, "x", NULL, false), 2);
	/* v2.24.3-1+ topo.cc ncclTopoAutoMerge at NCCL_NET_MERGE_LEVEL
	 * (default PORT; LOC or an unknown name: PATH_LOC), 4 per NIC, 8
	 * from v2.30.3-1 (net_v12.h); the mix rule is gone. */
	assert_int_equal(fused(NCCL_VER(2, 24, 3), 2, NULL, NULL, true), 2);
	assert_int_equal(fused(NCCL_VER(2, 28, 9), 2, NULL, "LOC", false), 1);
	assert_int_equal(fused(NCCL_VER(2, 28, 9), 2, NULL, "bogus", false), 1);
	assert_int_equal(fused(NCCL_VER(2, 28, 9), 2, NULL, "PIX", false), 2);
	assert_int_equal(fused(NCCL_VER(2, 28, 9), 6, NULL, NULL, false), 4);
	assert_int_equal(fused(NCCL_VER(2, 30, 7), 6, NULL, NULL, false), 6);
	/* v2.30.7-1 net_ib/init.cc:198: makeVDevice refuses. */
	assert_int_equal(fused(NCCL_VER(2, 30, 7), 2, "0", NULL, false), 1);
	assert_int_equal(fused(NCCL_VER(2, 30, 7), 1, NULL, NULL, false), 1);
	nccl_fused_name(name, sizeof(name), "mlx5_0", 2);
	assert_string_equal(name, "mlx5_0+mlx5_0");
	nccl_fused_name(name, 10, "mlx5_0", 2);
	assert_string_equal(name, "mlx5_0+ml");
}


/*
 * nccl/netdev.c over typed port facts: the port NCCL opens (link layer,
 * ACTIVE unless as built, NCCL_IB_HCA), the PCI identity ncclIbGetPciPath
 * takes, and fusion of two functions of one identity (2.28.9: one device
 * "mlx5_0+mlx5_1" at both ports' speed; 2.19.3: none).
 */
static void test_netdev(void **state)
{
	struct nccl_port_facts p0 = { 1, NCCL_LINK_IB, true, 1, true,
				      "400 Gb/sec (4X NDR)" };
	struct nccl_port_facts p1 = { 1, NCCL_LINK_IB, true, 4, true,
				      "400 Gb/sec (4X NDR)" };
	struct nccl_port_facts efa = { 1, NCCL_LINK_OTHER, false, 0, false, "" };
	struct nccl_nic_ports nics[2] = {
		{ "mlx5_0", &p0, 1, "/sys/devices/pci0000:00/0000:00:01.0/0000:17:00.0", false },
		{ "mlx5_1", &p1, 1, "/sys/devices/pci0000:00/0000:00:01.0/0000:17:01.1", false },
	};
	struct nccl_settings set;
	struct nccl_fusion fu[2];
	struct nccl_fuse_in in = { NCCL_VER(2, 28, 9), &set, false, NULL, NULL,
				   NULL, nics, 2 };
	char id[64];
	long st;

	(void)state;
	memset(&set, 0, sizeof(set));
	assert_int_equal(nccl_link_of("Ethernet"), NCCL_LINK_ETH);
	assert_int_equal(nccl_link_of("Unknown"), NCCL_LINK_OTHER);
	assert_true(nccl_port_state_of("4: ACTIVE", &st) && st == 4);
	assert_false(nccl_port_state_of("ACTIVE", &st));
	/* mlx5_0's port is DOWN: not opened now, opened as built. */
	assert_int_equal(nccl_first_port(&set, &nics[0], false), -1);
	assert_int_equal(nccl_first_port(&set, &nics[0], true), 1);
	assert_true(nccl_ports_down(&set, nics, 2));
	assert_false(nccl_port_listed(&set, "efa_0", &efa));
	assert_int_equal(nccl_hca_parse(NCCL_VER(2, 28, 9), "mlx5_1", &set.hca), 0);
	set.hca_set = true;
	assert_false(nccl_ports_down(&set, nics, 2));
	/* mlx5_1's port is ACTIVE, but the device does not open: ncclIbInit
	 * skips it now; as built it is there. */
	assert_int_equal(nccl_first_port(&set, &nics[1], false), 1);
	nics[1].open_fails = true;
	assert_int_equal(nccl_first_port(&set, &nics[1], false), -1);
	assert_int_equal(nccl_first_port(&set, &nics[1], true), 1);
	assert_true(nccl_ports_down(&set, nics, 2));
	nics[1].open_fails = false;
	set.hca_set = false;
	/* Function digit 0; the device digits too unless MERGE_VFS=0. */
	nccl_pci_identity(nics[1].real, NULL, id, sizeof(id));
	assert_string_equal(id, "/sys/devices/pci0000:00/0000:00:01.0/0000:17:00.0");
	nccl_pci_identity(nics[1].real, "0", id, sizeof(id));
	assert_string_equal(id, "/sys/devices/pci0000:00/0000:00:01.0/0000:17:01.0");
	nccl_pci_identity("", NULL, id, sizeof(id));
	assert_string_equal(id, "");
	in.as_built = true;
	nccl_fuse(&in, fu);
	assert_int_equal(fu[0].lead, 0);
	assert_int_equal(fu[1].lead, 0);
	assert_int_equal(fu[0].ports, 2);
	assert_string_equal(fu[0].name, "mlx5_0+mlx5_1");
	assert_true(fu[0].mbps == 800000);
	in.ver = NCCL_VER(2, 19, 3);
	nccl_fuse(&in, fu);
	assert_int_equal(fu[1].lead, 1);
	assert_int_equal(fu[0].ports, 1);
	assert_int_equal(nccl_addr_family(NCCL_VER(2, 21, 5), "AF_INET6"),
			 NCCL_AF_INET6);
	assert_int_equal(nccl_addr_family(NCCL_VER(2, 20, 3), "AF_INET6"),
			 NCCL_AF_INET);
	assert_int_equal(nccl_gid_type_of("RoCE v2"), 2);
	assert_int_equal(nccl_gid_type_of("IB/RoCE v1"), 1);
}

/* ncclTopoAddC2c's findLocalCpu: no came-from check from v2.19.3-1 (where
 * ncclTopoAddC2c appears) to v2.26.1 (topo.cc:47-58 at v2.21.5-1); v2.26.2-1
 * topo.cc:48-62 passes `from` and follows switches only. */
static void test_local_cpu_search(void **state)
{
	(void)state;
	assert_false(nccl_local_cpu_search_circles(NCCL_VER(2, 18, 6)));
	assert_true(nccl_local_cpu_search_circles(NCCL_VER(2, 19, 3)));
	assert_true(nccl_local_cpu_search_circles(NCCL_VER(2, 23, 4)));
	assert_true(nccl_local_cpu_search_circles(NCCL_VER(2, 25, 1)));
	assert_false(nccl_local_cpu_search_circles(NCCL_VER(2, 26, 2)));
	assert_false(nccl_local_cpu_search_circles(NCCL_VER(2, 30, 7)));
}

/* --- configuration files -------------------------------------------------------------- */

struct conf_tree {
	char root[64];
};

static void put_file(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int conf_setup(void **state)
{
	struct conf_tree *t = calloc(1, sizeof(*t));
	char p[PATH_MAX];

	if (!t)
		return -1;
	snprintf(t->root, sizeof(t->root), "/tmp/gdrcheck-nccl-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	snprintf(p, sizeof(p), "%s/etc", t->root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/home", t->root);
	mkdir(p, 0755);
	sysroot_set(sr, t->root);
	*state = t;
	return 0;
}

static int conf_teardown(void **state)
{
	struct conf_tree *t = *state;
	const char *rel[] = { "/etc/nccl.conf", "/home/.nccl.conf",
			      "/home/my.conf", "/etc", "/home", "" };
	char p[PATH_MAX];

	sysroot_set(sr, NULL);
	for (size_t i = 0; i < N(rel); i++) {
		snprintf(p, sizeof(p), "%s%s", t->root, rel[i]);
		remove(p);
	}
	free(t);
	return 0;
}

static void test_conf_precedence(void **state)
{
	struct conf_tree *t = *state;
	const char *env[] = { "HOME=/home", "NCCL_IB_HCA=mlx5_0", NULL };
	struct nccl_conf c;
	enum nccl_conf_src src;
	int line;

	/* v2.30.7-1 src/misc/param.cc:61,65 home file, then /etc */
	put_file(t->root, "/home/.nccl.conf",
		 "NCCL_NET_GDR_LEVEL=PHB\nNCCL_NET_GDR_LEVEL=SYS\nNCCL_IB_HCA=mlx5_9\n");
	put_file(t->root, "/etc/nccl.conf",
		 "NCCL_NET_GDR_LEVEL=PIX\nNCCL_DMABUF_ENABLE=0\n");
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 30, 7), env), 0);
	/* v2.30.7-1 src/os/linux.cc:107 setenv(.., 0): env wins */
	assert_string_equal(nccl_conf_get(&c, "NCCL_IB_HCA", &src, &line), "mlx5_0");
	assert_int_equal(src, NCCL_SRC_ENV);
	/* the first line of the first file wins */
	assert_string_equal(nccl_conf_get(&c, "NCCL_NET_GDR_LEVEL", &src, &line), "PHB");
	assert_int_equal(src, NCCL_SRC_HOME_FILE);
	assert_int_equal(line, 1);
	assert_string_equal(nccl_conf_get(&c, "NCCL_DMABUF_ENABLE", &src, &line), "0");
	assert_int_equal(src, NCCL_SRC_SYSTEM_FILE);
	assert_int_equal(line, 2);
	/* setenv(.., 0) stores nothing for a set name: two values stored */
	assert_int_equal(c.n, 2);
	assert_null(nccl_conf_get(&c, "NCCL_IB_DISABLE", &src, &line));
	assert_int_equal(src, NCCL_SRC_UNSET);
	assert_int_equal(c.file[0].err, 0);
	assert_int_equal(c.file[1].err, 0);
	nccl_conf_free(&c);
}

static void test_conf_file_variable(void **state)
{
	struct conf_tree *t = *state;
	const char *env[] = { "HOME=/home", "NCCL_CONF_FILE=/home/my.conf", NULL };
	const char *env_empty[] = { "HOME=/home", "NCCL_CONF_FILE=", NULL };
	struct nccl_conf c;
	enum nccl_conf_src src;

	put_file(t->root, "/home/.nccl.conf", "NCCL_IB_HCA=home\n");
	put_file(t->root, "/home/my.conf", "NCCL_IB_HCA=mine\n");
	put_file(t->root, "/etc/nccl.conf", "NCCL_IB_HCA=etc\n");
	/* v2.30.7-1 src/misc/param.cc:54 NCCL_CONF_FILE replaces ~/.nccl.conf */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 23, 4), env), 0);
	assert_string_equal(nccl_conf_get(&c, "NCCL_IB_HCA", &src, NULL), "mine");
	assert_int_equal(src, NCCL_SRC_CONF_FILE);
	nccl_conf_free(&c);
	/* v2.22.3-1 src/misc/param.cc:55 no NCCL_CONF_FILE yet */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 22, 3), env), 0);
	assert_string_equal(nccl_conf_get(&c, "NCCL_IB_HCA", &src, NULL), "home");
	assert_int_equal(src, NCCL_SRC_HOME_FILE);
	nccl_conf_free(&c);
	/* strlen(userFile) > 0: an empty NCCL_CONF_FILE is ignored */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 30, 7), env_empty), 0);
	assert_string_equal(nccl_conf_get(&c, "NCCL_IB_HCA", NULL, NULL), "home");
	nccl_conf_free(&c);
	/* a missing file is skipped (fopen NULL), not an error */
	{
		const char *env_missing[] = { "NCCL_CONF_FILE=/home/none.conf", NULL };

		assert_int_equal(nccl_conf_load(&c, sr, V(2, 30, 7), env_missing), 0);
		assert_int_equal(c.file[0].err, -ENOENT);
		assert_string_equal(nccl_conf_get(&c, "NCCL_IB_HCA", &src, NULL), "etc");
		assert_int_equal(src, NCCL_SRC_SYSTEM_FILE);
		nccl_conf_free(&c);
	}
}

static void test_conf_lines(void **state)
{
	struct conf_tree *t = *state;
	const char *env[] = { "HOME=/home", NULL };
	struct nccl_conf c;

	put_file(t->root, "/home/.nccl.conf",
		 "#NCCL_A=1\n"
		 "NCCL_B = 2\n"
		 "NCCL_C=3\r\n"
		 "no equals sign\n"
		 "=novar\n"
		 "NCCL_D=x=y\n"
		 "NCCL_E=\n"
		 "NCCL_F=last");
	put_file(t->root, "/etc/nccl.conf", "");
	/* v2.30.7-1 src/misc/param.cc:37-38 '\r' stripped, '#' skipped */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 30, 7), env), 0);
	assert_null(nccl_conf_get(&c, "#NCCL_A", NULL, NULL));
	assert_null(nccl_conf_get(&c, "NCCL_B", NULL, NULL));
	assert_string_equal(nccl_conf_get(&c, "NCCL_B ", NULL, NULL), " 2");
	assert_string_equal(nccl_conf_get(&c, "NCCL_C", NULL, NULL), "3");
	assert_string_equal(nccl_conf_get(&c, "NCCL_D", NULL, NULL), "x=y");
	assert_string_equal(nccl_conf_get(&c, "NCCL_E", NULL, NULL), "");
	assert_string_equal(nccl_conf_get(&c, "NCCL_F", NULL, NULL), "last");
	assert_null(nccl_conf_get(&c, "", NULL, NULL));
	nccl_conf_free(&c);
	/* v2.29.7-1 src/misc/param.cc:42 only '\n'; no '#' test before 2.26.2 */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 29, 7), env), 0);
	assert_string_equal(nccl_conf_get(&c, "NCCL_C", NULL, NULL), "3\r");
	assert_null(nccl_conf_get(&c, "#NCCL_A", NULL, NULL));
	nccl_conf_free(&c);
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 25, 1), env), 0);
	assert_string_equal(nccl_conf_get(&c, "#NCCL_A", NULL, NULL), "1");
	nccl_conf_free(&c);
}

static void test_conf_long_line(void **state)
{
	struct conf_tree *t = *state;
	const char *env[] = { "HOME=/home", NULL };
	static char text[6000];
	struct nccl_conf c;
	size_t pos;

	/* A 4100-byte value: fgets(4096) splits it (2.30.3+), getline not. */
	pos = (size_t)snprintf(text, sizeof(text), "NCCL_LONG=");
	memset(text + pos, 'v', 4090);
	pos += 4090;
	pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "NCCL_TAIL=1\n");
	put_file(t->root, "/home/.nccl.conf", text);
	put_file(t->root, "/etc/nccl.conf", "");
	/* v2.30.7-1 src/misc/param.cc:34 the piece after 4095 bytes is a line */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 30, 7), env), 0);
	assert_int_equal(strlen(nccl_conf_get(&c, "NCCL_LONG", NULL, NULL)), 1023);
	assert_non_null(nccl_conf_get(&c, "vvvvvNCCL_TAIL", NULL, NULL));
	nccl_conf_free(&c);
	/* v2.29.7-1 getline: one line, value cut at 1023 (param.cc strncpy) */
	assert_int_equal(nccl_conf_load(&c, sr, V(2, 29, 7), env), 0);
	assert_int_equal(strlen(nccl_conf_get(&c, "NCCL_LONG", NULL, NULL)), 1023);
	assert_null(nccl_conf_get(&c, "vvvvvNCCL_TAIL", NULL, NULL));
	nccl_conf_free(&c);
}

#define CONF_TEST(f) cmocka_unit_test_setup_teardown(f, conf_setup, conf_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_codes),
		cmocka_unit_test(test_parse_level),
		cmocka_unit_test(test_parse_param),
		cmocka_unit_test(test_gdr_read_param),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_gdr_decide),
		cmocka_unit_test(test_gdr_support_and_errors),
		cmocka_unit_test(test_gpu_cpu_path),
		cmocka_unit_test(test_p2c_path),
		cmocka_unit_test(test_nogdr_path),
		cmocka_unit_test(test_pxn),
		cmocka_unit_test(test_dmabuf),
		cmocka_unit_test(test_mechanism),
		cmocka_unit_test(test_hca),
		cmocka_unit_test(test_hca_fields_and_limits),
		cmocka_unit_test(test_net_name),
		cmocka_unit_test(test_gid_classes),
		cmocka_unit_test(test_gid_index),
		cmocka_unit_test(test_data_direct),
		cmocka_unit_test(test_cumem),
		cmocka_unit_test(test_bcm),
		cmocka_unit_test(test_pci_bw),
		cmocka_unit_test(test_ib_speed),
		cmocka_unit_test(test_cpu_path),
		cmocka_unit_test(test_local_nets),
		cmocka_unit_test(test_net_local_gpus),
		cmocka_unit_test(test_rewrite_net_side),
		cmocka_unit_test(test_rail_pick),
		cmocka_unit_test(test_netdevs_policy),
		cmocka_unit_test(test_port_fusion),
		cmocka_unit_test(test_netdev),
		cmocka_unit_test(test_local_cpu_search),
		cmocka_unit_test(test_model_paths),
		CONF_TEST(test_conf_precedence),
		CONF_TEST(test_conf_file_variable),
		CONF_TEST(test_conf_lines),
		CONF_TEST(test_conf_long_line),
	};

	int failed;

	sr = sysroot_new(NULL);
	if (!sr)
		return 1;
	failed = cmocka_run_group_tests_name("nccl", tests, NULL, NULL);
	sysroot_free(sr);
	return failed;
}
