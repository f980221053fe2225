/* wraplayer: ranks that call MPI only through a two-level wrapper layer of
 * their own, as scientific codes do (an mp_sum or Pstream::reduce over
 * MPI). The solver's routines solve_heavy and solve_light call the layer's
 * app_allreduce, which calls layer_allreduce, which calls MPI_Allreduce;
 * setup calls app_barrier the same way. Rank 1's solve_heavy computes
 * HEAVY_US a step, the others' LIGHT_US, so the critical path's computation
 * is mostly rank 1's before the calls solve_heavy makes: the report's top
 * row of computation by call site must name solve_heavy, through
 * app_allreduce and layer_allreduce, not the layer's call of MPI.
 * Built with and without frame pointers; bumps after each call keep the
 * compiler from turning the calls into jumps (a frame each). */
#include "spin.h"

#define STEPS 20
#define HEAVY_US 20000
#define LIGHT_US 2000

static int rank;
static volatile int calls;

__attribute__((noinline)) static void layer_allreduce(double *x)
{
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    calls++;
}

__attribute__((noinline)) void app_allreduce(double *x)
{
    layer_allreduce(x);
    calls++;
}

__attribute__((noinline)) static void layer_barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    calls++;
}

__attribute__((noinline)) void app_barrier(void)
{
    layer_barrier();
    calls++;
}

__attribute__((noinline)) static void setup(void)
{
    spin_us(LIGHT_US);
    app_barrier();
    calls++;
}

__attribute__((noinline)) static double solve_heavy(double x)
{
    spin_us(rank == 1 ? HEAVY_US : LIGHT_US);
    app_allreduce(&x);
    calls++;
    return x;
}

__attribute__((noinline)) static double solve_light(double x)
{
    spin_us(LIGHT_US / 4);
    app_allreduce(&x);
    calls++;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    setup();
    double x = rank;
    for (int s = 0; s < STEPS; s++)
        x = solve_light(solve_heavy(x) / 2);
    app_barrier();
    if (rank == 0)
        printf("wraplayer: %g\n", x);
    MPI_Finalize();
    return 0;
}
