// SPDX-License-Identifier: MIT
/*
 * Where a CUDA process's exit goes, on a GPU node: what gdrcheck waits for
 * after its report when --no-alloc's worker (cuInit and attributes only)
 * or the full check's (a context too) is torn down by the driver.
 *
 * Each case forks a child that does the CUDA work and _exit()s; the parent
 * times the work, the child's exit to its reap (the driver's teardown), and
 * the whole. "+nvml" runs nvmlInit in a second child beside it, as
 * gdrcheck's NVML worker does. "closes" closes the child's descriptors one
 * by one before _exit and prints each close's cost, which shows which
 * device file's release the teardown is. Built like cuda-floor (dlopen, no
 * CUDA toolkit):
 *   cc -O2 -I. -o bench/cuda-teardown bench/cuda-teardown.c -ldl
 *   bench/cuda-teardown [REPS]
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decode/cuda_api.h"

/* Times the children write for the parent (ms, CLOCK_MONOTONIC). */
enum { T_START, T_WORKED, T_EXITING, T_NVML_START, T_NVML_DONE, T_N };
static volatile double *shared;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Close every descriptor above stderr, printing what each cost. */
static void close_all(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[256], n = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.')
			fds[n++] = atoi(e->d_name);
	closedir(d);
	for (int i = 0; i < n; i++) {
		char link[64], target[256] = "";
		ssize_t len;
		double t0;

		if (fds[i] <= 2)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[i]);
		len = readlink(link, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		t0 = now_ms();
		close(fds[i]);
		fprintf(stderr, "  close %-3d %-28s %7.2f ms\n", fds[i], target,
			now_ms() - t0);
	}
}

static void cuda_child(int with_ctx, int closes)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	cuInit_fn init = h ? (cuInit_fn)dlsym(h, "cuInit") : NULL;
	cuDeviceGet_fn get = h ? (cuDeviceGet_fn)dlsym(h, "cuDeviceGet") : NULL;
	cuDevicePrimaryCtxRetain_fn retain = h ?
		(cuDevicePrimaryCtxRetain_fn)dlsym(h, "cuDevicePrimaryCtxRetain") :
		NULL;
	CUcontext ctx;
	CUdevice dev;

	if (!init || !get || !retain)
		_exit(1);
	shared[T_START] = now_ms();
	if (init(0) || get(&dev, 0) || (with_ctx && retain(&ctx, dev)))
		_exit(1);
	shared[T_WORKED] = now_ms();
	if (closes)
		close_all();
	shared[T_EXITING] = now_ms();
	_exit(0);
}

static void nvml_child(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "nvmlInit_v2") : NULL;

	if (!init)
		_exit(1);
	shared[T_NVML_START] = now_ms();
	init();
	shared[T_NVML_DONE] = now_ms();
	_exit(0);
}

/* One case; -1 when the CUDA child failed (no libcuda, cuInit failed). */
static int one(const char *name, int with_ctx, int closes, int nvml)
{
	double t0 = now_ms(), reaped, all;
	pid_t cuda, other = -1;
	int status = 0;

	for (int i = 0; i < T_N; i++)
		shared[i] = 0;
	cuda = fork();
	if (cuda < 0)
		return -1;
	if (cuda == 0)
		cuda_child(with_ctx, closes);
	if (nvml && (other = fork()) == 0)
		nvml_child();
	waitpid(cuda, &status, 0);
	reaped = now_ms();
	if (other > 0)
		waitpid(other, NULL, 0);
	all = now_ms();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "cuda-teardown: %s: the CUDA child failed "
			"(libcuda.so.1 not loaded, or cuInit/cuDeviceGet/"
			"cuDevicePrimaryCtxRetain failed)\n", name);
		return -1;
	}
	printf("%-22s cuInit %6.1f  exit->reap %6.1f (closes %5.1f)  total %6.1f",
	       name, shared[T_WORKED] - shared[T_START],
	       reaped - shared[T_EXITING], shared[T_EXITING] - shared[T_WORKED],
	       all - t0);
	if (nvml)
		printf("  nvmlInit %6.1f  nvml gone %6.1f",
		       shared[T_NVML_DONE] - shared[T_NVML_START], all - t0);
	printf("\n");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;

	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	for (int r = 0; r < reps; r++)
		if (one("cuinit", 0, 0, 0) || one("cuinit+nvml", 0, 0, 1) ||
		    one("cuinit+ctx", 1, 0, 0))
			return 1;
	if (one("cuinit closes", 0, 1, 0) || one("cuinit+ctx closes", 1, 1, 0))
		return 1;
	return 0;
}
