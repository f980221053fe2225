/*
 * more.c: the rest of the logger's call list (SPEC §2) for the end-to-end
 * tests: the other send modes and persistent inits, the other communicator
 * constructors (idup, split_type, create_group, graph, dist_graph,
 * intercomm create/merge), MPI_Pcontrol, and MPI_THREAD_MULTIPLE.
 * Run with exactly 4 ranks and one argument naming the part to run:
 *   calls    send modes and constructors (MPI_Init)
 *   pause    MPI_Pcontrol(0) ... MPI_Pcontrol(1) (MPI_Init)
 *   threads  two threads per rank communicating at once (MPI_Init_thread)
 * Keep this file and more_test.go in step.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NP 4
static int rank, right, left;

#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "more: rank %d: check failed at line %d: %s\n",  \
                    rank, __LINE__, #c);                                     \
            MPI_Abort(MPI_COMM_WORLD, 2);                                    \
        }                                                                    \
    } while (0)

static void setup(void)
{
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != NP) {
        if (rank == 0)
            fprintf(stderr, "more: run with %d ranks, not %d\n", NP, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    right = (rank + 1) % NP;
    left = (rank + NP - 1) % NP;
}

static void calls(void)
{
    int ib[16] = {0}, ir[16];
    double db[16] = {0}, dr[16];
    MPI_Request rq[4];
    MPI_Status st;
    char bsendbuf[1024];
    void *bb;
    int bsz;
    for (int i = 0; i < 16; i++)
        ib[i] = rank + i;

    /* 1. Ibsend, tag 1: 4 ints (16 B) right. */
    MPI_Buffer_attach(bsendbuf, sizeof bsendbuf);
    MPI_Ibsend(ib, 4, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv(ir, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq[0], &st);
    MPI_Buffer_detach(&bb, &bsz);

    /* 2. Irsend, tag 2: 3 doubles (24 B); the receive is posted before the
     * barrier. */
    MPI_Irecv(dr, 3, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irsend(db, 3, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);

    /* 3. Ssend_init, tag 3: 2 ints (8 B), two rounds of Startall+Waitall. */
    MPI_Recv_init(ir, 2, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Ssend_init(ib, 2, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]);
    for (int it = 0; it < 2; it++) {
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);

    /* 4. Bsend_init, tag 4: 5 ints (20 B), Start each, Waitall. */
    MPI_Buffer_attach(bsendbuf, sizeof bsendbuf);
    MPI_Recv_init(ir, 5, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Bsend_init(ib, 5, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]);
    MPI_Start(&rq[0]);
    MPI_Start(&rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    MPI_Buffer_detach(&bb, &bsz);

    /* 5. Rsend_init, tag 5: 1 double (8 B); receive started before the
     * barrier, ready send after it. */
    MPI_Recv_init(dr, 1, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Rsend_init(db, 1, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &rq[1]);
    MPI_Start(&rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Start(&rq[1]);
    MPI_Wait(&rq[0], &st);
    MPI_Wait(&rq[1], &st);
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);

    /* 6. Comm_split_type(SHARED): one node, so all four ranks. */
    {
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Barrier(node);
        MPI_Comm_free(&node);
    }

    /* 7. Comm_create_group: only ranks 3 and 1 (in that order) call it. */
    if (rank == 1 || rank == 3) {
        MPI_Group wg, g;
        MPI_Comm c;
        int members[2] = {3, 1};
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, 2, members, &g);
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c);
        MPI_Allreduce(ib, ir, 1, MPI_INT, MPI_SUM, c);
        CHECK(ir[0] == 4);
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
    }

    /* 8. Graph_create: a ring, no reordering. */
    {
        int index[NP], edges[2 * NP];
        MPI_Comm g;
        for (int i = 0; i < NP; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + NP - 1) % NP;
            edges[2 * i + 1] = (i + 1) % NP;
        }
        MPI_Graph_create(MPI_COMM_WORLD, NP, index, edges, 0, &g);
        MPI_Barrier(g);
        MPI_Comm_free(&g);
    }

    /* 9. Dist_graph_create_adjacent: both ring neighbours. */
    {
        int nb[2] = {left, right};
        MPI_Comm g;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        MPI_Barrier(g);
        MPI_Comm_free(&g);
    }

    /* 10. Dist_graph_create: each rank names its edge to the right. */
    {
        int src = rank, deg = 1, dst = right;
        MPI_Comm g;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, MPI_UNWEIGHTED,
                              MPI_INFO_NULL, 0, &g);
        MPI_Barrier(g);
        MPI_Comm_free(&g);
    }

    /* 11. Intercommunicator between the even {0,2} and odd {1,3} ranks:
     * world 0 sends 6 ints (24 B, tag 8) to remote rank 1 (world 3), world
     * 1 to remote rank 1 (world 2). Then Intercomm_merge with the even
     * group low: {0,2,1,3}, and an Allreduce on it. */
    {
        MPI_Comm split, inter, merged;
        int lr;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
        MPI_Intercomm_create(split, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
        MPI_Comm_rank(inter, &lr);
        if (lr == 0)
            MPI_Send(ib, 6, MPI_INT, 1, 8, inter);
        else
            MPI_Recv(ir, 6, MPI_INT, 0, 8, inter, &st);
        MPI_Intercomm_merge(inter, rank % 2, &merged);
        MPI_Comm_rank(merged, &lr);
        CHECK(lr == (rank % 2) * 2 + rank / 2);
        MPI_Allreduce(ib, ir, 1, MPI_INT, MPI_SUM, merged);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&split);
    }
    /* 12. Comm_idup: usable after the Wait; an Allreduce on it. Last, so
     * that the names of the others do not depend on how it is counted. */
    {
        MPI_Comm d;
        MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq[0]);
        MPI_Wait(&rq[0], &st);
        MPI_Allreduce(ib, ir, 1, MPI_INT, MPI_SUM, d);
        CHECK(ir[0] == 6);
        MPI_Comm_free(&d);
    }

    MPI_Barrier(MPI_COMM_WORLD);
}

