/*
 * lifetime.c: correct programs that once broke the logger or flooded its
 * log (issue 14). Run with 2 ranks and one argument naming the part:
 *   freewait N   N times: Comm_dup, Irecv and Isend on the new
 *                communicator, Comm_free it, then Wait for both (legal:
 *                MPI frees it once they complete)
 *   dupinfo      Comm_dup_with_info freed unused (the logger first meets
 *                it at the free), then another with an Allreduce on it
 *                before the free; the same with Comm_idup_with_info where
 *                MPI has it (MPI 4)
 *   poll N       rank 1 polls a receive with N unsuccessful MPI_Test, then
 *                1000 times 2 MPI_Iprobe and 3 MPI_Test, then lets rank 0
 *                send and polls until the message is there
 *   grequest     MPI_THREAD_MULTIPLE: a generalized request completed by a
 *                second thread while the first waits for it in MPI_Wait,
 *                then another while the first polls it with MPI_Test
 *   unknown      polls of a request the logger does not know (a
 *                generalized request started while MPI_Pcontrol(0) paused
 *                logging): 1000 unsuccessful MPI_Test, then it completes
 *   connect      MPI_Comm_accept (rank 0) and MPI_Comm_connect (rank 1) on
 *                MPI_COMM_SELF, then MPI_Comm_join over a TCP connection
 *                between them; a message over each intercommunicator, then
 *                MPI_Comm_disconnect
 *   spawn        MPI_Comm_spawn of 2 more processes of this program (part
 *                "child"); rank 0 sends child 0 an int over the new
 *                intercommunicator; all disconnect
 * Keep this file and lifetime_test.go in step.
 */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int rank, other;

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "lifetime: rank %d: check failed at line %d: %s\n", \
                    rank, __LINE__, #c);                                       \
            MPI_Abort(MPI_COMM_WORLD, 2);                                      \
        }                                                                      \
    } while (0)

static void setup(void)
{
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "lifetime: run with 2 ranks, not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    other = 1 - rank;
}

/* Each round leaves the receive pending across MPI_Comm_free; the
 * allocations after the free reuse the memory of a record dropped too
 * early, as a real program's would. */
static void freewait(int n)
{
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        MPI_Request rq[2];
        MPI_Status st;
        int in = -1, out = 1000 * rank + i;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Irecv(&in, 1, MPI_INT, other, i, c, &rq[0]);
        MPI_Isend(&out, 1, MPI_INT, other, i, c, &rq[1]);
        MPI_Comm_free(&c);
        CHECK(c == MPI_COMM_NULL);
        void *junk[8];
        for (int k = 0; k < 8; k++)
            memset(junk[k] = malloc(16 + 8 * k), 0xA5, 16 + 8 * k);
        MPI_Wait(&rq[0], &st);
        for (int k = 0; k < 8; k++)
            free(junk[k]);
        CHECK(st.MPI_SOURCE == other && st.MPI_TAG == i && in == 1000 * other + i);
        MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    }
}

static void dupinfo(void)
{
    MPI_Info info;
    MPI_Comm c;
    int x = rank + 1, sum = 0;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Comm_free(&c);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == 3);
    MPI_Comm_free(&c);
#if MPI_VERSION >= 4
    MPI_Request rq;
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == 3);
    MPI_Comm_free(&c);
    if (rank == 0)
        printf("lifetime: idup_with_info: yes\n");
#else
    if (rank == 0)
        printf("lifetime: idup_with_info: no (MPI_VERSION %d)\n", MPI_VERSION);
#endif
    MPI_Info_free(&info);
}

static void poll(long n)
{
    int v = 0, flag = 0, go = 1;
    MPI_Request rq;
    MPI_Status st;
    if (rank == 0) {
        v = 42;
        MPI_Recv(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        return;
    }
    MPI_Irecv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq);
    for (long i = 0; i < n; i++) {
        MPI_Test(&rq, &flag, &st);
        CHECK(!flag);
    }
    for (int i = 0; i < 1000; i++) {
        for (int k = 0; k < 2; k++) {
            MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, &st);
            CHECK(!flag);
        }
        for (int k = 0; k < 3; k++) {
            MPI_Test(&rq, &flag, &st);
            CHECK(!flag);
        }
    }
    MPI_Send(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    do
        MPI_Test(&rq, &flag, &st);
    while (!flag);
    CHECK(v == 42 && st.MPI_SOURCE == 0 && st.MPI_TAG == 7);
}

