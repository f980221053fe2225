/*
 * spin.h: helpers shared by the designed-timing test programs.
 *
 * Computation is a busy loop on the wall clock: spin_us(d) returns once
 * CLOCK_MONOTONIC (the logger's clock) has advanced by d microseconds. It
 * never sleeps, so the rank keeps its core and the stretch between two MPI
 * calls in the log is d, not d plus a scheduler wake-up.
 */
#ifndef CPATH_SPIN_H
#define CPATH_SPIN_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* sink keeps the loop body from being optimised away. */
static volatile uint64_t spin_sink;

static void spin_us(long us)
{
    if (us <= 0)
        return;
    int64_t end = now_ns() + (int64_t)us * 1000;
    uint64_t x = spin_sink;
    while (now_ns() < end) {
        for (int i = 0; i < 64; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    spin_sink = x;
}

/* arg_long parses argv[i] as a non-negative integer or aborts the job. */
static long arg_long(const char *prog, char **argv, int i)
{
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "%s: argument %d (%s) is not a non-negative integer\n", prog, i, argv[i]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

#define USAGE(prog, cond, msg)                                               \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s: %s\n", prog, msg);                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

#define CHECK(prog, rank, c)                                                 \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "%s: rank %d: check failed at line %d: %s\n",    \
                    prog, rank, __LINE__, #c);                               \
            MPI_Abort(MPI_COMM_WORLD, 3);                                    \
        }                                                                    \
    } while (0)

#endif
