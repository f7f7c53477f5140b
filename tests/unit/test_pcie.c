// SPDX-License-Identifier: MIT
/*
 * Unit tests for the config space decoders and the PCIe tree classifier in
 * decode/pcie.h. Config space is built byte by byte the way
 * tests/scenarios/mksysroot.py's config() lays it out: type-1 header for
 * bridges, cap-list status bit, PCI Express capability at 0x40 (the only
 * standard one), AER at 0x100 and, optionally, ACS at 0x148.
 *
 * Every walk is handed a heap buffer of exactly the length it is told, so a
 * read past the end shows under `make sanitize`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode/pcie.h"

#define CFG_SIZE 4096

/* --- config space builders ----------------------------------------------- */

static void put16(uint8_t *cfg, size_t off, uint16_t v)
{
	cfg[off] = (uint8_t)v;
	cfg[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *cfg, size_t off, uint32_t v)
{
	put16(cfg, off, (uint16_t)v);
	put16(cfg, off + 2, (uint16_t)(v >> 16));
}

/* An extended capability header: id, version, next. */
static uint32_t ext_hdr(uint16_t id, unsigned int ver, unsigned int next)
{
	return (uint32_t)id | (uint32_t)ver << 16 | (uint32_t)next << 20;
}

/*
 * mksysroot.py's config(): ptype 0x4/0x5/0x6 makes a bridge (class 0x060400,
 * header type 1, bus numbers), 0x0 an endpoint (class 0x030200). acs < 0:
 * AER is the last extended capability; otherwise AER -> ACS at 0x148 with
 * capability 0x005f and control acs.
 */
static void mkcfg(uint8_t *cfg, int ptype, int acs)
{
	bool bridge = ptype == PCIE_TYPE_ROOT_PORT || ptype == PCIE_TYPE_UPSTREAM ||
		      ptype == PCIE_TYPE_DOWNSTREAM;
	uint32_t cls = bridge ? 0x060400 : 0x030200;

	memset(cfg, 0, CFG_SIZE);
	put16(cfg, 0x00, bridge ? 0x1000 : 0x10de);
	put16(cfg, 0x02, bridge ? 0xc030 : 0x2330);
	put16(cfg, 0x04, 0x0006);			/* mem + master */
	put16(cfg, 0x06, 0x0010);			/* cap list */
	cfg[0x08] = 0x01;
	cfg[0x09] = (uint8_t)cls;
	cfg[0x0a] = (uint8_t)(cls >> 8);
	cfg[0x0b] = (uint8_t)(cls >> 16);
	cfg[0x0e] = bridge ? 0x01 : 0x00;
	if (bridge) {
		cfg[0x18] = 0x03;
		cfg[0x19] = 0x04;
		cfg[0x1a] = 0x04;
	}
	cfg[0x34] = 0x40;
	cfg[0x40] = PCI_CAP_ID_EXP;
	cfg[0x41] = 0x00;
	put16(cfg, 0x42, (uint16_t)(0x0002 | ptype << 4 |
				    (ptype == 0x4 || ptype == 0x6 ? 0x100 : 0)));
	put32(cfg, 0x4c, 5 | 16 << 4);			/* 32 GT/s x16 */
	put16(cfg, 0x52, 5 | 16 << 4);
	put32(cfg, 0x100, ext_hdr(0x0001, 2, acs >= 0 ? 0x148 : 0));
	if (acs >= 0) {
		put32(cfg, 0x148, ext_hdr(PCI_EXT_CAP_ID_ACS_, 1, 0));
		put16(cfg, 0x14c, 0x005f);
		put16(cfg, 0x14e, (uint16_t)acs);
	}
}

/* The walks on an exact-length copy of the first len bytes of cfg. */
static uint8_t *exact(const uint8_t *cfg, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	assert_non_null(b);
	memcpy(b, cfg, len);
	return b;
}

static int find_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
	uint8_t *b = exact(cfg, len);
	int r = pci_find_cap(b, len, id);

	free(b);
	return r;
}

static int find_ext(const uint8_t *cfg, size_t len, uint16_t id)
{
	uint8_t *b = exact(cfg, len);
	int r = pci_find_ext_cap(b, len, id);

	free(b);
	return r;
}

static int port_type(const uint8_t *cfg, size_t len)
{
	uint8_t *b = exact(cfg, len);
	int r = pcie_port_type(b, len);

	free(b);
	return r;
}

static int read_acs(const uint8_t *cfg, size_t len, struct acs_regs *acs)
{
	uint8_t *b = exact(cfg, len);
	int r;

	/* Garbage in: the result must be fully written. */
	memset(acs, 0xa5, sizeof(*acs));
	r = pcie_read_acs(b, len, acs);
	free(b);
	return r;
}

/* --- pci_find_cap ---------------------------------------------------------- */

static void test_cap_real_bridge(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_ROOT_PORT, 0);
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), 0x40);
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), 0x40);
	/* The walk needs id and next only. */
	assert_int_equal(find_cap(cfg, 0x42, PCI_CAP_ID_EXP), 0x40);
	assert_int_equal(find_cap(cfg, 0x41, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	/* A capability not on the list. */
	assert_int_equal(find_cap(cfg, CFG_SIZE, 0x05), PCIE_NOT_FOUND);
	assert_int_equal(find_cap(cfg, CFG_SIZE, 0x01), PCIE_NOT_FOUND);
}

static void test_cap_chain(void **state)
{
	uint8_t cfg[CFG_SIZE];

	/* PM at 0x40 -> MSI at 0x50 -> PCIe at 0x70; low pointer bits ignored. */
	mkcfg(cfg, PCIE_TYPE_UPSTREAM, -1);
	cfg[0x34] = 0x43;
	cfg[0x40] = 0x01;
	cfg[0x41] = 0x52;
	cfg[0x50] = 0x05;
	cfg[0x51] = 0x71;
	cfg[0x70] = PCI_CAP_ID_EXP;
	cfg[0x71] = 0x00;
	put16(cfg, 0x72, 0x0002 | PCIE_TYPE_UPSTREAM << 4);
	assert_int_equal(find_cap(cfg, 256, 0x01), 0x40);
	assert_int_equal(find_cap(cfg, 256, 0x05), 0x50);
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), 0x70);
	assert_int_equal(find_cap(cfg, 256, 0x11), PCIE_NOT_FOUND);
	assert_int_equal(port_type(cfg, 256), PCIE_TYPE_UPSTREAM);
}

static void test_cap_no_list(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, 0, -1);
	put16(cfg, 0x06, 0x0000);		/* pointer still at 0x40 */
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NO_LIST);
	/* Other status bits do not stand in for the cap-list bit. */
	put16(cfg, 0x06, 0xffef);
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NO_LIST);
	put16(cfg, 0x06, 0x0010);
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), 0x40);
}

