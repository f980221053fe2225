/*
 * io.c: MPI-IO end-to-end test program for the cpath logger. Run with
 * exactly 4 ranks, in a writable directory. Every call count, byte count
 * and the order of the collectives on each communicator are fixed; keep
 * this file and io_test.go in step.
 *
 * Files: io_world.dat on MPI_COMM_WORLD, which every form of read and
 * write goes to; io_half<color>.dat on split = Comm_split(world, rank%2,
 * rank), which is freed while its file stays open (the file's collectives
 * keep numbering the freed communicator's sequence).
 */
#define PROG "io"
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    require_size(N);
    int buf[64], rbuf[64];
    double d[4] = {1, 2, 3, 4};
    for (int i = 0; i < 64; i++)
        buf[i] = rank * 100 + i;
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq[2];
    MPI_Offset base = 64 * rank; /* each rank's own 64 bytes of each 256-byte block */

    /* World file: seq 1 open, 2 set_view. */
    CHECK(MPI_File_open(MPI_COMM_WORLD, "io_world.dat", MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));

    /* Writes: explicit offset, collective at offset (seq 3), individual
     * pointer collective (seq 4) and independent, shared pointer, ordered
     * (seq 5), then sync (seq 6). */
    CHECK(MPI_File_write_at(fh, base, buf, 8, MPI_INT, &st));                 /* 32 */
    CHECK(MPI_File_write_at_all(fh, 256 + base, buf, rank + 1, MPI_INT, &st)); /* 4(r+1) */
    CHECK(MPI_File_seek(fh, 512 + base, MPI_SEEK_SET));
    CHECK(MPI_File_write_all(fh, d, 2, MPI_DOUBLE, &st));                     /* 16 */
    CHECK(MPI_File_write(fh, buf, 3, MPI_INT, MPI_STATUS_IGNORE));            /* 12 */
    CHECK(MPI_File_write_shared(fh, buf, 5, MPI_CHAR, &st));                  /* 5 */
    CHECK(MPI_File_write_ordered(fh, buf, 2, MPI_INT, &st));                  /* 8 */
    CHECK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD); /* seq 7 */

    /* Reads: the same forms (seq 8 read_at_all, 9 read_all, 10 ordered). */
    CHECK(MPI_File_read_at(fh, base, rbuf, 8, MPI_INT, &st));                   /* 32 */
    CHECK(MPI_File_read_at_all(fh, 256 + base, rbuf, rank + 1, MPI_INT, &st));  /* 4(r+1) */
    CHECK(MPI_File_seek(fh, 512 + base, MPI_SEEK_SET));
    CHECK(MPI_File_read(fh, rbuf, 3, MPI_INT, &st));                            /* 12 */
    CHECK(MPI_File_read_all(fh, rbuf, 2, MPI_INT, &st));                        /* 8 */
    CHECK(MPI_File_read_shared(fh, rbuf, 4, MPI_CHAR, &st));                    /* 4 */
    CHECK(MPI_File_read_ordered(fh, rbuf, 2, MPI_CHAR, &st));                   /* 2 */

    /* Non-blocking independent forms: completed by Waitall and Wait. */
    CHECK(MPI_File_iwrite_at(fh, 1024 + base, buf, 4, MPI_INT, &rq[0]));        /* 16 */
    CHECK(MPI_File_iread_at(fh, base, rbuf, 4, MPI_INT, &rq[1]));              /* 16 */
    CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(MPI_File_seek(fh, 1280 + base, MPI_SEEK_SET));
    CHECK(MPI_File_iwrite(fh, buf, 2, MPI_INT, &rq[0]));                        /* 8 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_iread(fh, rbuf, 1, MPI_INT, &rq[0]));                        /* 4 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_iwrite_shared(fh, buf, 3, MPI_CHAR, &rq[0]));                /* 3 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_iread_shared(fh, rbuf, 3, MPI_CHAR, &rq[0]));                /* 3 */
    CHECK(MPI_Wait(&rq[0], &st));

    /* Non-blocking collective forms (seq 11-14), then close (seq 15). */
    CHECK(MPI_File_iwrite_at_all(fh, 1536 + base, buf, 2, MPI_INT, &rq[0]));    /* 8 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_iread_at_all(fh, 1536 + base, rbuf, 2, MPI_INT, &rq[0]));    /* 8 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_seek(fh, 1792 + base, MPI_SEEK_SET));
    CHECK(MPI_File_iwrite_all(fh, d, 1, MPI_DOUBLE, &rq[0]));                   /* 8 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_seek(fh, 1792 + base, MPI_SEEK_SET));
    CHECK(MPI_File_iread_all(fh, d, 1, MPI_DOUBLE, &rq[0]));                    /* 8 */
    CHECK(MPI_Wait(&rq[0], &st));
    CHECK(MPI_File_close(&fh));

    /* A file on a communicator freed while the file is open: on split,
     * seq 1 open, 2 Comm_free, 3 write_at_all, 4 close. */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split); /* world seq 16 */
    char name[32];
    snprintf(name, sizeof name, "io_half%d.dat", rank % 2);
    MPI_File fs;
    CHECK(MPI_File_open(split, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fs));
    MPI_Comm_free(&split);
    CHECK(MPI_File_write_at_all(fs, 8 * (rank / 2), buf, 2, MPI_INT, &st)); /* 8 */
    CHECK(MPI_File_close(&fs));

    MPI_Finalize();
    return 0;
}