static int gq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int gq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    usleep(50000); /* the main thread is waiting by then */
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

static void grequest(void)
{
    MPI_Request rq;
    pthread_t th;
    MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &rq);
    MPI_Request copy = rq;
    CHECK(pthread_create(&th, NULL, completer, &copy) == 0);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(rq == MPI_REQUEST_NULL);
    pthread_join(th, NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* The polls before the completion are one record, although the other
     * thread's MPI_Grequest_complete comes between the last two. */
    int flag = 0;
    MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &rq);
    copy = rq;
    CHECK(pthread_create(&th, NULL, completer, &copy) == 0);
    do
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    while (!flag);
    pthread_join(th, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void unknown(void)
{
    MPI_Request rq;
    int flag = 0;
    MPI_Pcontrol(0);
    MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &rq);
    MPI_Pcontrol(1);
    for (int i = 0; i < 1000; i++) {
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag);
    }
    MPI_Grequest_complete(rq);
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    CHECK(flag);
}

/* Rank 0 sends tag 2 over the accept/connect intercommunicator, rank 1
 * tag 3 over the joined one. */
static void connect_join(void)
{
    char port[MPI_MAX_PORT_NAME] = {0};
    MPI_Comm inter;
    int x = 10 + rank, y = -1;
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        MPI_Send(&x, 1, MPI_INT, 0, 2, inter);
    } else {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        MPI_Recv(&y, 1, MPI_INT, 0, 2, inter, MPI_STATUS_IGNORE);
        CHECK(y == 10);
    }
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        MPI_Close_port(port);

    /* MPI_Comm_join needs a connected socket: rank 0 listens on a port of
     * the loopback interface and tells rank 1 which. */
    int fd = -1, lfd = -1, tcp = 0;
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 1) == 0);
        CHECK(getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
        tcp = ntohs(a.sin_port);
        MPI_Send(&tcp, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
        fd = accept(lfd, NULL, NULL);
        CHECK(fd >= 0);
    } else {
        MPI_Recv(&tcp, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        a.sin_port = htons((unsigned short)tcp);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    MPI_Comm_join(fd, &inter);
    CHECK(inter != MPI_COMM_NULL);
    if (rank == 1)
        MPI_Send(&x, 1, MPI_INT, 0, 3, inter);
    else {
        MPI_Recv(&y, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
        CHECK(y == 11);
    }
    MPI_Comm_disconnect(&inter);
    close(fd);
    if (lfd >= 0)
        close(lfd);
}

static void spawn(const char *self)
{
    MPI_Comm parent, inter;
    char *args[] = {"child", NULL};
    int x = 5;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL);
    MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, 0, 3, inter);
    MPI_Comm_disconnect(&inter);
    CHECK(inter == MPI_COMM_NULL);
}

static void child(void)
{
    MPI_Comm parent, again;
    int x = 0;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL);
    if (rank == 0) {
        MPI_Recv(&x, 1, MPI_INT, 0, 3, parent, MPI_STATUS_IGNORE);
        CHECK(x == 5);
    }
    MPI_Comm_get_parent(&again);
    CHECK(again == parent);
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (strcmp(part, "grequest") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        setup();
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0)
                printf("lifetime: no MPI_THREAD_MULTIPLE (provided %d)\n", provided);
            MPI_Finalize();
            return 0;
        }
        grequest();
    } else {
        MPI_Init(&argc, &argv);
        setup();
        if (strcmp(part, "freewait") == 0)
            freewait((int)n);
        else if (strcmp(part, "dupinfo") == 0)
            dupinfo();
        else if (strcmp(part, "poll") == 0)
            poll(n);
        else if (strcmp(part, "unknown") == 0)
            unknown();
        else if (strcmp(part, "connect") == 0)
            connect_join();
        else if (strcmp(part, "spawn") == 0)
            spawn(argv[0]);
        else if (strcmp(part, "child") == 0)
            child();
        else {
            if (rank == 0)
                fprintf(stderr, "lifetime: unknown part %s\n", part);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return 0;
}
