// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the PCI configuration-space walks of decode/pcie.h.
 *
 * The input is a config-space image (as read from sysfs `config`: 64, 256 or
 * 4096 bytes, or anything a broken capture holds) handed over as raw bytes
 * with their real length, capped at 4096: no NUL terminator, an exact-size
 * heap copy, so a read one byte past the end is an ASan report. The same
 * bytes, NUL-terminated, also go to parse_gdr_level (NCCL_NET_GDR_LEVEL).
 */
#include <stdbool.h>
#include <stdio.h>

#include "decode/pcie.h"
#include "tests/fuzz/fuzz_common.h"

#define CFG_MAX 4096

static uint16_t get16(const uint8_t *cfg, size_t off)
{
	return (uint16_t)(cfg[off] | cfg[off + 1] << 8);
}

static bool walk_error(int r)
{
	return r == PCIE_NOT_FOUND || r == PCIE_TRUNCATED || r == PCIE_LOOP ||
	       r == PCIE_NO_LIST;
}

static void check_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
	int r = pci_find_cap(cfg, len, id);

	(void)pcie_walk_error(r);
	if (r < 0) {
		FUZZ_ASSERT(walk_error(r));
		return;
	}
	FUZZ_ASSERT(r >= 0x40 && (size_t)r + 2 <= len && r < 0x100);
	FUZZ_ASSERT(r % 4 == 0);
	FUZZ_ASSERT(cfg[r] == id);
}

static void check_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	int r = pci_find_ext_cap(cfg, len, id);

	(void)pcie_walk_error(r);
	if (r < 0) {
		FUZZ_ASSERT(walk_error(r));
		return;
	}
	FUZZ_ASSERT(r >= 0x100 && (size_t)r <= len - 4);
	FUZZ_ASSERT(r % 4 == 0);
	FUZZ_ASSERT(get16(cfg, (size_t)r) == id);
}

static void check_acs_string(uint16_t bits)
{
	static const size_t sizes[] = { 1, 2, 5, 9, 17, 32, 128 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		char *buf = fuzz_buf(len);

		acs_bits_string(bits, buf, len);
		FUZZ_ASSERT(memchr(buf, '\0', len));
		if (len == 128) {
			/* Room for all seven names: never truncated. */
			FUZZ_ASSERT(strlen(buf) > 0);
			if (!(bits & 0x7f))
				FUZZ_ASSERT(!strcmp(buf, "none"));
			else
				FUZZ_ASSERT(strcmp(buf, "none"));
		}
		free(buf);
	}
}

static void fuzz_gdr_level(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	enum nccl_path level = NCCL_UNKNOWN;

	if (parse_gdr_level(s, &level) == 0) {
		FUZZ_ASSERT(level >= NCCL_LOC && level <= NCCL_SYS);
		(void)nccl_path_name(level);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t cap_ids[] = {
		0x01 /* PM */, 0x05 /* MSI */, 0x09 /* vendor */,
		PCI_CAP_ID_EXP, 0x11 /* MSI-X */, 0xff, 0x00,
	};
	static const uint16_t ext_ids[] = {
		0x0001 /* AER */, 0x000b /* vendor */, PCI_EXT_CAP_ID_ACS_,
		0x0010 /* SR-IOV */, 0x0015 /* resizable BAR */,
		0x0019 /* secondary PCIe */, 0xffff, 0x0000,
	};
	size_t len = size < CFG_MAX ? size : CFG_MAX;
	uint8_t *cfg = (uint8_t *)fuzz_buf(len);
	struct acs_regs acs;
	int type, r;

	if (len)
		memcpy(cfg, data, len);

	for (size_t i = 0; i < sizeof(cap_ids); i++)
		check_cap(cfg, len, cap_ids[i]);
	if (len > 0)
		check_cap(cfg, len, cfg[len - 1]);
	for (size_t i = 0; i < sizeof(ext_ids) / sizeof(ext_ids[0]); i++)
		check_ext_cap(cfg, len, ext_ids[i]);
	if (len > 1)
		check_ext_cap(cfg, len, get16(cfg, len - 2));

	type = pcie_port_type(cfg, len);
	FUZZ_ASSERT(type >= -1 && type <= 0xf);
	(void)pcie_port_type_name(type);
	if (type >= 0)
		FUZZ_ASSERT(pci_find_cap(cfg, len, PCI_CAP_ID_EXP) >= 0x40);

	memset(&acs, 0xa5, sizeof(acs));
	r = pcie_read_acs(cfg, len, &acs);
	FUZZ_ASSERT(r == 0 || walk_error(r));
	if (r == 0 && acs.present) {
		int pos = pci_find_ext_cap(cfg, len, PCI_EXT_CAP_ID_ACS_);

		FUZZ_ASSERT(pos >= 0x100 && (size_t)pos + 8 <= len);
		FUZZ_ASSERT(acs.cap == get16(cfg, (size_t)pos + 4));
		FUZZ_ASSERT(acs.ctrl == get16(cfg, (size_t)pos + 6));
	} else {
		FUZZ_ASSERT(!acs.present && acs.cap == 0 && acs.ctrl == 0);
	}
	check_acs_string(acs.ctrl);
	check_acs_string(acs.cap);
	if (len > 1)
		check_acs_string(get16(cfg, 0));

	free(cfg);
	fuzz_gdr_level(data, size);
	return 0;
}
