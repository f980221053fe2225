// cxxsolver: a C++ solver in the style of the CFD codes, for the cost of
// call paths in code built without frame pointers (loggerbench -only
// callpaths, built with -O2 -fomit-frame-pointer). Its MPI goes through a
// layer of templates (gSum → reduce → Pstream::allReduce →
// MPI_Allreduce), each step smooths a field (a few µs of computation)
// and sums its residual: one call every few µs, as the CFD solver of
// issue 37 made (919 k calls in 7.8 s). It prints
// "cxxsolver SECONDS CALLS": the timed loop's wall time and its calls.
//
//   cxxsolver STEPS [CELLS]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace Foam {
template <class T> struct sumOp {
	T operator()(const T &a, const T &b) const { return a + b; }
};

namespace Pstream {
template <class T, class Op> __attribute__((noinline)) void allReduce(T &v, const Op &) {
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	asm volatile("" ::: "memory"); // not a tail call: a frame of its own
}
} // namespace Pstream

template <class T, class Op> __attribute__((noinline)) void reduce(T &v, const Op &op) {
	Pstream::allReduce(v, op);
	asm volatile("" ::: "memory");
}

template <class T> __attribute__((noinline)) T gSum(const std::vector<T> &f) {
	T s = std::accumulate(f.begin(), f.end(), T(0));
	reduce(s, sumOp<T>());
	return s;
}
} // namespace Foam

class Smoother {
	std::vector<double> x_, b_;

public:
	explicit Smoother(size_t n) : x_(n, 1.0), b_(n, 0.5) {}
	__attribute__((noinline)) void sweep() {
		for (size_t i = 1; i + 1 < x_.size(); i++)
			x_[i] = 0.25 * (x_[i - 1] + 2 * x_[i] + x_[i + 1]) + 1e-3 * b_[i];
	}
	__attribute__((noinline)) double residual() { return Foam::gSum(x_); }
};

__attribute__((noinline)) static double solveStep(Smoother &s) {
	s.sweep();
	return s.residual();
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long steps = argc > 1 ? atol(argv[1]) : 100000;
	size_t cells = argc > 2 ? (size_t)atol(argv[2]) : 2000;
	Smoother s(cells);
	double r = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < steps; i++)
		r += solveStep(s);
	double t = MPI_Wtime() - t0;
	if (rank == 0)
		printf("cxxsolver %.6f %ld %g\n", t, steps, r);
	MPI_Finalize();
	return 0;
}
