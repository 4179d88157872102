// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The guest's ceilings for moving and checking data, in MB/s, one line each
 * ("ceiling NAME MB/s"), for `make bench` to print beside the devices:
 *
 *   memcpy        user space memcpy() of 64 KiB blocks (what a one-copy
 *                 transport could do if the kernel copied as fast)
 *   pread         pread() of a file in page cache, 64 KiB at a time: the
 *                 kernel's copy to user pages, behind a page cache lookup
 *   kernel_copy   process_vm_readv() of 64 KiB from this process to itself:
 *                 the kernel pins the source pages and copies them to the
 *                 destination, as the local transport does; its ceiling
 *   crc32         the kernel's crypto API "crc32" over 64 KiB (AF_ALG): the
 *                 ICRC as rdma_rxe computes it, whichever driver backs it
 *   crc32_le      the same through "crc32-generic": lib/crc32's crc32_le(),
 *                 as softrma computes the ICRC
 *
 * Every RoCEv2 packet pays its ICRC once when sent and once when received,
 * so on one host the CRC is the wire path's ceiling.
 *
 * usage: ceiling TMPFILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/if_alg.h>

#define BLOCK		(64 << 10)
#define FILE_BYTES	(64 << 20)
#define SECONDS		1.0

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void report(const char *name, double bytes, double secs)
{
	printf("ceiling %-12s %8.0f MB/s\n", name, bytes / secs / 1e6);
}

static void ceiling_memcpy(void)
{
	char *src = malloc(BLOCK), *dst = malloc(BLOCK);
	double start = now(), bytes = 0;

	if (!src || !dst) {
		perror("malloc");
		exit(1);
	}
	memset(src, 0x5a, BLOCK);
	memset(dst, 0, BLOCK);
	do {
		for (int i = 0; i < 64; i++) {
			memcpy(dst, src, BLOCK);
			/* Keep the copy: the compiler must not drop it. */
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		bytes += 64.0 * BLOCK;
	} while (now() - start < SECONDS);
	report("memcpy", bytes, now() - start);
	free(src);
	free(dst);
}

static void ceiling_pread(const char *path)
{
	char *buf = malloc(BLOCK);
	double start, bytes = 0;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf) {
		perror(path);
		exit(1);
	}
	memset(buf, 0x5a, BLOCK);
	for (off_t off = 0; off < FILE_BYTES; off += BLOCK)
		if (pwrite(fd, buf, BLOCK, off) != BLOCK) {
			perror("pwrite");
			exit(1);
		}
	start = now();
	do {
		for (off_t off = 0; off < FILE_BYTES; off += BLOCK)
			if (pread(fd, buf, BLOCK, off) != BLOCK) {
				perror("pread");
				exit(1);
			}
		bytes += FILE_BYTES;
	} while (now() - start < SECONDS);
	report("pread", bytes, now() - start);
	close(fd);
	unlink(path);
	free(buf);
}

static void ceiling_kernel_copy(void)
{
	char *src = malloc(BLOCK), *dst = malloc(BLOCK);
	struct iovec local = { .iov_base = dst, .iov_len = BLOCK };
	struct iovec remote = { .iov_base = src, .iov_len = BLOCK };
	double start, bytes = 0;
	pid_t self = getpid();

	if (!src || !dst) {
		perror("malloc");
		exit(1);
	}
	memset(src, 0x5a, BLOCK);
	memset(dst, 0, BLOCK);
	start = now();
	do {
		for (int i = 0; i < 64; i++)
			if (process_vm_readv(self, &local, 1, &remote, 1, 0) != BLOCK) {
				perror("process_vm_readv");
				exit(1);
			}
		bytes += 64.0 * BLOCK;
	} while (now() - start < SECONDS);
	report("kernel_copy", bytes, now() - start);
	free(src);
	free(dst);
}

static void ceiling_crc(const char *name, const char *alg)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "hash" };
	char *buf = malloc(BLOCK), digest[4];
	double start, bytes = 0;
	int tfm, op;

	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", alg);
	tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm < 0 || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (op = accept(tfm, NULL, 0)) < 0 || !buf) {
		printf("ceiling %-12s unavailable (%s: %s)\n", name, alg,
		       strerror(errno));
		return;
	}
	memset(buf, 0x5a, BLOCK);
	start = now();
	do {
		for (int i = 0; i < 64; i++)
			if (send(op, buf, BLOCK, 0) != BLOCK ||
			    read(op, digest, sizeof(digest)) != sizeof(digest)) {
				perror(alg);
				exit(1);
			}
		bytes += 64.0 * BLOCK;
	} while (now() - start < SECONDS);
	report(name, bytes, now() - start);
	close(op);
	close(tfm);
	free(buf);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ceiling TMPFILE\n");
		return 2;
	}
	ceiling_memcpy();
	ceiling_pread(argv[1]);
	ceiling_kernel_copy();
	ceiling_crc("crc32", "crc32");
	ceiling_crc("crc32_le", "crc32-generic");
	return 0;
}
