/* nofp: calls whose callers keep no frame pointers, for the call-path walk
 * (CPATH_CALLDEPTH). Built with -fomit-frame-pointer, a function may use
 * the frame-pointer register for anything; here it holds a stack buffer
 * laid out as a chain of frames whose "return addresses" are no code, a
 * new one on every call: what the walk meets in such code. The walk must
 * end at them, not log them (nor look up a module for each). Each rank
 * sends ITERS messages to itself. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#ifndef ITERS
#define ITERS 2000
#endif
#define NOCODE 0x10000000u /* where nothing is mapped */

static int rank;
static volatile double sink;

__attribute__((noinline)) static void call(int i) {
	uintptr_t chain[16];
	for (int k = 0; k + 2 < 16; k += 2) {
		chain[k] = (uintptr_t)&chain[k + 2]; /* the next "frame", up the stack */
		chain[k + 1] = NOCODE + (uintptr_t)i * 4096 + (uintptr_t)k;
	}
	chain[14] = chain[15] = 0;
	register uintptr_t fp __asm__("rbp") = (uintptr_t)chain;
	__asm__ volatile("" : "+r"(fp));
	double x = i, y = 0;
	MPI_Send(&x, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
	MPI_Recv(&y, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	__asm__ volatile("" : : "r"(fp), "r"(chain) : "memory");
	sink += y;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < ITERS; i++)
		call(i);
	MPI_Finalize();
	if (rank == 0)
		printf("nofp: done\n");
	return 0;
}
