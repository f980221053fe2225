/*
 * ioslow.c MODE COMPUTE_US SLOW_US SLOW FILE
 *
 * Every rank opens FILE on MPI_COMM_WORLD, a Barrier aligns them, each
 * computes COMPUTE_US and writes 64 bytes of its own at offset 64*rank:
 *   MODE coll : all with MPI_File_write_at_all;
 *   MODE indep: rank SLOW alone, with MPI_File_write_at.
 * Rank SLOW's write is made SLOW_US slower inside the MPI call: the
 * program defines the file-writing functions of libc (pwrite, pwritev,
 * write, writev and their 64-bit names; linked with -rdynamic, so that
 * Open MPI's I/O components call them), which busy-wait SLOW_US once,
 * at the first write after the rank arms them. Open MPI's collective
 * write must let every rank write its own part (run with
 * OMPI_MCA_fcoll=individual), so the slowness is in rank SLOW's call.
 * Then every rank computes COMPUTE_US, a Barrier ends the design and the
 * file is closed.
 *
 * Known by construction (C = COMPUTE_US, S = SLOW_US):
 *   critical path: rank SLOW's write, S of I/O ("io"), not computation;
 *   the other ranks wait S (in the collective write or the Barrier after
 *   it), each.
 * Rank SLOW prints "ioslow: spun NS in OP" with the time spent in the
 * armed write and the call it was in, so that the test knows the
 * slowness happened inside the MPI call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "spin.h"

static volatile long armed_us; /* > 0: the next file write spins this long */
static volatile int64_t spun_ns;

static void slow_down(void)
{
    long us = armed_us;
    if (us > 0) {
        armed_us = 0;
        int64_t t0 = now_ns();
        spin_us(us);
        spun_ns += now_ns() - t0;
    }
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    slow_down();
    return REAL(pwrite)(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    slow_down();
    return REAL(pwrite64)(fd, buf, n, off);
}
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    slow_down();
    return REAL(pwritev)(fd, iov, n, off);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
    slow_down();
    return REAL(pwritev64)(fd, iov, n, off);
}
ssize_t write(int fd, const void *buf, size_t n)
{
    slow_down();
    return REAL(write)(fd, buf, n);
}
ssize_t writev(int fd, const struct iovec *iov, int n)
{
    slow_down();
    return REAL(writev)(fd, iov, n);
}

int main(int argc, char **argv)
{
    const char *prog = "ioslow";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 6, "usage: ioslow coll|indep COMPUTE_US SLOW_US SLOW FILE");
    int coll = strcmp(argv[1], "coll") == 0;
    USAGE(prog, coll || strcmp(argv[1], "indep") == 0, "MODE must be coll or indep");
    long compute = arg_long(prog, argv, 2), slow_us = arg_long(prog, argv, 3);
    long slow = arg_long(prog, argv, 4);
    USAGE(prog, slow < size, "SLOW must be a rank of MPI_COMM_WORLD");

    MPI_File fh;
    CHECK(prog, rank, MPI_File_open(MPI_COMM_WORLD, argv[5], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                    MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    char buf[64];
    memset(buf, 'a' + rank, sizeof buf);
    MPI_Barrier(MPI_COMM_WORLD);

    spin_us(compute);
    if (rank == slow)
        armed_us = slow_us;
    if (coll)
        CHECK(prog, rank, MPI_File_write_at_all(fh, 64 * rank, buf, 64, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    else if (rank == slow)
        CHECK(prog, rank, MPI_File_write_at(fh, 64 * rank, buf, 64, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (rank == slow) {
        CHECK(prog, rank, armed_us == 0); /* the write went through the functions above */
        printf("ioslow: spun %lld in %s\n", (long long)spun_ns,
               coll ? "MPI_File_write_at_all" : "MPI_File_write_at");
        fflush(stdout);
    }
    spin_us(compute);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
