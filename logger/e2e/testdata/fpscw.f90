! fpscw.f90: pscw.c in Fortran ("use mpi"): general active target
! synchronisation at 4 ranks on two windows, window 1 by MPI_WIN_ALLOCATE
! over MPI_COMM_WORLD, window 2 by MPI_WIN_CREATE over rev (see pscw.c;
! keep them and TestPSCW in step). Prints "wintest calls N".
program fpscw
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: ierr, rank, rsize, rr, world, g, rev, revg, prev, next, wa, wb
  integer :: i, p, n, round, calls, v, one(1), origins(3)
  integer :: vv(2, 3)
  logical :: flag
  ! The windows' memory is VOLATILE: one-sided puts change it behind the
  ! compiler's back. b is allocated: MPICH 4.0's MPI_WIN_CREATE took the
  ! address of a local or SAVE array 8 bytes low.
  integer, pointer, volatile :: a(:)
  integer, allocatable, volatile :: b(:)
  integer(kind=MPI_ADDRESS_KIND) :: disp, wsize, abase
  type(c_ptr) :: aptr

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, rsize, ierr)
  if (rsize /= 4) call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  call MPI_COMM_GROUP(MPI_COMM_WORLD, world, ierr)

  ! Window 1, fan-in to rank 0.
  wsize = 16
  call MPI_WIN_ALLOCATE(wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, abase, wa, ierr)
  aptr = transfer(abase, aptr)
  call c_f_pointer(aptr, a, (/ 4 /))
  a = -1
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    origins = (/ 1, 2, 3 /)
    call MPI_GROUP_INCL(world, 3, origins, g, ierr)
    call MPI_WIN_POST(g, 0, wa, ierr)
    call MPI_WIN_WAIT(wa, ierr)
    do i = 1, 3
      if (a(i + 1) /= i) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
    end do
  else
    one(1) = 0
    call MPI_GROUP_INCL(world, 1, one, g, ierr)
    call MPI_WIN_START(g, 0, wa, ierr)
    disp = rank
    call MPI_PUT(rank, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, wa, ierr)
    call MPI_WIN_COMPLETE(wa, ierr)
  end if
  call MPI_GROUP_FREE(g, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  ! Window 2 over rev, fan-out from world rank 3.
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, rsize - 1 - rank, rev, ierr)
  call MPI_COMM_RANK(rev, rr, ierr)
  call MPI_COMM_GROUP(rev, revg, ierr)
  allocate(b(2))
  b = -1
  wsize = 8
  call MPI_WIN_CREATE(b, wsize, 4, MPI_INFO_NULL, rev, wb, ierr)
  if (rr == 0) then
    origins = (/ 1, 2, 3 /)
    call MPI_GROUP_INCL(revg, 3, origins, g, ierr)
    call MPI_WIN_START(g, 0, wb, ierr)
    disp = 0
    do i = 1, 3 ! a buffer each: not to be reused before the epoch completes
      vv(:, i) = (/ 10 * i, 10 * i + 1 /)
      call MPI_PUT(vv(:, i), 2, MPI_INTEGER, i, disp, 2, MPI_INTEGER, wb, ierr)
    end do
    call spin(20)
    call MPI_WIN_COMPLETE(wb, ierr)
  else
    one(1) = 0
    call MPI_GROUP_INCL(revg, 1, one, g, ierr)
    call MPI_WIN_POST(g, 0, wb, ierr)
    if (rank == 2) then
      flag = .false.
      calls = 0
      do while (.not. flag)
        call MPI_WIN_TEST(wb, flag, ierr)
        calls = calls + 1
      end do
      print '(a,i0)', 'wintest calls ', calls
      flush(6)
    else
      call MPI_WIN_WAIT(wb, ierr)
    end if
    if (b(1) /= 10 * rr .or. b(2) /= 10 * rr + 1) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  end if
  call MPI_GROUP_FREE(g, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  ! Window 1, a ring twice.
  p = mod(rank + rsize - 1, rsize)
  n = mod(rank + 1, rsize)
  one(1) = p
  call MPI_GROUP_INCL(world, 1, one, prev, ierr)
  one(1) = n
  call MPI_GROUP_INCL(world, 1, one, next, ierr)
  disp = 0
  do round = 1, 2
    v = 100 * round + rank
    call MPI_WIN_POST(prev, 0, wa, ierr)
    call MPI_WIN_START(next, 0, wa, ierr)
    call MPI_PUT(v, 1, MPI_INTEGER, n, disp, 1, MPI_INTEGER, wa, ierr)
    call MPI_WIN_COMPLETE(wa, ierr)
    call MPI_WIN_WAIT(wa, ierr)
    if (a(1) /= 100 * round + p) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do
  call MPI_GROUP_FREE(prev, ierr)
  call MPI_GROUP_FREE(next, ierr)
  call MPI_GROUP_FREE(revg, ierr)
  call MPI_GROUP_FREE(world, ierr)

  call MPI_WIN_FREE(wb, ierr)
  deallocate(b)
  call MPI_WIN_FREE(wa, ierr)
  call MPI_COMM_FREE(rev, ierr)
  call MPI_FINALIZE(ierr)

contains

  ! spin busy-waits ms milliseconds of wall-clock time.
  subroutine spin(ms)
    integer, intent(in) :: ms
    double precision :: t0
    t0 = MPI_WTIME()
    do while (MPI_WTIME() - t0 < ms / 1000d0)
    end do
  end subroutine spin
end program fpscw