static void test_cap_loop(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, 0, -1);
	cfg[0x40] = 0x01;
	cfg[0x41] = 0x50;
	cfg[0x50] = 0x05;
	cfg[0x51] = 0x40;
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), PCIE_LOOP);
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_LOOP);
	/* Found before the loop closes. */
	assert_int_equal(find_cap(cfg, 256, 0x05), 0x50);
	/* Self loop. */
	cfg[0x41] = 0x40;
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), PCIE_LOOP);
	/* A loop at the top of the 256 bytes: 0xfc -> 0xf8 -> 0xfc. */
	cfg[0x34] = 0xfc;
	cfg[0xfc] = 0x09;
	cfg[0xfd] = 0xf8;
	cfg[0xf8] = 0x09;
	cfg[0xf9] = 0xfc;
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), PCIE_LOOP);
}

static void test_cap_into_header(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, 0, -1);
	cfg[0x34] = 0x20;
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	cfg[0x34] = 0x3c;
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	/* A later next pointer into the header. */
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x01;
	cfg[0x41] = 0x3c;
	cfg[0x3c] = PCI_CAP_ID_EXP;	/* must not be taken */
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	/* Pointer 0: an empty list. */
	cfg[0x34] = 0x00;
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	cfg[0x34] = 0x03;		/* masks to 0 */
	assert_int_equal(find_cap(cfg, CFG_SIZE, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
}

static void test_cap_past_buffer(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, 0, -1);
	cfg[0x34] = 0xf0;
	cfg[0xf0] = PCI_CAP_ID_EXP;
	assert_int_equal(find_cap(cfg, 0x80, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	assert_int_equal(find_cap(cfg, 0xf1, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	assert_int_equal(find_cap(cfg, 0xf2, PCI_CAP_ID_EXP), 0xf0);
	/* A next pointer past the end, after a good element. */
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x01;
	cfg[0x41] = 0x80;
	cfg[0x80] = PCI_CAP_ID_EXP;
	assert_int_equal(find_cap(cfg, 0x80, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	assert_int_equal(find_cap(cfg, 0x80, 0x01), 0x40);
	assert_int_equal(find_cap(cfg, 0x82, PCI_CAP_ID_EXP), 0x80);
}

static void test_cap_64_bytes(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	/* What an unprivileged read of sysfs config gives: the header only. */
	assert_int_equal(find_cap(cfg, 64, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	assert_int_equal(find_cap(cfg, 63, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	assert_int_equal(find_cap(cfg, 0, PCI_CAP_ID_EXP), PCIE_TRUNCATED);
	cfg[0x34] = 0x00;
	assert_int_equal(find_cap(cfg, 64, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	put16(cfg, 0x06, 0x0000);
	assert_int_equal(find_cap(cfg, 64, PCI_CAP_ID_EXP), PCIE_NO_LIST);
	assert_int_equal(port_type(cfg, 64), -1);
}

static void test_cap_id_ff(void **state)
{
	uint8_t cfg[CFG_SIZE];

	/* 0xff reads as "no device": the walk stops there. */
	mkcfg(cfg, 0, -1);
	cfg[0x40] = 0xff;
	cfg[0x41] = 0x50;
	cfg[0x50] = PCI_CAP_ID_EXP;
	cfg[0x51] = 0x00;
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	assert_int_equal(find_cap(cfg, 256, 0xff), PCIE_NOT_FOUND);
	/* All-ones config space (a device gone): no loop, no hit. */
	memset(cfg, 0xff, 256);
	assert_int_equal(find_cap(cfg, 256, PCI_CAP_ID_EXP), PCIE_NOT_FOUND);
	assert_int_equal(port_type(cfg, 256), -1);
}

/* --- pci_find_ext_cap ------------------------------------------------------ */

static void test_ext_aer_acs(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0x001d);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0001), 0x100);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), 0x148);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0010), PCIE_NOT_FOUND);
	assert_int_equal(find_ext(cfg, 0x14c, PCI_EXT_CAP_ID_ACS_), 0x148);
	assert_int_equal(find_ext(cfg, 0x14b, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 0x14b, 0x0001), 0x100);
	/* The version nibble is not part of the id. */
	put32(cfg, 0x148, ext_hdr(PCI_EXT_CAP_ID_ACS_, 0xf, 0));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), 0x148);
	/* Without ACS, AER ends the list. */
	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
}

static void test_ext_no_list(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0);
	put32(cfg, 0x100, 0);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NO_LIST);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0000), PCIE_NO_LIST);
	put32(cfg, 0x100, 0xffffffff);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NO_LIST);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0xffff), PCIE_NO_LIST);
	/* A 0 or all-ones header later in the list ends it: not found. */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x148));
	put32(cfg, 0x148, 0);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
	put32(cfg, 0x148, 0xffffffff);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
}

static void test_ext_loops(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	/* mksysroot cfg=loop: AER's next pointer leads back to itself. */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x100));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_LOOP);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0001), 0x100);
	/* Two elements: 0x100 -> 0x148 -> 0x100. */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x148));
	put32(cfg, 0x148, ext_hdr(0x0019, 1, 0x100));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_LOOP);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0019), 0x148);
	/* A loop at the very top: 0xffc -> 0xff8 -> 0xffc. */
	put32(cfg, 0x148, ext_hdr(0x0019, 1, 0xffc));
	put32(cfg, 0xffc, ext_hdr(0x000b, 1, 0xff8));
	put32(cfg, 0xff8, ext_hdr(0x000b, 1, 0xffc));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_LOOP);
}

static void test_ext_garbage(void **state)
{
	static const size_t lens[] = { 0x100, 0x101, 0x104, 0x200, 0xa5c, 0xffc,
				       0xfff, CFG_SIZE };
	uint8_t cfg[CFG_SIZE];

	/* mksysroot cfg=garbage: every header reads 0xa5a5a5a5. */
	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0);
	memset(cfg + 0x100, 0xa5, CFG_SIZE - 0x100);
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_LOOP);
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0x0001), PCIE_LOOP);
	/* id 0xa5a5 is at 0x100 by construction. */
	assert_int_equal(find_ext(cfg, CFG_SIZE, 0xa5a5), 0x100);
	/* next = 0xa58: in range of 4096, out of range of 0x200. */
	assert_int_equal(find_ext(cfg, 0x200, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);

	/* Every fill byte, several lengths: each walk ends with a sane answer. */
	for (unsigned int fill = 0; fill < 256; fill++) {
		memset(cfg + 0x100, (int)fill, CFG_SIZE - 0x100);
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			int r = find_ext(cfg, lens[i], PCI_EXT_CAP_ID_ACS_);

			if (r >= 0) {
				assert_in_range(r, 0x100, lens[i] - 4);
				assert_int_equal(cfg[r] | cfg[r + 1] << 8,
						 PCI_EXT_CAP_ID_ACS_);
			} else {
				assert_in_range(r, PCIE_NO_LIST, PCIE_NOT_FOUND);
			}
		}
	}
}

