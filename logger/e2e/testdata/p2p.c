/*
 * p2p.c: point-to-point end-to-end test program for the cpath logger.
 * Run with exactly 4 ranks. Every call count is fixed per rank except the
 * Test-family polling loops, whose iteration counts the program prints as
 *   CPATH-EXPECT rank=R MPI_Test=N MPI_Testall=N MPI_Testany=N MPI_Testsome=N MPI_Waitsome=N
 * so that the Go test (logger/e2e/p2p_test.go) can hold the logs to exact
 * counts. Message sizes are chosen so that every (source, tag) pair has a
 * distinct byte count where wildcards are involved: the test can then check
 * that the logger resolved MPI_ANY_SOURCE to the real sender.
 *
 * Keep this file and expectP2P in p2p_test.go in step.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "p2p: rank %d: check failed at line %d: %s\n",   \
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
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "p2p: run with 4 ranks, not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int even = rank % 2 == 0;
    int ibuf[64], ibuf2[64];
    double dbuf[64], dbuf2[64];
    MPI_Status st;
    MPI_Request rq[8];
    MPI_Status sts[8];
    int ntest = 0, ntestall = 0, ntestany = 0, ntestsome = 0, nwaitsome = 0;
    for (int i = 0; i < 64; i++) {
        ibuf[i] = rank * 100 + i;
        dbuf[i] = rank + i / 8.0;
    }

    /* A derived contiguous type: 3 doubles, 24 bytes. */
    MPI_Datatype tri;
    MPI_Type_contiguous(3, MPI_DOUBLE, &tri);
    MPI_Type_commit(&tri);

    /* 1. Blocking ring, tag 1: Send 10 ints (40 B) right, Recv from left. */
    if (even) {
        MPI_Send(ibuf, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(ibuf2, 10, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(ibuf2, 10, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        MPI_Send(ibuf, 10, MPI_INT, right, 1, MPI_COMM_WORLD);
    }
    CHECK(ibuf2[0] == left * 100);

    /* 2. Ssend ring, tag 2: 5 doubles (40 B); odd ranks receive first. */
    if (even) {
        MPI_Ssend(dbuf, 5, MPI_DOUBLE, right, 2, MPI_COMM_WORLD);
        MPI_Recv(dbuf2, 5, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(dbuf2, 5, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &st);
        MPI_Ssend(dbuf, 5, MPI_DOUBLE, right, 2, MPI_COMM_WORLD);
    }

    /* 3. Bsend ring, tag 3: 7 doubles (56 B) from an attached buffer. */
    {
        int bsz = 7 * sizeof(double) + MPI_BSEND_OVERHEAD + 64;
        void *bb = malloc(bsz);
        MPI_Buffer_attach(bb, bsz);
        MPI_Bsend(dbuf, 7, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
        MPI_Recv(dbuf2, 7, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st);
        MPI_Buffer_detach(&bb, &bsz);
        free(bb);
    }

    /* 4. Rsend ring, tag 4: the receive is posted before the barrier, so
     * the ready send after it is legal. 6 ints (24 B). */
    MPI_Irecv(ibuf2, 6, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(ibuf, 6, MPI_INT, right, 4, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &st);

    /* 5. Sendrecv, tag 5: 3 doubles (24 B) right, from left.
     * Sendrecv_replace, tag 6: 4 ints (16 B) left, from right. */
    MPI_Sendrecv(dbuf, 3, MPI_DOUBLE, right, 5, dbuf2, 3, MPI_DOUBLE, left, 5,
                 MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace(ibuf2, 4, MPI_INT, left, 6, right, 6, MPI_COMM_WORLD,
                         &st);

    /* 6. Isend/Irecv + Wait, tag 7: 8 ints (32 B). */
    MPI_Irecv(ibuf2, 8, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(ibuf, 8, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]);
    MPI_Wait(&rq[0], &st);
    MPI_Wait(&rq[1], &st);

    /* 7. Waitall, tag 8: 2 doubles (16 B) to and from both neighbours. */
    MPI_Irecv(dbuf2, 2, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(dbuf2 + 2, 2, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(dbuf, 2, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(dbuf, 2, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, sts);

    /* 8. Waitany, tag 9: 2 of the derived type (48 B) both ways. */
    MPI_Irecv(dbuf2, 2, tri, left, 9, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(dbuf2 + 6, 2, tri, right, 9, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(dbuf, 2, tri, left, 9, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(dbuf, 2, tri, right, 9, MPI_COMM_WORLD, &rq[3]);
    for (int i = 0; i < 4; i++) {
        int idx;
        MPI_Waitany(4, rq, &idx, &st);
        CHECK(idx != MPI_UNDEFINED);
    }

    /* 9. Waitsome, tag 10: 1 of the derived type (24 B) both ways. */
    MPI_Irecv(dbuf2, 1, tri, left, 10, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(dbuf2 + 3, 1, tri, right, 10, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(dbuf, 1, tri, left, 10, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(dbuf, 1, tri, right, 10, MPI_COMM_WORLD, &rq[3]);
    for (int done = 0; done < 4;) {
        int outcount, idx[4];
        MPI_Waitsome(4, rq, &outcount, idx, sts);
        nwaitsome++;
        CHECK(outcount != MPI_UNDEFINED);
        done += outcount;
    }

    /* 10. Test loop, tag 11: 9 ints (36 B). */
    {
        int flag = 0;
        MPI_Irecv(ibuf2, 9, MPI_INT, left, 11, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(ibuf, 9, MPI_INT, right, 11, MPI_COMM_WORLD, &rq[1]);
        while (!flag) {
            MPI_Test(&rq[0], &flag, &st);
            ntest++;
        }
        MPI_Wait(&rq[1], &st);
    }

    /* 11. Testall loop, tag 12: 11 ints (44 B). */
    {
        int flag = 0;
        MPI_Irecv(ibuf2, 11, MPI_INT, left, 12, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(ibuf, 11, MPI_INT, right, 12, MPI_COMM_WORLD, &rq[1]);
        while (!flag) {
            MPI_Testall(2, rq, &flag, sts);
            ntestall++;
        }
    }

    /* 12. Testany loop, tag 13: 12 ints (48 B); two completions needed. */
    {
        int got = 0;
        MPI_Irecv(ibuf2, 12, MPI_INT, left, 13, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(ibuf, 12, MPI_INT, right, 13, MPI_COMM_WORLD, &rq[1]);
        while (got < 2) {
            int idx, flag;
            MPI_Testany(2, rq, &idx, &flag, &st);
            ntestany++;
            if (flag && idx != MPI_UNDEFINED)
                got++;
        }
    }

    /* 13. Testsome loop, tag 14: 13 ints (52 B). */
    {
        int got = 0;
        MPI_Irecv(ibuf2, 13, MPI_INT, left, 14, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(ibuf, 13, MPI_INT, right, 14, MPI_COMM_WORLD, &rq[1]);
        while (got < 2) {
            int outcount, idx[2];
            MPI_Testsome(2, rq, &outcount, idx, sts);
            ntestsome++;
            CHECK(outcount != MPI_UNDEFINED);
            got += outcount;
        }
    }

    /* 14. Issend + Irecv + Waitall, tag 15: 14 ints (56 B). */
    MPI_Irecv(ibuf2, 14, MPI_INT, left, 15, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend(ibuf, 14, MPI_INT, right, 15, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);

    /* 15. Persistent requests, tag 16: 5 ints (20 B) right, from left, four
     * iterations: even ones Start+Wait each request, odd ones Startall +
     * Waitall. Then both requests are freed. */
    {
        MPI_Request prq[2];
        MPI_Recv_init(ibuf2, 5, MPI_INT, left, 16, MPI_COMM_WORLD, &prq[0]);
        MPI_Send_init(ibuf, 5, MPI_INT, right, 16, MPI_COMM_WORLD, &prq[1]);
        for (int it = 0; it < 4; it++) {
            if (it % 2 == 0) {
                MPI_Start(&prq[0]);
                MPI_Start(&prq[1]);
                MPI_Wait(&prq[0], &st);
                MPI_Wait(&prq[1], &st);
            } else {
                MPI_Startall(2, prq);
                MPI_Waitall(2, prq, sts);
            }
            CHECK(ibuf2[0] == left * 100);
        }
        MPI_Request_free(&prq[0]);
        MPI_Request_free(&prq[1]);
    }

    /* 16. MPI_ANY_SOURCE, blocking, tag 20: ranks 1..3 send 4*(r+1) ints
     * (16(r+1) B) to rank 0, which receives three times into a large
     * buffer. The byte count identifies the sender. */
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {
            int n;
            MPI_Recv(ibuf2, 64, MPI_INT, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(n == 4 * (st.MPI_SOURCE + 1));
        }
    } else {
        MPI_Send(ibuf, 4 * (rank + 1), MPI_INT, 0, 20, MPI_COMM_WORLD);
    }

    /* 17. MPI_ANY_SOURCE Irecv, tag 21: ranks 0, 2, 3 send 10+r ints to
     * rank 1, which posts three wildcard receives and waits for all. */
    if (rank == 1) {
        int bufs[3][64];
        for (int i = 0; i < 3; i++)
            MPI_Irecv(bufs[i], 64, MPI_INT, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(3, rq, sts);
        for (int i = 0; i < 3; i++) {
            int n;
            MPI_Get_count(&sts[i], MPI_INT, &n);
            CHECK(n == 10 + sts[i].MPI_SOURCE);
        }
    } else {
        MPI_Send(ibuf, 10 + rank, MPI_INT, 1, 21, MPI_COMM_WORLD);
    }

    /* 18. MPI_ANY_TAG, tag 22: rank 3 sends 2 ints (8 B) to rank 2. */
    if (rank == 3)
        MPI_Send(ibuf, 2, MPI_INT, 2, 22, MPI_COMM_WORLD);
    if (rank == 2) {
        MPI_Recv(ibuf2, 64, MPI_INT, 3, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_TAG == 22);
    }

    /* 19. Probe: rank 3 probes MPI_ANY_SOURCE for tag 30 (rank 2 sends 9
     * doubles, 72 B); rank 0 probes rank 1 for tag 31 (1 double, 8 B). */
    if (rank == 2)
        MPI_Send(dbuf, 9, MPI_DOUBLE, 3, 30, MPI_COMM_WORLD);
    if (rank == 3) {
        MPI_Probe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_SOURCE == 2);
        MPI_Recv(dbuf2, 9, MPI_DOUBLE, st.MPI_SOURCE, 30, MPI_COMM_WORLD, &st);
    }
    if (rank == 1)
        MPI_Send(dbuf, 1, MPI_DOUBLE, 0, 31, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Probe(1, 31, MPI_COMM_WORLD, &st);
        MPI_Recv(dbuf2, 1, MPI_DOUBLE, 1, 31, MPI_COMM_WORLD, &st);
    }

    /* 20. MPI_PROC_NULL, tag 40: a send of 3 ints (12 B) and a receive. */
    MPI_Send(ibuf, 3, MPI_INT, MPI_PROC_NULL, 40, MPI_COMM_WORLD);
    MPI_Recv(ibuf2, 3, MPI_INT, MPI_PROC_NULL, 40, MPI_COMM_WORLD, &st);

    /* 21. Peers on a sub-communicator, tag 50: Comm_split into even and odd
     * ranks (key = -rank, so local rank 0 is the higher world rank); local
     * rank 0 sends 5 doubles (40 B) to local rank 1 and gets 6 ints (24 B)
     * back through a wildcard receive. Logged peers must be world ranks. */
    {
        MPI_Comm sub;
        int srank;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sub);
        MPI_Comm_rank(sub, &srank);
        if (srank == 0) {
            MPI_Send(dbuf, 5, MPI_DOUBLE, 1, 50, sub);
            MPI_Recv(ibuf2, 64, MPI_INT, MPI_ANY_SOURCE, 51, sub, &st);
            CHECK(st.MPI_SOURCE == 1);
        } else {
            MPI_Recv(dbuf2, 5, MPI_DOUBLE, 0, 50, sub, &st);
            MPI_Send(ibuf, 6, MPI_INT, 0, 51, sub);
        }
        MPI_Comm_free(&sub);
    }

    MPI_Type_free(&tri);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("CPATH-EXPECT rank=%d MPI_Test=%d MPI_Testall=%d MPI_Testany=%d "
           "MPI_Testsome=%d MPI_Waitsome=%d\n",
           rank, ntest, ntestall, ntestany, ntestsome, nwaitsome);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
