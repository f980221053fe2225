! flifetime.f90: lifetime.c's cases through the Fortran binding ("use mpi"):
! receives completed after MPI_COMM_FREE of their communicator,
! MPI_COMM_DUP_WITH_INFO, MPI_COMM_GET_PARENT, and polls with MPI_TEST and
! MPI_IPROBE that coalesce. Run with 2 ranks. Keep this file and
! TestFortranLifetime in step.
program flifetime
  use mpi
  implicit none
  integer, parameter :: nfree = 20, npoll = 1000
  integer :: ierr, rank, nprocs, other, i, c, parent, req(2), rq, x, y
  integer :: status(MPI_STATUS_SIZE)
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 2) then
    if (rank == 0) print *, 'flifetime: run with 2 ranks'
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  other = 1 - rank

  ! 1. nfree rounds: Irecv and Isend on a new communicator, free it, Wait.
  do i = 1, nfree
    x = rank * 1000 + i
    call MPI_COMM_DUP(MPI_COMM_WORLD, c, ierr)
    call MPI_IRECV(y, 1, MPI_INTEGER, other, i, c, req(1), ierr)
    call MPI_ISEND(x, 1, MPI_INTEGER, other, i, c, req(2), ierr)
    call MPI_COMM_FREE(c, ierr)
    call MPI_WAIT(req(1), status, ierr)
    if (status(MPI_SOURCE) /= other .or. y /= other * 1000 + i) call fail(1)
    call MPI_WAIT(req(2), MPI_STATUS_IGNORE, ierr)
  end do

  ! 2. A communicator from MPI_COMM_DUP_WITH_INFO, freed unused.
  call MPI_COMM_DUP_WITH_INFO(MPI_COMM_WORLD, MPI_INFO_NULL, c, ierr)
  call MPI_COMM_FREE(c, ierr)

  ! 3. Not spawned: no parent.
  call MPI_COMM_GET_PARENT(parent, ierr)
  if (parent /= MPI_COMM_NULL) call fail(3)

  ! 4. Rank 1 polls a receive npoll times, probes twice, then lets rank 0
  ! send, tag 7.
  if (rank == 1) then
    call MPI_IRECV(y, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, rq, ierr)
    do i = 1, npoll
      call MPI_TEST(rq, flag, status, ierr)
      if (flag) call fail(4)
    end do
    do i = 1, 2
      call MPI_IPROBE(0, 99, MPI_COMM_WORLD, flag, status, ierr)
      if (flag) call fail(4)
    end do
    call MPI_SEND(x, 1, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, ierr)
    call MPI_WAIT(rq, status, ierr)
    if (y /= 42) call fail(4)
  else
    call MPI_RECV(y, 1, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, status, ierr)
    x = 42
    call MPI_SEND(x, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  end if

  call MPI_FINALIZE(ierr)

contains

  subroutine fail(step)
    integer, intent(in) :: step
    integer :: e
    print *, 'flifetime: rank', rank, 'failed at step', step
    call MPI_ABORT(MPI_COMM_WORLD, 2, e)
  end subroutine fail

end program flifetime