static void test_ext_random(void **state)
{
	uint8_t cfg[CFG_SIZE];
	uint32_t x = 0x12345678;

	/* Fixed-seed random lists: terminate, stay in bounds, never lie. */
	for (int iter = 0; iter < 3000; iter++) {
		size_t len;
		int r;

		memset(cfg, 0, sizeof(cfg));
		for (size_t off = 0x100; off < CFG_SIZE; off += 4) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			/* Mostly small ids, so some walks hit ACS. */
			put32(cfg, off, (x & 0xfff00000) | ((x >> 4) & 0xf) << 16 |
				       ((x & 0xf) == 0 ? PCI_EXT_CAP_ID_ACS_ : (x & 0x1f)));
		}
		len = 0x100 + (size_t)(iter * 7) % (CFG_SIZE - 0x100 + 1);
		r = find_ext(cfg, len, PCI_EXT_CAP_ID_ACS_);
		if (r >= 0) {
			assert_in_range(r, 0x100, len - 4);
			assert_int_equal(r % 4, 0);
			assert_int_equal(cfg[r] | cfg[r + 1] << 8, PCI_EXT_CAP_ID_ACS_);
		} else {
			assert_in_range(r, PCIE_NO_LIST, PCIE_NOT_FOUND);
		}
	}
}

static void test_ext_next_below_100(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	cfg[0x40] = 0x0d;		/* would match if the walk went there */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x0fc));
	put32(cfg, 0x0fc, ext_hdr(PCI_EXT_CAP_ID_ACS_, 1, 0));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x040));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
	/* The low two bits of next are reserved: 0x14b walks to 0x148. */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x14b));
	put32(cfg, 0x148, ext_hdr(PCI_EXT_CAP_ID_ACS_, 1, 0));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), 0x148);
}

static void test_ext_short_buffers(void **state)
{
	uint8_t cfg[CFG_SIZE];

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0);
	assert_int_equal(find_ext(cfg, 256, PCI_EXT_CAP_ID_ACS_), PCIE_NO_LIST);
	assert_int_equal(find_ext(cfg, 255, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 64, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 0, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	/* Partway into the first header. */
	assert_int_equal(find_ext(cfg, 0x101, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 0x103, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 0x104, 0x0001), 0x100);
	/* mksysroot cfg=truncated: 0x130 bytes, ACS at 0x148 beyond. */
	assert_int_equal(find_ext(cfg, 0x130, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
}

static void test_ext_last_dword(void **state)
{
	uint8_t cfg[CFG_SIZE];
	struct acs_regs acs;

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0xffc));
	put32(cfg, 0xffc, ext_hdr(PCI_EXT_CAP_ID_ACS_, 1, 0));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), 0xffc);
	assert_int_equal(find_ext(cfg, 0x200, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	assert_int_equal(find_ext(cfg, 0xfff, PCI_EXT_CAP_ID_ACS_), PCIE_TRUNCATED);
	/* Last element, not the one sought. */
	put32(cfg, 0xffc, ext_hdr(0x000b, 1, 0));
	assert_int_equal(find_ext(cfg, CFG_SIZE, PCI_EXT_CAP_ID_ACS_), PCIE_NOT_FOUND);
	/* ACS header in the last dword: registers past the buffer. */
	put32(cfg, 0xffc, ext_hdr(PCI_EXT_CAP_ID_ACS_, 1, 0));
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), PCIE_TRUNCATED);
	assert_false(acs.present);
}

static void test_walk_error(void **state)
{
	assert_string_equal(pcie_walk_error(PCIE_NOT_FOUND), "not present");
	assert_string_equal(pcie_walk_error(PCIE_TRUNCATED), "config space truncated");
	assert_string_equal(pcie_walk_error(PCIE_LOOP), "capability list loops");
	assert_string_equal(pcie_walk_error(PCIE_NO_LIST), "no capability list");
	assert_string_equal(pcie_walk_error(0), "ok");
	assert_string_equal(pcie_walk_error(0x148), "ok");
}

/* --- pcie_port_type -------------------------------------------------------- */

static void test_port_type(void **state)
{
	uint8_t cfg[CFG_SIZE];
	static const int types[] = { 0x0, 0x1, PCIE_TYPE_ROOT_PORT,
				     PCIE_TYPE_UPSTREAM, PCIE_TYPE_DOWNSTREAM,
				     0x7, 0x8, 0x9, 0xa };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		mkcfg(cfg, types[i], -1);
		assert_int_equal(port_type(cfg, CFG_SIZE), types[i]);
		assert_int_equal(port_type(cfg, 256), types[i]);
		assert_int_equal(port_type(cfg, 0x44), types[i]);
		assert_int_equal(port_type(cfg, 0x43), -1);
	}
	/* The other bits of the capabilities register do not leak in. */
	mkcfg(cfg, 0, -1);
	put16(cfg, 0x42, 0xff0f | PCIE_TYPE_DOWNSTREAM << 4);
	assert_int_equal(port_type(cfg, 256), PCIE_TYPE_DOWNSTREAM);
	/* No PCIe capability: a conventional PCI device with PM only. */
	mkcfg(cfg, 0, -1);
	cfg[0x40] = 0x01;
	assert_int_equal(port_type(cfg, 256), -1);
	mkcfg(cfg, 0, -1);
	put16(cfg, 0x06, 0);
	assert_int_equal(port_type(cfg, 256), -1);
	/* The capability at 0xfc: its register at 0xfe is the last word. */
	mkcfg(cfg, 0, -1);
	cfg[0x34] = 0xfc;
	cfg[0xfc] = PCI_CAP_ID_EXP;
	cfg[0xfd] = 0x00;
	put16(cfg, 0xfe, PCIE_TYPE_ROOT_PORT << 4);
	assert_int_equal(port_type(cfg, 256), PCIE_TYPE_ROOT_PORT);
	assert_int_equal(port_type(cfg, 0xfe), -1);

	assert_string_equal(pcie_port_type_name(0x0), "endpoint");
	assert_string_equal(pcie_port_type_name(PCIE_TYPE_ROOT_PORT), "root port");
	assert_string_equal(pcie_port_type_name(PCIE_TYPE_UPSTREAM), "upstream port");
	assert_string_equal(pcie_port_type_name(PCIE_TYPE_DOWNSTREAM), "downstream port");
	assert_string_equal(pcie_port_type_name(-1), "unknown");
	assert_string_equal(pcie_port_type_name(0xb), "unknown");
}

/* --- pcie_read_acs / acs_bits_string -------------------------------------- */

