! wraplayer.f90: wraplayer.c in Fortran. The ranks call MPI only through
! a two-level wrapper layer of their own (the module wraplayer_mp, as
! codes have their mp_sum): solve_heavy and solve_light call app_sum,
! which calls layer_sum, which calls MPI_Allreduce. Rank 1's solve_heavy
! computes HEAVY_US a step, the others' LIGHT_US: the report's top row of
! computation by call site must name solve_heavy, through app_sum and
! layer_sum. Built with -fno-inline, with and without frame pointers.
module wraplayer_mp
  use mpi
  implicit none
  integer, save :: calls = 0
contains
  subroutine layer_sum(x)
    double precision, intent(inout) :: x
    integer :: ierr
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    calls = calls + 1
  end subroutine layer_sum

  subroutine app_sum(x)
    double precision, intent(inout) :: x
    call layer_sum(x)
    calls = calls + 1
  end subroutine app_sum

  subroutine layer_barrier()
    integer :: ierr
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    calls = calls + 1
  end subroutine layer_barrier

  subroutine app_barrier()
    call layer_barrier()
    calls = calls + 1
  end subroutine app_barrier
end module wraplayer_mp

module wraplayer_solver
  use wraplayer_mp
  implicit none
  integer, parameter :: HEAVY_US = 20000, LIGHT_US = 2000
  integer, save :: rank
contains
  subroutine spin_us(us)
    integer, intent(in) :: us
    integer(8) :: t0, t, rate
    double precision, save :: sink = 0
    call system_clock(t0, rate)
    do
      sink = sink * 1.0000001d0 + 1
      call system_clock(t)
      if ((t - t0) * 1000000_8 >= int(us, 8) * rate) exit
    end do
  end subroutine spin_us

  subroutine setup()
    call spin_us(LIGHT_US)
    call app_barrier()
    calls = calls + 1
  end subroutine setup

  subroutine solve_heavy(x)
    double precision, intent(inout) :: x
    if (rank == 1) then
      call spin_us(HEAVY_US)
    else
      call spin_us(LIGHT_US)
    end if
    call app_sum(x)
    calls = calls + 1
  end subroutine solve_heavy

  subroutine solve_light(x)
    double precision, intent(inout) :: x
    call spin_us(LIGHT_US / 4)
    call app_sum(x)
    calls = calls + 1
  end subroutine solve_light
end module wraplayer_solver

program wraplayer
  use wraplayer_solver
  implicit none
  integer :: ierr, s
  double precision :: x
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call setup()
  x = rank
  do s = 1, 20
    call solve_heavy(x)
    x = x / 2
    call solve_light(x)
  end do
  call app_barrier()
  if (rank == 0) print '(a,g0)', 'wraplayer: ', x
  call MPI_Finalize(ierr)
end program wraplayer
