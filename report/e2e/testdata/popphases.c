/*
 * popphases.c N1 C_US K_US M D_US N3 E_US BYTES [SCALE_RANK SCALE_PCT PHASE1_PCT]
 *
 * Three phases, each opened by MPI_Pcontrol (levels 1, 2, 3) after a
 * Barrier that lines the ranks up (P ranks, P even):
 *
 *   1. N1 times: rank r computes C_US + r*K_US, then MPI_Allreduce.
 *   2. a pipeline of M sweeps: rank r > 0 receives sweep s from rank r-1,
 *      computes D_US, and passes it on to rank r+1.
 *   3. N3 times: every rank computes E_US, then MPI_Sendrecv of BYTES
 *      with its partner r^1 (a transfer that takes time of its own).
 *
 * The knobs change the program: rank SCALE_RANK's computation everywhere
 * is SCALE_PCT % of the above (what-if balance:R / rank:R=F), and phase
 * 1's computation on every rank PHASE1_PCT % (what-if callsite:X=F for X
 * the call site of phase 1's MPI_Allreduce).
 *
 * Known by construction (useful computation: outside MPI):
 *   phase 1: load balance = mean(C+rK)/(C+(P-1)K), serialisation 1
 *            (the slowest rank's chain is the ideal run), transfer ~1;
 *   phase 2: load balance 1, serialisation M/(M+P-1) (sweep s runs on
 *            rank r in [(s+r)D, (s+r+1)D]), transfer ~1;
 *   phase 3: load balance 1, serialisation 1, transfer = N3*E over the
 *            phase's length (the exchanges' time, measured in the logs).
 *
 * The ranks "compute" by sleeping to a deadline on the logger's clock:
 * four ranks on a two-core machine would share the cores in busy loops
 * (phase 1 has them all compute at once), stretching each loop by the time
 * the rank is not scheduled; asleep, a stretch is its design plus a
 * wake-up. For the analyzer either is time outside MPI.
 */
#include <errno.h>
#include <string.h>

#include "spin.h"

/* nap_us returns once CLOCK_MONOTONIC has advanced by d microseconds. */
static void nap_us(long us)
{
    if (us <= 0)
        return;
    int64_t end = now_ns() + (int64_t)us * 1000;
    struct timespec ts = {.tv_sec = end / 1000000000, .tv_nsec = end % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

int main(int argc, char **argv)
{
    const char *prog = "popphases";
    int rank, size;
    /* The buffers are set up before MPI_Init: their page faults would be
     * computation of phase 0. */
    long nbytes = argc > 8 ? atol(argv[8]) : 0;
    size_t alloc = nbytes > 0 ? (size_t)nbytes : 1;
    char *out = malloc(alloc), *in = malloc(alloc);
    if (out != NULL && in != NULL) {
        memset(out, 0, alloc);
        memset(in, 0, alloc);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    USAGE(prog, argc == 9 || argc == 12,
          "usage: popphases N1 C_US K_US M D_US N3 E_US BYTES [SCALE_RANK SCALE_PCT PHASE1_PCT]");
    USAGE(prog, size % 2 == 0, "needs an even number of ranks");
    long n1 = arg_long(prog, argv, 1), c = arg_long(prog, argv, 2), k = arg_long(prog, argv, 3);
    long m = arg_long(prog, argv, 4), d = arg_long(prog, argv, 5);
    long n3 = arg_long(prog, argv, 6), e = arg_long(prog, argv, 7), bytes = arg_long(prog, argv, 8);
    long scaleRank = -1, scalePct = 100, phase1Pct = 100;
    if (argc == 12) {
        scaleRank = arg_long(prog, argv, 9);
        scalePct = arg_long(prog, argv, 10);
        phase1Pct = arg_long(prog, argv, 11);
    }
    long pct = rank == scaleRank ? scalePct : 100;
#define WORK(us) nap_us((us) * pct / 100)

    CHECK(prog, rank, out != NULL && in != NULL && bytes == nbytes);
    out[0] = (char)rank;

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    for (long i = 0; i < n1; i++) {
        WORK((c + rank * k) * phase1Pct / 100);
        double v = rank + i, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(prog, rank, sum == (double)size * (size - 1) / 2 + (double)size * i);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(2);
    for (long s = 0; s < m; s++) {
        long token = s;
        if (rank > 0) {
            MPI_Recv(&token, 1, MPI_LONG, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(prog, rank, token == s);
        }
        WORK(d);
        if (rank < size - 1)
            MPI_Send(&token, 1, MPI_LONG, rank + 1, 7, MPI_COMM_WORLD);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(3);
    int partner = rank ^ 1;
    for (long i = 0; i < n3; i++) {
        WORK(e);
        MPI_Sendrecv(out, (int)bytes, MPI_BYTE, partner, 9, in, (int)bytes, MPI_BYTE, partner, 9,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(prog, rank, bytes == 0 || in[0] == (char)partner);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
