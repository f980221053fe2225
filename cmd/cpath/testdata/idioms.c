/*
 * idioms.c: MPI idioms real programs use, each of which once misled the
 * analysis, run ITER times (argument 1; default 10), at any number of
 * ranks >= 2:
 *   - point-to-point and a Barrier and an Allreduce on an intercommunicator
 *     (two halves of MPI_COMM_WORLD), then MPI_Intercomm_merge;
 *   - a message to the rank itself;
 *   - MPI_Ibarrier polled with MPI_Test (the path fell short of the run);
 *   - MPI_Issend to the next rank, MPI_Probe with MPI_ANY_SOURCE, Recv;
 *   - MPI_Sendrecv with MPI_ANY_SOURCE, MPI_Sendrecv_replace;
 *   - MPI_Alltoallv and MPI_Gatherv where some ranks pass 0 elements,
 *     and 0-element MPI_Allreduce and MPI_Bcast (a late root's 0-byte
 *     Bcast moved clocks by milliseconds);
 *   - Reduce_scatter_block, Scan, Exscan on a sub-communicator without
 *     the last rank (MPI_UNDEFINED);
 *   - MPI_Neighbor_alltoall on a periodic ring;
 *   - MPI_Bsend to everyone received with Irecv and polled MPI_Testsome;
 *   - MPI_Improbe polled, then MPI_Mrecv (a run of probes that found
 *     nothing was taken for a receive: a cycle);
 *   - MPI_Isend with its request freed at once (MPI_Request_free), as
 *     LAMMPS does, then a blocking send of the same tag.
 * The ranks compute for different times between the steps.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 10;
    if (size < 2) {
        fprintf(stderr, "idioms: run with at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const int n = 64;
    double *a = calloc(n * size, sizeof(double)), *b = calloc(n * size, sizeof(double));
    int *sc = calloc(size, sizeof(int)), *sd = calloc(size, sizeof(int));
    int *rc = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
    int *gc = calloc(size, sizeof(int)), *gd = calloc(size, sizeof(int));
    double *freed = calloc(iters + 1, sizeof(double));
    for (int i = 0; i < size; i++) {
        sc[i] = (rank + i) % 3 == 0 ? 0 : n / 2;
        sd[i] = rd[i] = gd[i] = i * n;
        gc[i] = i % 2 ? n : 0;
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);

    int color = rank % 2, hr, rsize;
    MPI_Comm half, inter, merged, sub, ring;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Comm_rank(half, &hr);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 0, rank, &sub);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int bsize = 1 << 16;
    void *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);

    double x = rank, y = 0;
    for (int it = 0; it < iters; it++) {
        usleep(200 * ((rank + it) % size + 1));
        if (hr < rsize) {
            if (color == 0) {
                MPI_Send(&x, 1, MPI_DOUBLE, hr, it, inter);
                MPI_Recv(&y, 1, MPI_DOUBLE, hr, it, inter, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&y, 1, MPI_DOUBLE, hr, it, inter, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_DOUBLE, hr, it, inter);
            }
        }
        MPI_Barrier(inter);

        MPI_Request rq[2];
        MPI_Isend(&x, 1, MPI_DOUBLE, rank, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Recv(&y, 1, MPI_DOUBLE, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);

        int done = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
        while (!done)
            MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE);

        MPI_Status st;
        MPI_Issend(&x, 1, MPI_DOUBLE, next, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
        MPI_Recv(&y, 1, MPI_DOUBLE, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        MPI_Sendrecv(&x, 1, MPI_DOUBLE, next, 8, &y, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(a, 4, MPI_DOUBLE, next, 13, prev, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

        usleep(100 * (size - rank));
        MPI_Alltoallv(a, sc, sd, MPI_DOUBLE, b, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Gatherv(a, rank % 2 ? n : 0, MPI_DOUBLE, b, gc, gd, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, a, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(a, 0, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
        if (sub != MPI_COMM_NULL) {
            double s, e;
            MPI_Reduce_scatter_block(a, b, 2, MPI_DOUBLE, MPI_SUM, sub);
            MPI_Scan(a, &s, 1, MPI_DOUBLE, MPI_SUM, sub);
            MPI_Exscan(a, &e, 1, MPI_DOUBLE, MPI_SUM, sub);
        }
        MPI_Neighbor_alltoall(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, ring);

        MPI_Request rr[64];
        int k = 0, left;
        for (int i = 0; i < size && k < 64; i++)
            if (i != rank)
                MPI_Irecv(b + i * n, 4, MPI_DOUBLE, i, 11, MPI_COMM_WORLD, &rr[k++]);
        for (int i = 0; i < size && i < 64; i++)
            if (i != rank)
                MPI_Bsend(a, 4, MPI_DOUBLE, i, 11, MPI_COMM_WORLD);
        for (left = k; left > 0;) {
            int outc, idx[64];
            MPI_Testsome(k, rr, &outc, idx, MPI_STATUSES_IGNORE);
            if (outc == MPI_UNDEFINED)
                break;
            left -= outc;
        }

        int flag = 0;
        MPI_Message msg;
        MPI_Isend(a, 8, MPI_DOUBLE, next, 12, MPI_COMM_WORLD, &rq[0]);
        while (!flag)
            MPI_Improbe(prev, 12, MPI_COMM_WORLD, &flag, &msg, &st);
        MPI_Mrecv(b, 8, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
        MPI_Waitall(1, rq, MPI_STATUSES_IGNORE);

        freed[it] = x;
        MPI_Isend(&freed[it], 1, MPI_DOUBLE, next, 14, MPI_COMM_WORLD, &rq[0]);
        MPI_Request_free(&rq[0]);
        MPI_Recv(&y, 1, MPI_DOUBLE, prev, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_DOUBLE, next, 14, MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_DOUBLE, prev, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double s;
    MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, inter);
    MPI_Intercomm_merge(inter, color, &merged);
    MPI_Bcast(&s, 1, MPI_DOUBLE, 0, merged);
    MPI_Buffer_detach(&bbuf, &bsize);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Comm_free(&ring);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0)
        printf("idioms: %d iterations on %d ranks\n", iters, size);
    return 0;
}