static void test_read_acs(void **state)
{
	uint8_t cfg[CFG_SIZE];
	struct acs_regs acs;

	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0x001d);
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), 0);
	assert_true(acs.present);
	assert_int_equal(acs.cap, 0x005f);
	assert_int_equal(acs.ctrl, 0x001d);
	assert_int_equal(read_acs(cfg, 0x150, &acs), 0);
	assert_true(acs.present);
	assert_int_equal(acs.ctrl, 0x001d);

	/* Absent: the list ends, or there is no extended space. */
	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, -1);
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), 0);
	assert_false(acs.present);
	assert_int_equal(acs.cap, 0);
	assert_int_equal(acs.ctrl, 0);
	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0x001d);
	assert_int_equal(read_acs(cfg, 256, &acs), 0);
	assert_false(acs.present);
	put32(cfg, 0x100, 0xffffffff);
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), 0);
	assert_false(acs.present);

	/* Truncated right after the header, or inside the registers. */
	mkcfg(cfg, PCIE_TYPE_DOWNSTREAM, 0x001d);
	assert_int_equal(read_acs(cfg, 0x14c, &acs), PCIE_TRUNCATED);
	assert_false(acs.present);
	assert_int_equal(acs.cap, 0);
	assert_int_equal(read_acs(cfg, 0x14f, &acs), PCIE_TRUNCATED);
	assert_false(acs.present);
	assert_int_equal(read_acs(cfg, 0x130, &acs), PCIE_TRUNCATED);
	assert_false(acs.present);
	assert_int_equal(read_acs(cfg, 64, &acs), PCIE_TRUNCATED);
	assert_false(acs.present);

	/* Loops pass through. */
	put32(cfg, 0x100, ext_hdr(0x0001, 2, 0x100));
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), PCIE_LOOP);
	assert_false(acs.present);
	memset(cfg + 0x100, 0xa5, CFG_SIZE - 0x100);
	assert_int_equal(read_acs(cfg, CFG_SIZE, &acs), PCIE_LOOP);
	assert_false(acs.present);
}