/* pause: nothing between Pcontrol(0) and Pcontrol(1) is logged but the
 * communicator constructor (Comm_dup): the communicator is used (and
 * logged) afterwards, so its record is needed for its name and members. */
static void pause_(void)
{
    int ib[4] = {rank}, ir[4];
    MPI_Comm hid;
    MPI_Pcontrol(0);
    MPI_Comm_dup(MPI_COMM_WORLD, &hid);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Sendrecv(ib, 1, MPI_INT, right, 9, ir, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Pcontrol(1);
    /* Logged: 2 ints (8 B) right on hid, tag 10. */
    if (rank % 2 == 0) {
        MPI_Send(ib, 2, MPI_INT, right, 10, hid);
        MPI_Recv(ir, 2, MPI_INT, left, 10, hid, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(ir, 2, MPI_INT, left, 10, hid, MPI_STATUS_IGNORE);
        MPI_Send(ib, 2, MPI_INT, right, 10, hid);
    }
    MPI_Barrier(hid);
    MPI_Comm_free(&hid);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* threads: two threads per rank, each with its own duplicate of world, do
 * 20 Sendrecv (2 ints right, tag 10+k) and 5 Allreduce at the same time. */
static MPI_Comm tcomm[2];

static void *worker(void *arg)
{
    int k = (int)(long)arg, ib[2] = {rank, k}, ir[2];
    for (int i = 0; i < 20; i++)
        MPI_Sendrecv(ib, 2, MPI_INT, right, 10 + k, ir, 2, MPI_INT, left, 10 + k, tcomm[k],
                     MPI_STATUS_IGNORE);
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(ib, ir, 1, MPI_INT, MPI_SUM, tcomm[k]);
    return NULL;
}

static void threads(void)
{
    pthread_t th[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[1]);
    for (long k = 0; k < 2; k++)
        CHECK(pthread_create(&th[k], NULL, worker, (void *)k) == 0);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    MPI_Comm_free(&tcomm[0]);
    MPI_Comm_free(&tcomm[1]);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threads") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        setup();
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0)
                printf("CPATH-SKIP MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            MPI_Finalize();
            return 0;
        }
        threads();
    } else {
        MPI_Init(&argc, &argv);
        setup();
        if (strcmp(mode, "calls") == 0)
            calls();
        else if (strcmp(mode, "pause") == 0)
            pause_();
        else {
            fprintf(stderr, "more: unknown mode %s\n", mode);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return 0;
}
