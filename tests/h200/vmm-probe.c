// SPDX-License-Identifier: MIT
/*
 * On the real H200 (the `device` machine; it has CUDA headers): checks the
 * CUDA VMM ABI that decode/cuda_api.h declares without the toolkit against
 * the real cuda.h at compile time, then runs the allocation NCCL's
 * ncclCuMemAlloc makes (src/include/alloc.h, v2.18.1-v2.30.7) and the
 * dma-buf export gdrcheck registers, on GPU 0, and gives it all back.
 *   cc -O1 -Wall -I/usr/local/cuda/include -o vmm-probe tests/h200/vmm-probe.c \
 *      -L/usr/local/cuda/lib64/stubs -lcuda && ./vmm-probe
 * Its output on the H200 of shared/facts/h200-node.md (2026-12-02) is in
 * tests/h200/vmm-probe.expected.
 */
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define C(x) do {							\
	CUresult r_ = (x);						\
	if (r_) {							\
		const char *n_ = "?";					\
		cuGetErrorName(r_, &n_);				\
		printf("%s -> %s\n", #x, n_);				\
		return 1;						\
	}								\
} while (0)

/* decode/cuda_api.h's layout and values. */
_Static_assert(sizeof(CUmemAllocationProp) == 32, "size");
_Static_assert(offsetof(CUmemAllocationProp, location) == 8, "location");
_Static_assert(offsetof(CUmemAllocationProp, win32HandleMetaData) == 16, "w32");
_Static_assert(offsetof(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable) ==
	       25, "gpuDirectRDMACapable");
_Static_assert(sizeof(CUmemAccessDesc) == 12 &&
	       offsetof(CUmemAccessDesc, flags) == 8, "access desc");
_Static_assert(CU_MEM_ALLOCATION_TYPE_PINNED == 1 &&
	       CU_MEM_LOCATION_TYPE_DEVICE == 1 &&
	       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 1 &&
	       CU_MEM_ACCESS_FLAGS_PROT_READWRITE == 3 &&
	       CU_MEM_ALLOC_GRANULARITY_MINIMUM == 0, "enums");
_Static_assert(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED == 102 &&
	       CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED == 110,
	       "attributes");

int main(void)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp p;
	CUmemAccessDesc ad;
	char b[4096], l[64], pt[64];
	int v, g, fd = -1, cap = 0;
	CUdeviceptr a;
	CUcontext c;
	CUdevice d;
	size_t gr;
	ssize_t n;
	FILE *f;

	memset(&p, 0, sizeof(p));
	memset(&ad, 0, sizeof(ad));
	C(cuInit(0));
	C(cuDeviceGet(&d, 0));
	C(cuDevicePrimaryCtxRetain(&c, d));
	C(cuCtxSetCurrent(c));
	C(cuDeviceGetAttribute(&v, 102, d));
	C(cuDeviceGetAttribute(&g, 110, d));
	printf("vmm %d gdr_vmm %d\n", v, g);
	p.type = 1;
	p.location.type = 1;
	p.location.id = d;
	p.requestedHandleTypes = 1;
	if (g)
		p.allocFlags.gpuDirectRDMACapable = 1;
	C(cuMemGetAllocationGranularity(&gr, &p, 0));
	printf("granularity %zu\n", gr);
	C(cuMemCreate(&h, gr, &p, 0));
	C(cuMemAddressReserve(&a, gr, gr, 0, 0));
	C(cuMemMap(a, gr, 0, h, 0));
	ad.location.type = 1;
	ad.location.id = d;
	ad.flags = 3;
	C(cuMemSetAccess(a, gr, &ad, 1));
	memset(b, 0x5a, sizeof(b));
	C(cuMemcpyHtoD(a + gr - sizeof(b), b, sizeof(b)));
	memset(b, 0, sizeof(b));
	C(cuMemcpyDtoH(b, a + gr - sizeof(b), sizeof(b)));
	printf("copy %s\n", b[sizeof(b) - 1] == 0x5a ? "ok" : "BAD");
	C(cuPointerGetAttribute(&cap, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
				a));
	printf("ptr gdr capable %d\n", cap);
	C(cuMemGetHandleForAddressRange(&fd, a, gr,
					CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
	snprintf(pt, sizeof(pt), "/proc/self/fd/%d", fd);
	n = readlink(pt, l, sizeof(l) - 1);
	l[n > 0 ? n : 0] = '\0';
	printf("export fd -> %s\n", l);
	snprintf(pt, sizeof(pt), "/proc/self/fdinfo/%d", fd);
	f = fopen(pt, "r");
	while (f && fgets(b, 256, f))
		if (!strncmp(b, "size", 4) || !strncmp(b, "exp_name", 8))
			fputs(b, stdout);
	if (f)
		fclose(f);
	close(fd);
	C(cuMemUnmap(a, gr));
	C(cuMemRelease(h));
	C(cuMemAddressFree(a, gr));
	puts("released");
	C(cuDevicePrimaryCtxRelease(d));
	return 0;
}
