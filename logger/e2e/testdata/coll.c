/*
 * coll.c: collective end-to-end test program for the cpath logger.
 * Run with exactly 4 ranks. Every call count is fixed per rank; the order
 * of collectives on each communicator (and so each Seq number) is fixed
 * too. Keep this file and expectColl in coll_test.go in step.
 *
 * Communicators, in creation order (every rank calls every constructor):
 *   split  Comm_split(world, rank%2, rank): {0,2} and {1,3}
 *   dup    Comm_dup(world)                : {0,1,2,3}
 *   cart   Cart_create(world, 2x2)        : {0,1,2,3}
 *   row    Cart_sub(cart, {0,1})          : {0,1} and {2,3}
 *   part   Comm_create(world, {3,1,2})    : local order 3,1,2; NULL on rank 0
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4
#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "coll: rank %d: check failed at line %d: %s\n",  \
                    rank, __LINE__, #c);                                     \
            MPI_Abort(MPI_COMM_WORLD, 2);                                    \
        }                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != N) {
        if (rank == 0)
            fprintf(stderr, "coll: run with %d ranks, not %d\n", N, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm w = MPI_COMM_WORLD;
    int ib[64], ir[64], bc[64];
    double db[64], dr[64];
    int cnt[N], dsp[N], rcnt[N], rdsp[N], scnt[N], sdsp[N];
    MPI_Datatype sty[N], rty[N];
    MPI_Request rq[8];
    for (int i = 0; i < 64; i++) {
        ib[i] = rank + i;
        db[i] = rank * 0.5 + i;
    }
    /* v-forms: rank r contributes r+1 elements; every Alltoallv/w block
     * from rank r is r+1 ints, placed 8 ints apart. */
    for (int i = 0; i < N; i++) {
        cnt[i] = i + 1;
        dsp[i] = 8 * i;
        scnt[i] = rank + 1;
        sdsp[i] = 8 * i;
        rcnt[i] = i + 1;
        rdsp[i] = 8 * i;
        sty[i] = MPI_INT;
        rty[i] = MPI_INT;
    }
    int sdspb[N], rdspb[N]; /* Alltoallw takes byte displacements */
    for (int i = 0; i < N; i++) {
        sdspb[i] = sdsp[i] * (int)sizeof(int);
        rdspb[i] = rdsp[i] * (int)sizeof(int);
    }
    int rscnt[N] = {1, 2, 3, 4}; /* Reduce_scatter: rank r gets r+1 ints */

    /* World, blocking: Seq 1..17. */
    MPI_Barrier(w);                                              /* 1 */
    MPI_Bcast(bc, 5, MPI_INT, 1, w);                             /* 2 */
    MPI_Reduce(db, dr, 3, MPI_DOUBLE, MPI_SUM, 2, w);            /* 3 */
    MPI_Allreduce(ib, ir, 6, MPI_INT, MPI_MAX, w);               /* 4 */
    MPI_Gather(ib, 2, MPI_INT, ir, 2, MPI_INT, 0, w);            /* 5 */
    MPI_Gatherv(ib, rank + 1, MPI_INT, ir, cnt, dsp, MPI_INT, 3, w); /* 6 */
    MPI_Scatter(db, 2, MPI_DOUBLE, dr, 2, MPI_DOUBLE, 1, w);     /* 7 */
    MPI_Scatterv(ib, cnt, dsp, MPI_INT, ir, rank + 1, MPI_INT, 2, w); /* 8 */
    MPI_Allgather(db, 1, MPI_DOUBLE, dr, 1, MPI_DOUBLE, w);      /* 9 */
    MPI_Allgatherv(ib, rank + 1, MPI_INT, ir, cnt, dsp, MPI_INT, w); /* 10 */
    MPI_Alltoall(ib, 3, MPI_INT, ir, 3, MPI_INT, w);             /* 11 */
    MPI_Alltoallv(ib, scnt, sdsp, MPI_INT, ir, rcnt, rdsp, MPI_INT, w); /* 12 */
    MPI_Alltoallw(ib, scnt, sdspb, sty, ir, rcnt, rdspb, rty, w); /* 13 */
    MPI_Reduce_scatter(ib, ir, rscnt, MPI_INT, MPI_SUM, w);      /* 14 */
    MPI_Reduce_scatter_block(db, dr, 2, MPI_DOUBLE, MPI_SUM, w); /* 15 */
    MPI_Scan(ib, ir, 4, MPI_INT, MPI_SUM, w);                    /* 16 */
    MPI_Exscan(db, dr, 3, MPI_DOUBLE, MPI_SUM, w);               /* 17 */
    CHECK(ir[0] == rank * (rank + 1) / 2);

    /* World, non-blocking: Seq 18..34; 4 Wait, 3 Waitall. */
    MPI_Ibarrier(w, &rq[0]);                                     /* 18 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Ibcast(bc, 5, MPI_INT, 1, w, &rq[0]);                    /* 19 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Ireduce(db, dr, 3, MPI_DOUBLE, MPI_SUM, 2, w, &rq[0]);   /* 20 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Iallreduce(ib, ir, 6, MPI_INT, MPI_MAX, w, &rq[0]);      /* 21 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);

    MPI_Igather(ib, 2, MPI_INT, ir, 2, MPI_INT, 0, w, &rq[0]);   /* 22 */
    MPI_Igatherv(ib + 16, rank + 1, MPI_INT, ir + 16, cnt, dsp, MPI_INT, 3, w,
                 &rq[1]);                                        /* 23 */
    MPI_Iscatter(db, 2, MPI_DOUBLE, dr, 2, MPI_DOUBLE, 1, w, &rq[2]); /* 24 */
    MPI_Iscatterv(ib + 32, cnt, dsp, MPI_INT, ir + 48, rank + 1, MPI_INT, 2, w,
                  &rq[3]);                                       /* 25 */
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);

    MPI_Iallgather(db, 1, MPI_DOUBLE, dr, 1, MPI_DOUBLE, w, &rq[0]); /* 26 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    {
        /* Separate buffers for requests that are in flight together. */
        static int a[64], b[64], c[64], d[64], e[64], f[64];
        MPI_Iallgatherv(ib, rank + 1, MPI_INT, a, cnt, dsp, MPI_INT, w,
                        &rq[0]);                                 /* 27 */
        MPI_Ialltoall(ib, 3, MPI_INT, b, 3, MPI_INT, w, &rq[1]); /* 28 */
        MPI_Ialltoallv(ib, scnt, sdsp, MPI_INT, c, rcnt, rdsp, MPI_INT, w,
                       &rq[2]);                                  /* 29 */
        MPI_Ialltoallw(ib, scnt, sdspb, sty, d, rcnt, rdspb, rty, w,
                       &rq[3]);                                  /* 30 */
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        MPI_Ireduce_scatter(ib, e, rscnt, MPI_INT, MPI_SUM, w, &rq[0]); /* 31 */
        MPI_Ireduce_scatter_block(db, dr, 2, MPI_DOUBLE, MPI_SUM, w,
                                  &rq[1]);                       /* 32 */
        MPI_Iscan(ib, f, 4, MPI_INT, MPI_SUM, w, &rq[2]);        /* 33 */
        MPI_Iexscan(db + 8, dr + 8, 3, MPI_DOUBLE, MPI_SUM, w, &rq[3]); /* 34 */
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        CHECK(f[0] == rank * (rank + 1) / 2);
    }

    /* split: {0,2}, {1,3}. World Seq 35. On split: Seq 1..6. */
    MPI_Comm split;
    MPI_Comm_split(w, rank % 2, rank, &split);                   /* w 35 */
    MPI_Allreduce(ib, ir, 2, MPI_INT, MPI_SUM, split);           /* 1 */
    MPI_Bcast(db, 4, MPI_DOUBLE, 1, split);                      /* 2 */
    MPI_Reduce(ib, ir, 3, MPI_INT, MPI_SUM, 0, split);           /* 3 */
    MPI_Barrier(split);                                          /* 4 */
    MPI_Ibcast(bc, 7, MPI_INT, 1, split, &rq[0]);                /* 5 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Comm_free(&split);                                       /* 6 */

    /* dup: World Seq 36. On dup: Seq 1..6. */
    MPI_Comm dup;
    MPI_Comm_dup(w, &dup);                                       /* w 36 */
    ir[0] = rank;
    MPI_Allreduce(MPI_IN_PLACE, ir, 1, MPI_INT, MPI_SUM, dup);   /* 1 */
    CHECK(ir[0] == 6);
    MPI_Gather(db, 3, MPI_DOUBLE, dr, 3, MPI_DOUBLE, 3, dup);    /* 2 */
    MPI_Iallreduce(ib, ir, 1, MPI_INT, MPI_SUM, dup, &rq[0]);    /* 3 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    /* In place: each rank's own rank+1 ints are already at its place in
     * the receive buffer; they are what it contributes. */
    for (int i = 0; i <= rank; i++)
        ir[dsp[rank] + i] = rank;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ir, cnt, dsp, MPI_INT, dup); /* 4 */
    CHECK(ir[dsp[3] + 3] == 3 && ir[dsp[1]] == 1);
    MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ir, cnt, dsp, MPI_INT, dup, &rq[0]); /* 5 */
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Comm_free(&dup);                                         /* 6 */

    /* cart: 2x2, no reorder. World Seq 37. On cart: Seq 1..4. */
    MPI_Comm cart, row;
    int dims[2] = {2, 2}, periods[2] = {0, 0}, remain[2] = {0, 1};
    MPI_Cart_create(w, 2, dims, periods, 0, &cart);              /* w 37 */
    MPI_Barrier(cart);                                           /* 1 */
    MPI_Allgather(ib, 1, MPI_INT, ir, 1, MPI_INT, cart);         /* 2 */
    MPI_Cart_sub(cart, remain, &row);                            /* 3 */
    /* row: {0,1}, {2,3}. Seq 1..4. */
    MPI_Allreduce(db, dr, 2, MPI_DOUBLE, MPI_MIN, row);          /* 1 */
    MPI_Scan(ib, ir, 1, MPI_INT, MPI_SUM, row);                  /* 2 */
    MPI_Bcast(bc, 3, MPI_INT, 1, row);                           /* 3 */
    MPI_Comm_free(&row);                                         /* 4 */
    MPI_Comm_free(&cart);                                        /* cart 4 */

    /* part: Comm_create of group {3,1,2} (local rank 0 is world 3); rank 0
     * gets MPI_COMM_NULL. World Seq 38. On part: Seq 1..3. */
    {
        MPI_Group wg, pg;
        int members[3] = {3, 1, 2};
        MPI_Comm part;
        MPI_Comm_group(w, &wg);
        MPI_Group_incl(wg, 3, members, &pg);
        MPI_Comm_create(w, pg, &part);                           /* w 38 */
        CHECK((part == MPI_COMM_NULL) == (rank == 0));
        if (part != MPI_COMM_NULL) {
            MPI_Bcast(bc, 2, MPI_INT, 2, part); /* 1: root local 2 = world 2 */
            MPI_Allreduce(ib, ir, 5, MPI_INT, MPI_SUM, part);    /* 2 */
            MPI_Comm_free(&part);                                /* 3 */
        }
        MPI_Group_free(&pg);
        MPI_Group_free(&wg);
    }

    MPI_Barrier(w);                                              /* w 39 */
    MPI_Finalize();
    return 0;
}
