/*
 * iosplit.c: split collective MPI-IO for the cpath logger. Run with
 * exactly 4 ranks, in a writable directory. Every _begin/_end pair of the
 * six forms, on one file over MPI_COMM_WORLD, in a fixed order, with
 * fixed byte counts; between the begin and the end of the write at
 * offset, the rank computes (a loop the program checks). Keep this file
 * and iosplit_test.go in step.
 */
#define PROG "iosplit"
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    require_size(N);
    int buf[64], rbuf[64];
    double d[4] = {1, 2, 3, 4};
    for (int i = 0; i < 64; i++)
        buf[i] = rank * 100 + i;
    MPI_File fh;
    MPI_Status st;
    MPI_Offset base = 64 * rank;

    /* seq 1 open, 2 set_view. */
    CHECK(MPI_File_open(MPI_COMM_WORLD, "iosplit.dat", MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));

    /* Writes: seq 3 at offset (4(r+1) B), 4 individual pointer (16 B),
     * 5 ordered (8 B); 6 sync; 7 Barrier. */
    CHECK(MPI_File_write_at_all_begin(fh, base, buf, rank + 1, MPI_INT));
    volatile double x = 0;
    for (int i = 0; i < 100000; i++)
        x += i * 0.5;
    CHECK(MPI_File_write_at_all_end(fh, buf, &st));
    CHECK(MPI_File_seek(fh, 256 + base, MPI_SEEK_SET));
    CHECK(MPI_File_write_all_begin(fh, d, 2, MPI_DOUBLE));
    CHECK(MPI_File_write_all_end(fh, d, MPI_STATUS_IGNORE));
    CHECK(MPI_File_write_ordered_begin(fh, buf, 2, MPI_INT));
    CHECK(MPI_File_write_ordered_end(fh, buf, &st));
    CHECK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Reads: seq 8 at offset (4(r+1) B), 9 individual pointer (12 B),
     * 10 ordered (3 B); 11 close. */
    CHECK(MPI_File_read_at_all_begin(fh, base, rbuf, rank + 1, MPI_INT));
    CHECK(MPI_File_read_at_all_end(fh, rbuf, &st));
    if (rbuf[rank] != rank * 100 + rank) {
        fprintf(stderr, "iosplit: rank %d read %d at %d, want %d\n", rank, rbuf[rank], rank, rank * 100 + rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    CHECK(MPI_File_seek(fh, 256 + base, MPI_SEEK_SET));
    CHECK(MPI_File_read_all_begin(fh, rbuf, 3, MPI_INT));
    CHECK(MPI_File_read_all_end(fh, rbuf, &st));
    CHECK(MPI_File_read_ordered_begin(fh, rbuf, 3, MPI_CHAR));
    CHECK(MPI_File_read_ordered_end(fh, rbuf, &st));
    CHECK(MPI_File_close(&fh));
    if (x < 0)
        printf("unreachable\n");
    MPI_Finalize();
    return 0;
}