static void expect_bits(uint16_t bits, const char *want)
{
	char buf[128];

	memset(buf, 'x', sizeof(buf));
	acs_bits_string(bits, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_acs_bits_string(void **state)
{
	expect_bits(0, "none");
	expect_bits(ACS_SV, "SrcValid");
	expect_bits(ACS_TB, "TransBlk");
	expect_bits(ACS_RR, "ReqRedir");
	expect_bits(ACS_CR, "CmpltRedir");
	expect_bits(ACS_UF, "UpstreamFwd");
	expect_bits(ACS_EC, "EgressCtrl");
	expect_bits(ACS_DT, "DirectTrans");
	expect_bits(0x007f, "SrcValid TransBlk ReqRedir CmpltRedir UpstreamFwd "
			    "EgressCtrl DirectTrans");
	expect_bits(ACS_REDIRECTS, "ReqRedir CmpltRedir EgressCtrl");
	expect_bits(0x001d, "SrcValid ReqRedir CmpltRedir UpstreamFwd");
	expect_bits(0x005f, "SrcValid TransBlk ReqRedir CmpltRedir UpstreamFwd "
			    "DirectTrans");
	/* Bits lspci does not name are not shown. */
	expect_bits(0xff80, "none");
	expect_bits(0xff84, "ReqRedir");
}

static void test_acs_bits_string_short(void **state)
{
	char buf[32];

	/* Truncated, terminated, never past len. */
	memset(buf, 'x', sizeof(buf));
	acs_bits_string(0x007f, buf, 12);
	assert_string_equal(buf, "SrcValid Tr");
	for (size_t i = 12; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');

	memset(buf, 'x', sizeof(buf));
	acs_bits_string(0x0001, buf, 9);
	assert_string_equal(buf, "SrcValid");
	assert_int_equal(buf[9], 'x');

	memset(buf, 'x', sizeof(buf));
	acs_bits_string(0x0003, buf, 9);
	assert_string_equal(buf, "SrcValid");
	assert_int_equal(buf[9], 'x');

	memset(buf, 'x', sizeof(buf));
	acs_bits_string(0, buf, 3);
	assert_string_equal(buf, "no");
	assert_int_equal(buf[3], 'x');

	memset(buf, 'x', sizeof(buf));
	acs_bits_string(0x0004, buf, 1);
	assert_string_equal(buf, "");
	assert_int_equal(buf[1], 'x');
}

/* --- names, NCCL mapping, NCCL_NET_GDR_LEVEL ------------------------------ */

static void test_names(void **state)
{
	assert_string_equal(topo_class_name(TOPO_PIX), "PIX");
	assert_string_equal(topo_class_name(TOPO_PXB), "PXB");
	assert_string_equal(topo_class_name(TOPO_PHB), "PHB");
	assert_string_equal(topo_class_name(TOPO_NODE), "NODE");
	assert_string_equal(topo_class_name(TOPO_SYS), "SYS");
	assert_string_equal(topo_class_name(TOPO_UNKNOWN), "unknown");
	assert_string_equal(topo_class_name((enum topo_class)(TOPO_UNKNOWN + 1)),
			    "unknown");
	assert_string_equal(topo_class_name((enum topo_class)-1), "unknown");

	assert_string_equal(nccl_path_name(NCCL_LOC), "LOC");
	assert_string_equal(nccl_path_name(NCCL_PIX), "PIX");
	assert_string_equal(nccl_path_name(NCCL_PXB), "PXB");
	assert_string_equal(nccl_path_name(NCCL_PHB), "PHB");
	assert_string_equal(nccl_path_name(NCCL_SYS), "SYS");
	assert_string_equal(nccl_path_name(NCCL_UNKNOWN), "unknown");
	assert_string_equal(nccl_path_name((enum nccl_path)(NCCL_UNKNOWN + 1)),
			    "unknown");
	assert_string_equal(nccl_path_name((enum nccl_path)-1), "unknown");
}

static void test_nccl_path_of(void **state)
{
	assert_int_equal(nccl_path_of(TOPO_PIX), NCCL_PIX);
	assert_int_equal(nccl_path_of(TOPO_PXB), NCCL_PXB);
	assert_int_equal(nccl_path_of(TOPO_PHB), NCCL_PHB);
	assert_int_equal(nccl_path_of(TOPO_NODE), NCCL_PHB);
	assert_int_equal(nccl_path_of(TOPO_SYS), NCCL_SYS);
	assert_int_equal(nccl_path_of(TOPO_UNKNOWN), NCCL_UNKNOWN);
	assert_int_equal(nccl_path_of((enum topo_class)42), NCCL_UNKNOWN);
}

static void expect_level(const char *s, enum nccl_path want)
{
	enum nccl_path got = NCCL_UNKNOWN;

	assert_int_equal(parse_gdr_level(s, &got), 0);
	assert_int_equal(got, want);
}

static void expect_level_bad(const char *s)
{
	enum nccl_path got = (enum nccl_path)77;

	assert_int_equal(parse_gdr_level(s, &got), -1);
	assert_int_equal(got, 77);	/* untouched */
}

static void test_parse_gdr_level(void **state)
{
	expect_level("LOC", NCCL_LOC);
	expect_level("PIX", NCCL_PIX);
	expect_level("PXB", NCCL_PXB);
	expect_level("PHB", NCCL_PHB);
	expect_level("SYS", NCCL_SYS);
	expect_level("loc", NCCL_LOC);
	expect_level("pix", NCCL_PIX);
	expect_level("Pxb", NCCL_PXB);
	expect_level("pHb", NCCL_PHB);
	expect_level("sYs", NCCL_SYS);

	expect_level("0", NCCL_LOC);
	expect_level("1", NCCL_PIX);
	expect_level("2", NCCL_PXB);
	expect_level("3", NCCL_PHB);
	expect_level("4", NCCL_SYS);
	expect_level("5", NCCL_SYS);

	expect_level_bad("6");
	expect_level_bad("-1");
	expect_level_bad("");
	expect_level_bad("PXBX");
	expect_level_bad("3x");
	expect_level_bad("PX");
	expect_level_bad("unknown");
	expect_level_bad("99999999999999999999");
}

/* --- pcitree: the DGX-like tree of tests/scenarios/common/dgx-tree.spec --- */

enum {
	RP0,		/* 00:01.0 root port */
	L1UP,		/* 01:00.0 */
	L1DN0,		/* 02:00.0 */
	L1DN1,		/* 02:01.0 */
	L2AUP,		/* 03:00.0 */
	L2ADN0,		/* 04:00.0 */
	L2ADN1,		/* 04:01.0 */
	GPU0,		/* 05:00.0 */
	NIC,		/* 06:00.0 mlx5_0 */
	L2BUP,		/* 07:00.0 */
	L2BDN,		/* 08:00.0 */
	GPU1,		/* 09:00.0 */
	RP3,		/* 00:03.0 root port */
	NVME,		/* 0a:00.0 */
	RP80,		/* 80:01.0 root port, socket 1 */
	GPU2,		/* 81:00.0 */
	DGX_N,
};

static const struct {
	const char *bdf, *root;
	int parent;
	int type;	/* -1: endpoint */
	int numa;
} dgx[DGX_N] = {
	[RP0]    = { "0000:00:01.0", "pci0000:00", -1,     PCIE_TYPE_ROOT_PORT,  0 },
	[L1UP]   = { "0000:01:00.0", "pci0000:00", RP0,    PCIE_TYPE_UPSTREAM,   0 },
	[L1DN0]  = { "0000:02:00.0", "pci0000:00", L1UP,   PCIE_TYPE_DOWNSTREAM, 0 },
	[L1DN1]  = { "0000:02:01.0", "pci0000:00", L1UP,   PCIE_TYPE_DOWNSTREAM, 0 },
	[L2AUP]  = { "0000:03:00.0", "pci0000:00", L1DN0,  PCIE_TYPE_UPSTREAM,   0 },
	[L2ADN0] = { "0000:04:00.0", "pci0000:00", L2AUP,  PCIE_TYPE_DOWNSTREAM, 0 },
	[L2ADN1] = { "0000:04:01.0", "pci0000:00", L2AUP,  PCIE_TYPE_DOWNSTREAM, 0 },
	[GPU0]   = { "0000:05:00.0", "pci0000:00", L2ADN0, -1,                   0 },
	[NIC]    = { "0000:06:00.0", "pci0000:00", L2ADN1, -1,                   0 },
	[L2BUP]  = { "0000:07:00.0", "pci0000:00", L1DN1,  PCIE_TYPE_UPSTREAM,   0 },
	[L2BDN]  = { "0000:08:00.0", "pci0000:00", L2BUP,  PCIE_TYPE_DOWNSTREAM, 0 },
	[GPU1]   = { "0000:09:00.0", "pci0000:00", L2BDN,  -1,                   0 },
	[RP3]    = { "0000:00:03.0", "pci0000:00", -1,     PCIE_TYPE_ROOT_PORT,  0 },
	[NVME]   = { "0000:0a:00.0", "pci0000:00", RP3,    -1,                   0 },
	[RP80]   = { "0000:80:01.0", "pci0000:80", -1,     PCIE_TYPE_ROOT_PORT,  1 },
	[GPU2]   = { "0000:81:00.0", "pci0000:80", RP80,   -1,                   1 },
};

/*
 * The tree with types from config space (typed) or none at all (to infer).
 * perm maps dgx index -> tree index, to put children before parents.
 */
static void build_dgx(struct pcitree *t, struct pcinode *nodes, bool typed,
		      const int *perm)
{
	memset(nodes, 0, sizeof(*nodes) * DGX_N);
	for (int i = 0; i < DGX_N; i++) {
		struct pcinode *n = &nodes[perm ? perm[i] : i];

		snprintf(n->bdf, sizeof(n->bdf), "%s", dgx[i].bdf);
		snprintf(n->root, sizeof(n->root), "%s", dgx[i].root);
		n->parent = dgx[i].parent < 0 ? -1 :
			    perm ? perm[dgx[i].parent] : dgx[i].parent;
		n->bridge = dgx[i].type >= 0;
		n->class_code = n->bridge ? 0x060400 : 0x030200;
		n->port_type = typed && n->bridge ? dgx[i].type :
			       typed ? 0 : -1;
		n->type_inferred = false;
		n->numa = dgx[i].numa;
	}
	t->n = nodes;
	t->count = DGX_N;
	t->numa_nodes = 2;
}

static void path(const struct pcitree *t, int a, int b, struct pcipath *p)
{
	/* Garbage in: the result must be fully written. */
	memset(p, 0x5a, sizeof(*p));
	pcitree_path(t, a, b, p);
}

static void expect_bridges(const struct pcipath *p, const int *want, int n)
{
	assert_int_equal(p->nbridges, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(p->bridges[i], want[i]);
}

static void test_tree_find(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;

	build_dgx(&t, nodes, true, NULL);
	assert_int_equal(pcitree_find(&t, "0000:05:00.0"), GPU0);
	assert_int_equal(pcitree_find(&t, "0000:81:00.0"), GPU2);
	assert_int_equal(pcitree_find(&t, "0000:00:01.0"), RP0);
	assert_int_equal(pcitree_find(&t, "0000:05:00.1"), -1);
	assert_int_equal(pcitree_find(&t, "05:00.0"), -1);
	assert_int_equal(pcitree_find(&t, ""), -1);
	t.count = 0;
	assert_int_equal(pcitree_find(&t, "0000:00:01.0"), -1);
}

static void test_infer_types_by_depth(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;

	build_dgx(&t, nodes, false, NULL);
	pcitree_infer_types(&t);
	for (int i = 0; i < DGX_N; i++) {
		if (dgx[i].type < 0) {
			assert_int_equal(nodes[i].port_type, -1);
			assert_false(nodes[i].type_inferred);
		} else {
			assert_int_equal(nodes[i].port_type, dgx[i].type);
			assert_true(nodes[i].type_inferred);
		}
	}
	/* A second run changes nothing. */
	pcitree_infer_types(&t);
	for (int i = 0; i < DGX_N; i++)
		assert_int_equal(nodes[i].port_type, dgx[i].type < 0 ? -1 : dgx[i].type);
}

static void test_infer_types_children_first(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	int perm[DGX_N];

	/* Reverse order: every child comes before its parent. */
	for (int i = 0; i < DGX_N; i++)
		perm[i] = DGX_N - 1 - i;
	build_dgx(&t, nodes, false, perm);
	pcitree_infer_types(&t);
	for (int i = 0; i < DGX_N; i++) {
		assert_int_equal(nodes[perm[i]].port_type,
				 dgx[i].type < 0 ? -1 : dgx[i].type);
		assert_int_equal(nodes[perm[i]].type_inferred, dgx[i].type >= 0);
	}
}

static void test_infer_types_keeps_config(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;

	build_dgx(&t, nodes, false, NULL);
	/* Config space says 03:00.0 is a downstream port: believed, and its
	 * children follow from it. */
	nodes[L2AUP].port_type = PCIE_TYPE_DOWNSTREAM;
	nodes[L2AUP].type_inferred = false;
	/* Config space says the root-bus 00:03.0 is an upstream port. */
	nodes[RP3].port_type = PCIE_TYPE_UPSTREAM;
	/* A stale inferred type is recomputed. */
	nodes[RP80].port_type = PCIE_TYPE_DOWNSTREAM;
	nodes[RP80].type_inferred = true;
	pcitree_infer_types(&t);
	assert_int_equal(nodes[L2AUP].port_type, PCIE_TYPE_DOWNSTREAM);
	assert_false(nodes[L2AUP].type_inferred);
	assert_int_equal(nodes[L2ADN0].port_type, PCIE_TYPE_UPSTREAM);
	assert_int_equal(nodes[L2ADN1].port_type, PCIE_TYPE_UPSTREAM);
	assert_true(nodes[L2ADN0].type_inferred);
	assert_int_equal(nodes[RP3].port_type, PCIE_TYPE_UPSTREAM);
	assert_false(nodes[RP3].type_inferred);
	assert_int_equal(nodes[RP80].port_type, PCIE_TYPE_ROOT_PORT);
	assert_true(nodes[RP80].type_inferred);
	/* Untouched elsewhere. */
	assert_int_equal(nodes[L1UP].port_type, PCIE_TYPE_UPSTREAM);
	assert_int_equal(nodes[L2BDN].port_type, PCIE_TYPE_DOWNSTREAM);
	assert_int_equal(nodes[GPU0].port_type, -1);
}

static void test_infer_types_cycle(void **state)
{
	struct pcinode nodes[3];
	struct pcitree t = { .n = nodes, .count = 3, .numa_nodes = 1 };

	/* Corrupt: two untyped bridges each other's parent. Terminates,
	 * nothing to infer from. */
	memset(nodes, 0, sizeof(nodes));
	for (int i = 0; i < 3; i++) {
		snprintf(nodes[i].bdf, sizeof(nodes[i].bdf), "0000:0%x:00.0",
			 (unsigned int)i & 0xf);
		snprintf(nodes[i].root, sizeof(nodes[i].root), "pci0000:00");
		nodes[i].bridge = true;
		nodes[i].port_type = -1;
	}
	nodes[0].parent = 1;
	nodes[1].parent = 0;
	nodes[2].parent = 2;
	pcitree_infer_types(&t);
	assert_int_equal(nodes[0].port_type, -1);
	assert_int_equal(nodes[1].port_type, -1);
	assert_int_equal(nodes[2].port_type, -1);
	/* An odd cycle with a typed member: terminates too. */
	nodes[0].parent = 1;
	nodes[1].parent = 2;
	nodes[2].parent = 0;
	nodes[2].port_type = PCIE_TYPE_ROOT_PORT;
	pcitree_infer_types(&t);
	assert_int_equal(nodes[2].port_type, PCIE_TYPE_ROOT_PORT);
	assert_int_equal(nodes[1].port_type, PCIE_TYPE_UPSTREAM);
	assert_int_equal(nodes[0].port_type, PCIE_TYPE_DOWNSTREAM);
}

static void test_path_pix(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;
	static const int want[] = { L2ADN0, L2AUP, L2ADN1 };
	static const int back[] = { L2ADN1, L2AUP, L2ADN0 };

	build_dgx(&t, nodes, true, NULL);
	path(&t, GPU0, NIC, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_PIX);
	assert_int_equal(p.turn, L2AUP);
	expect_bridges(&p, want, 3);
	assert_int_equal(p.units, 1);

	path(&t, NIC, GPU0, &p);
	assert_int_equal(p.cls, TOPO_PIX);
	assert_int_equal(p.turn, L2AUP);
	expect_bridges(&p, back, 3);
	assert_int_equal(p.units, 1);

	/* Same with inferred types. */
	build_dgx(&t, nodes, false, NULL);
	pcitree_infer_types(&t);
	path(&t, GPU0, NIC, &p);
	assert_int_equal(p.cls, TOPO_PIX);
	expect_bridges(&p, want, 3);
	assert_int_equal(p.units, 1);
}

static void test_path_pxb(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;
	static const int want[] = { L2BDN, L2BUP, L1DN1, L1UP, L1DN0, L2AUP, L2ADN1 };
	static const int two[] = { L2ADN0, L2AUP, L1DN0, L1UP, L1DN1 };

	build_dgx(&t, nodes, true, NULL);
	path(&t, GPU1, NIC, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_PXB);
	assert_int_equal(p.turn, L1UP);
	expect_bridges(&p, want, 7);
	assert_int_equal(p.units, 3);

	path(&t, GPU0, GPU1, &p);
	assert_int_equal(p.cls, TOPO_PXB);
	assert_int_equal(p.turn, L1UP);
	assert_int_equal(p.nbridges, 7);
	assert_int_equal(p.units, 3);

	/* Two switches (L2a and L1) are PXB too. */
	path(&t, GPU0, L2BUP, &p);
	assert_int_equal(p.cls, TOPO_PXB);
	assert_int_equal(p.turn, L1UP);
	expect_bridges(&p, two, 5);
	assert_int_equal(p.units, 2);

	/* Without port types, every bridge is its own unit. */
	for (int i = 0; i < DGX_N; i++)
		nodes[i].port_type = -1;
	path(&t, GPU0, NIC, &p);
	assert_int_equal(p.units, 3);
	assert_int_equal(p.cls, TOPO_PXB);
}

static void test_path_sys(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;
	static const int want[] = { RP80, RP0, L1UP, L1DN0, L2AUP, L2ADN1 };

	build_dgx(&t, nodes, true, NULL);
	path(&t, GPU2, NIC, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_SYS);
	assert_int_equal(p.turn, -1);
	expect_bridges(&p, want, 6);

	/* Different roots, one NUMA node: NODE. */
	nodes[RP80].numa = 0;
	nodes[GPU2].numa = 0;
	path(&t, GPU2, NIC, &p);
	assert_int_equal(p.cls, TOPO_NODE);
	assert_int_equal(p.turn, -1);
	assert_int_equal(nccl_path_of(p.cls), NCCL_PHB);
}

static void test_path_numa_unknown(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;

	build_dgx(&t, nodes, true, NULL);
	nodes[GPU2].numa = -1;
	t.numa_nodes = 1;
	path(&t, GPU2, NIC, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_NODE);
	t.numa_nodes = 2;
	path(&t, GPU2, NIC, &p);
	assert_int_equal(p.cls, TOPO_SYS);
	t.numa_nodes = 0;
	path(&t, GPU2, NIC, &p);
	assert_int_equal(p.cls, TOPO_SYS);
	/* Unknown on the other side. */
	nodes[GPU2].numa = 1;
	nodes[NIC].numa = -1;
	t.numa_nodes = 1;
	path(&t, GPU2, NIC, &p);
	assert_int_equal(p.cls, TOPO_NODE);
	t.numa_nodes = 2;
	path(&t, NIC, GPU2, &p);
	assert_int_equal(p.cls, TOPO_SYS);
	/* Known and different wins over numa_nodes. */
	nodes[NIC].numa = 0;
	t.numa_nodes = 1;
	path(&t, GPU2, NIC, &p);
	assert_int_equal(p.cls, TOPO_SYS);
}

static void test_path_phb(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;
	static const int want[] = { RP3, RP0, L1UP, L1DN0, L2AUP, L2ADN0 };

	/* Same host bridge, two root ports: no common bridge. */
	build_dgx(&t, nodes, true, NULL);
	path(&t, NVME, GPU0, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_PHB);
	assert_int_equal(p.turn, -1);
	expect_bridges(&p, want, 6);
	/* NUMA does not matter under one host bridge. */
	nodes[NVME].numa = 1;
	path(&t, NVME, GPU0, &p);
	assert_int_equal(p.cls, TOPO_PHB);
}

static void test_path_flat(void **state)
{
	struct pcinode nodes[2];
	struct pcitree t = { .n = nodes, .count = 2, .numa_nodes = 2 };
	struct pcipath p;

	/* Both on the root bus (a VM, or an integrated device). */
	memset(nodes, 0, sizeof(nodes));
	snprintf(nodes[0].bdf, sizeof(nodes[0].bdf), "0000:00:05.0");
	snprintf(nodes[1].bdf, sizeof(nodes[1].bdf), "0000:00:06.0");
	for (int i = 0; i < 2; i++) {
		snprintf(nodes[i].root, sizeof(nodes[i].root), "pci0000:00");
		nodes[i].parent = -1;
		nodes[i].port_type = -1;
		nodes[i].numa = -1;
	}
	path(&t, 0, 1, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_PHB);
	assert_int_equal(p.turn, -1);
	assert_int_equal(p.nbridges, 0);
	assert_int_equal(p.units, 0);
	/* Flat on two host bridges, NUMA unknown. */
	snprintf(nodes[1].root, sizeof(nodes[1].root), "pci0000:40");
	path(&t, 0, 1, &p);
	assert_int_equal(p.cls, TOPO_SYS);
	assert_int_equal(p.nbridges, 0);
	t.numa_nodes = 1;
	path(&t, 0, 1, &p);
	assert_int_equal(p.cls, TOPO_NODE);
}

static void test_path_unknown(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;

	build_dgx(&t, nodes, true, NULL);
	path(&t, -1, NIC, &p);
	assert_false(p.known);
	assert_int_equal(p.cls, TOPO_UNKNOWN);
	assert_int_equal(p.turn, -1);
	assert_int_equal(p.nbridges, 0);
	assert_int_equal(p.units, 0);
	path(&t, GPU0, -1, &p);
	assert_false(p.known);
	assert_int_equal(p.cls, TOPO_UNKNOWN);
	assert_int_equal(p.turn, -1);
	assert_int_equal(p.nbridges, 0);
	path(&t, -1, -1, &p);
	assert_false(p.known);
	assert_int_equal(p.cls, TOPO_UNKNOWN);
	assert_int_equal(nccl_path_of(p.cls), NCCL_UNKNOWN);
}

/* A function outside any pciDDDD:BB directory has no host bridge. */
static void test_path_no_host_bridge(void **state)
{
	struct pcinode nodes[DGX_N];
	struct pcitree t;
	struct pcipath p;

	build_dgx(&t, nodes, true, NULL);
	/* Both ends "" would otherwise compare equal: never PHB. */
	nodes[NVME].root[0] = '\0';
	nodes[GPU2].root[0] = '\0';
	path(&t, NVME, GPU2, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_UNKNOWN);
	assert_int_equal(nccl_path_of(p.cls), NCCL_UNKNOWN);
	assert_true(p.rootless == NVME || p.rootless == GPU2);
	/* One end without: still no class, and that end is named. */
	build_dgx(&t, nodes, true, NULL);
	nodes[GPU2].root[0] = '\0';
	path(&t, GPU0, GPU2, &p);
	assert_int_equal(p.cls, TOPO_UNKNOWN);
	assert_int_equal(p.rootless, GPU2);
	/* Below a common bridge the host bridge does not matter. */
	build_dgx(&t, nodes, true, NULL);
	nodes[GPU0].root[0] = nodes[NIC].root[0] = '\0';
	path(&t, GPU0, NIC, &p);
	assert_int_equal(p.cls, TOPO_PIX);
	assert_int_equal(p.rootless, -1);
	/* The whole tree with roots: no end flagged. */
	build_dgx(&t, nodes, true, NULL);
	path(&t, GPU0, GPU2, &p);
	assert_int_equal(p.rootless, -1);
	assert_int_equal(p.cls, TOPO_SYS);
}

/* Intel VMD puts functions in 32-bit domains (10000 and up). */
static void test_tree_wide_domain(void **state)
{
	struct pcinode nodes[2];
	struct pcitree t = { .n = nodes, .count = 2, .numa_nodes = 1 };
	struct pcipath p;

	memset(nodes, 0, sizeof(nodes));
	snprintf(nodes[0].bdf, sizeof(nodes[0].bdf), "10000:00:02.0");
	snprintf(nodes[1].bdf, sizeof(nodes[1].bdf), "ffffffff:ff:1f.7");
	assert_string_equal(nodes[1].bdf, "ffffffff:ff:1f.7");
	snprintf(nodes[0].root, sizeof(nodes[0].root), "pci10000:00");
	snprintf(nodes[1].root, sizeof(nodes[1].root), "pci10000:00");
	nodes[0].parent = -1;
	nodes[1].parent = 0;
	nodes[0].bridge = true;
	nodes[0].port_type = PCIE_TYPE_ROOT_PORT;
	nodes[1].port_type = -1;
	assert_int_equal(pcitree_find(&t, "10000:00:02.0"), 0);
	assert_int_equal(pcitree_find(&t, "0000:00:02.0"), -1);
	assert_int_equal(pcitree_find(&t, "ffffffff:ff:1f.7"), 1);
	path(&t, 1, 0, &p);
	assert_true(p.known);
	assert_int_equal(p.rootless, -1);
}

static void test_path_cycle(void **state)
{
	struct pcinode nodes[5];
	struct pcitree t = { .n = nodes, .count = 5, .numa_nodes = 1 };
	struct pcipath p;

	memset(nodes, 0, sizeof(nodes));
	for (int i = 0; i < 5; i++) {
		snprintf(nodes[i].bdf, sizeof(nodes[i].bdf), "0000:0%x:00.0",
			 (unsigned int)i & 0xf);
		snprintf(nodes[i].root, sizeof(nodes[i].root), "pci0000:00");
		nodes[i].bridge = i < 2 || i == 4;
		nodes[i].port_type = -1;
		nodes[i].numa = 0;
	}
	/* Bridges 0 and 1 each other's parent; endpoint 2 below 0; endpoint 3
	 * on the root bus; bridge 4 its own parent. */
	nodes[0].parent = 1;
	nodes[1].parent = 0;
	nodes[2].parent = 0;
	nodes[3].parent = -1;
	nodes[4].parent = 4;

	path(&t, 2, 3, &p);
	assert_true(p.known);
	assert_int_equal(p.cls, TOPO_PHB);
	assert_int_equal(p.turn, -1);
	assert_int_equal(p.nbridges, PCIPATH_MAX);
	assert_int_equal(p.bridges[0], 0);
	assert_int_equal(p.bridges[1], 1);
	assert_int_equal(p.bridges[PCIPATH_MAX - 1], 1);

	path(&t, 3, 2, &p);
	assert_int_equal(p.cls, TOPO_PHB);
	assert_int_equal(p.nbridges, PCIPATH_MAX);
	assert_int_equal(p.bridges[0], 1);
	assert_int_equal(p.bridges[PCIPATH_MAX - 1], 0);

	/* Both inside the cycle. */
	path(&t, 0, 1, &p);
	assert_true(p.known);
	assert_in_range(p.nbridges, 0, PCIPATH_MAX);
	assert_in_range(p.cls, TOPO_PIX, TOPO_UNKNOWN);

	path(&t, 2, 4, &p);
	assert_true(p.known);
	assert_in_range(p.nbridges, 0, PCIPATH_MAX);
	assert_int_equal(p.cls, TOPO_PHB);

	path(&t, 4, 4, &p);
	assert_true(p.known);
	assert_in_range(p.nbridges, 0, PCIPATH_MAX);
}

/*
 * Two branches 17 bridges deep under one root port: the common bridge is
 * found at index 17 of both chains, so the path has 17 + 1 + 17 = 35 bridges,
 * more than pcipath.bridges holds. It must stay within PCIPATH_MAX.
 */
#define DEEP 17

struct guarded_path {
	struct pcipath p;
	int guard[64];
};

static void test_path_deep_branches(void **state)
{
	struct pcinode nodes[2 + 2 * DEEP + 2];
	struct pcitree t = { .n = nodes, .count = sizeof(nodes) / sizeof(nodes[0]), .numa_nodes = 1 };
	struct guarded_path g;
	int n = 0, a = -1, b = -1, up;

	memset(nodes, 0, sizeof(nodes));
	for (size_t i = 0; i < t.count; i++) {
		snprintf(nodes[i].bdf, sizeof(nodes[i].bdf), "0000:%02x:00.0",
			 (unsigned int)i & 0xff);
		snprintf(nodes[i].root, sizeof(nodes[i].root), "pci0000:00");
		nodes[i].port_type = -1;
	}
	nodes[n].bridge = true;		/* root port */
	nodes[n++].parent = -1;
	nodes[n].bridge = true;		/* the common bridge */
	nodes[n++].parent = 0;
	for (int side = 0; side < 2; side++) {
		up = 1;
		for (int d = 0; d < DEEP; d++) {
			nodes[n].bridge = true;
			nodes[n].parent = up;
			up = n++;
		}
		nodes[n].parent = up;
		if (side == 0)
			a = n++;
		else
			b = n++;
	}
	assert_int_equal((size_t)n, t.count);
	pcitree_infer_types(&t);

	memset(&g, 0, sizeof(g));
	pcitree_path(&t, a, b, &g.p);
	for (size_t i = 0; i < sizeof(g.guard) / sizeof(g.guard[0]); i++)
		assert_int_equal(g.guard[i], 0);
	assert_true(g.p.known);
	assert_in_range(g.p.nbridges, 0, PCIPATH_MAX);
	assert_in_range(g.p.cls, TOPO_PIX, TOPO_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_real_bridge),
		cmocka_unit_test(test_cap_chain),
		cmocka_unit_test(test_cap_no_list),
		cmocka_unit_test(test_cap_loop),
		cmocka_unit_test(test_cap_into_header),
		cmocka_unit_test(test_cap_past_buffer),
		cmocka_unit_test(test_cap_64_bytes),
		cmocka_unit_test(test_cap_id_ff),
		cmocka_unit_test(test_ext_aer_acs),
		cmocka_unit_test(test_ext_no_list),
		cmocka_unit_test(test_ext_loops),
		cmocka_unit_test(test_ext_garbage),
		cmocka_unit_test(test_ext_random),
		cmocka_unit_test(test_ext_next_below_100),
		cmocka_unit_test(test_ext_short_buffers),
		cmocka_unit_test(test_ext_last_dword),
		cmocka_unit_test(test_walk_error),
		cmocka_unit_test(test_port_type),
		cmocka_unit_test(test_read_acs),
		cmocka_unit_test(test_acs_bits_string),
		cmocka_unit_test(test_acs_bits_string_short),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_nccl_path_of),
		cmocka_unit_test(test_parse_gdr_level),
		cmocka_unit_test(test_tree_find),
		cmocka_unit_test(test_infer_types_by_depth),
		cmocka_unit_test(test_infer_types_children_first),
		cmocka_unit_test(test_infer_types_keeps_config),
		cmocka_unit_test(test_infer_types_cycle),
		cmocka_unit_test(test_path_pix),
		cmocka_unit_test(test_path_pxb),
		cmocka_unit_test(test_path_sys),
		cmocka_unit_test(test_path_numa_unknown),
		cmocka_unit_test(test_path_phb),
		cmocka_unit_test(test_path_flat),
		cmocka_unit_test(test_path_unknown),
		cmocka_unit_test(test_path_cycle),
		cmocka_unit_test(test_path_no_host_bridge),
		cmocka_unit_test(test_tree_wide_domain),
		cmocka_unit_test(test_path_deep_branches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
