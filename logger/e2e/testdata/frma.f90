! frma.f90: rma.c through the Fortran binding ("use mpi"): the same
! one-sided calls, targets, byte counts and collectives, so that
! rma_test.go holds both programs to one table (expectRMA,
! expectRMAColls, rmaWindows). Run with exactly 4 ranks; keep this file
! and rma.c in step. MPI_INTEGER8 stands for rma.c's MPI_LONG_LONG (8
! bytes each).
!
! Windows, in creation order (the rank's window numbers 1-4):
!   1  w1  MPI_Win_allocate on MPI_COMM_WORLD, 8 integers: fence epoch, then PSCW
!   2  w2  MPI_Win_create on half, 4 integer(8): passive target
!   3  wsh MPI_Win_allocate_shared on half, 16 bytes
!   4  wd  MPI_Win_create_dynamic on MPI_COMM_WORLD
! half = Comm_split(world, rank%2, -rank): its local rank 0 is world rank
! rank%2+2 and local rank 1 world rank rank%2.
program frma
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: N = 4
  integer, parameter :: ak = MPI_ADDRESS_KIND
  integer :: ierr, rank, nprocs, half, hr, w1, w2, wsh, wd, wg, peer, other
  integer :: src(4), dst(4), rq(4)
  integer(kind=ak) :: p1, psh
  integer, pointer :: base1(:)
  type(c_ptr) :: cp
  integer(kind=8) :: buf2(4), o(4), res(4), cmp, g(2), one

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= N) then
    if (rank == 0) print *, 'frma: run with 4 ranks'
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if

  ! Active target, fence: a Put to the next rank, a Get from the previous
  ! one, an Accumulate into rank 0.
  call MPI_WIN_ALLOCATE(int(8 * 4, ak), 4, MPI_INFO_NULL, MPI_COMM_WORLD, p1, w1, ierr)
  call check(ierr)
  cp = transfer(p1, cp)
  call c_f_pointer(cp, base1, [8])
  base1 = rank
  src = rank
  dst = -1
  call MPI_WIN_FENCE(MPI_MODE_NOPRECEDE, w1, ierr)
  call MPI_PUT(src, 2, MPI_INTEGER, mod(rank + 1, N), int(0, ak), 2, MPI_INTEGER, w1, ierr)
  call MPI_GET(dst, 3, MPI_INTEGER, mod(rank + N - 1, N), int(2, ak), 3, MPI_INTEGER, w1, ierr)
  call MPI_ACCUMULATE(src, 1, MPI_INTEGER, 0, int(6, ak), 1, MPI_INTEGER, MPI_SUM, w1, ierr)
  call MPI_WIN_FENCE(MPI_MODE_NOSUCCEED, w1, ierr)
  call check(ierr)
  if (base1(1) /= mod(rank + N - 1, N) .or. dst(1) /= mod(rank + N - 1, N) .or. &
      (rank == 0 .and. base1(7) /= 0 + 0 + 1 + 2 + 3)) then
    print *, 'frma: rank', rank, ': fence epoch moved the wrong data'
    call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  end if

  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_COMM_RANK(half, hr, ierr)

  ! Passive target on half: target 0 of half is world rank rank%2+2,
  ! target 1 world rank rank%2.
  buf2 = 0
  o = 1
  cmp = 0
  one = 1
  call MPI_WIN_CREATE(buf2, int(4 * 8, ak), 8, MPI_INFO_NULL, half, w2, ierr)
  call MPI_WIN_ALLOCATE_SHARED(int(16, ak), 1, MPI_INFO_NULL, half, psh, wsh, ierr)
  call MPI_WIN_LOCK(MPI_LOCK_SHARED, 0, 0, w2, ierr)
  call MPI_FETCH_AND_OP(o, res, MPI_INTEGER8, 0, int(0, ak), MPI_SUM, w2, ierr)
  call MPI_COMPARE_AND_SWAP(o, cmp, res(2), MPI_INTEGER8, 0, int(1, ak), w2, ierr)
  call MPI_GET_ACCUMULATE(o, 2, MPI_INTEGER8, res(3), 2, MPI_INTEGER8, 0, int(2, ak), 2, MPI_INTEGER8, &
                          MPI_SUM, w2, ierr)
  call MPI_WIN_FLUSH(0, w2, ierr)
  call MPI_WIN_UNLOCK(0, w2, ierr)
  call check(ierr)

  call MPI_WIN_LOCK_ALL(0, w2, ierr)
  call MPI_RPUT(one, 1, MPI_INTEGER8, 1, int(hr, ak), 1, MPI_INTEGER8, w2, rq(1), ierr)
  call MPI_RGET(g, 2, MPI_INTEGER8, 1, int(2, ak), 2, MPI_INTEGER8, w2, rq(2), ierr)
  call MPI_RACCUMULATE(o, 3, MPI_INTEGER8, 0, int(1, ak), 3, MPI_INTEGER8, MPI_SUM, w2, rq(3), ierr)
  call MPI_RGET_ACCUMULATE(o, 1, MPI_INTEGER8, res, 1, MPI_INTEGER8, 0, int(0, ak), 1, MPI_INTEGER8, &
                           MPI_SUM, w2, rq(4), ierr)
  call MPI_WAITALL(4, rq, MPI_STATUSES_IGNORE, ierr)
  call MPI_WIN_FLUSH_ALL(w2, ierr)
  call MPI_WIN_FLUSH_LOCAL(1, w2, ierr)
  call MPI_WIN_FLUSH_LOCAL_ALL(w2, ierr)
  call MPI_WIN_SYNC(w2, ierr)
  call MPI_WIN_UNLOCK_ALL(w2, ierr)
  call check(ierr)
  call MPI_WIN_FREE(w2, ierr)
  call MPI_WIN_FREE(wsh, ierr)

  ! General active target (PSCW) on w1: each even rank accesses the odd
  ! rank after it, which exposes its window to it.
  call MPI_COMM_GROUP(MPI_COMM_WORLD, wg, ierr)
  if (mod(rank, 2) == 0) then
    other = rank + 1
  else
    other = rank - 1
  end if
  call MPI_GROUP_INCL(wg, 1, [other], peer, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_WIN_START(peer, 0, w1, ierr)
    call MPI_PUT(src, 1, MPI_INTEGER, other, int(7, ak), 1, MPI_INTEGER, w1, ierr)
    call MPI_WIN_COMPLETE(w1, ierr)
  else
    call MPI_WIN_POST(peer, 0, w1, ierr)
    call MPI_WIN_WAIT(w1, ierr)
    if (base1(8) /= other) then
      print *, 'frma: rank', rank, ': PSCW put', base1(8), ', want', other
      call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
    end if
  end if
  call check(ierr)
  call MPI_GROUP_FREE(peer, ierr)
  call MPI_GROUP_FREE(wg, ierr)

  call MPI_WIN_CREATE_DYNAMIC(MPI_INFO_NULL, MPI_COMM_WORLD, wd, ierr)
  call MPI_WIN_FREE(wd, ierr)
  call MPI_WIN_FREE(w1, ierr)
  call check(ierr)
  call MPI_FINALIZE(ierr)

contains

  ! check aborts the job if an MPI call failed.
  subroutine check(e)
    integer, intent(in) :: e
    integer :: e2
    if (e /= MPI_SUCCESS) then
      print *, 'frma: rank', rank, ': an MPI call failed with', e
      call MPI_ABORT(MPI_COMM_WORLD, 2, e2)
    end if
  end subroutine check
end program frma
