! fpartitioned.f90: partitioned.c through the Fortran binding (mpif.h;
! MPICH: Open MPI 4.1 lacks partitioned communication): the same
! calls, partitions, peers and sizes, and the same designed late
! MPI_Pready, so that partitioned_test.go holds both programs to one
! table. Run with exactly 3 ranks; keep this file and partitioned.c in
! step (see there for the design):
!
!  1. rank 0 initialises A1 (4 partitions of 8 integers, 128 B) then A2 (2
!     of 32, 256 B) to rank 1, tag 7; rank 1 R1 (2 of 16, 128 B) then R2
!     (4 of 16, 256 B): matched by order of initialisation.
!  2. ITERS iterations: rank 0 starts A2 then A1, readies A2 with
!     MPI_Pready_range(0, 1), A1 with MPI_Pready(0), MPI_Pready_list([2,
!     1]) and MPI_Pready(3), and waits for both; rank 1 polls
!     MPI_Parrived(R1, 0) every 20 us until set, then waits for R1 and R2.
!     In the polled iterations rank 0 computes POLL_MS ms after its starts,
!     so that rank 1 polls while nothing has arrived. Iteration LATE_ITER
!     is framed by barriers: rank 0 computes LATE_MS ms before
!     MPI_Pready(3); rank 1 polls nothing, waits in MPI_Wait(R1), and
!     computes AFTER_MS ms afterwards.
!  3. on "rev" (ranks reversed) world rank 1 sends world rank 2 one
!     partition of 10 doubles (80 B, tag 9), once.
!
! Prints "parrived calls N" (rank 1's MPI_Parrived calls).
!
! mpif.h, not the mpi module: MPICH 4.0's module declares MPI_PARRIVED's
! flag INTEGER where MPI 4.0 says LOGICAL, and rejects a LOGICAL flag.
! Build with -fallow-argument-mismatch (gfortran >= 10, untyped buffers).
program fpartitioned
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'mpif.h'
  interface
    integer(c_int) function usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function usleep
  end interface
  integer, parameter :: ITERS = 3, LATE_ITER = 1, POLL_MS = 5, LATE_MS = 80, AFTER_MS = 120
  integer, parameter :: ck = MPI_COUNT_KIND
  integer :: ierr, rank, nprocs, rev, q1, q2, q, it, i, list(2), parrived
  integer, asynchronous :: a1(32), a2(64)
  double precision, asynchronous :: d(10)
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call need(nprocs == 3, 'run with 3 ranks')
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, 2 - rank, rev, ierr)

  if (rank == 0) then
    call MPI_PSEND_INIT(a1, 4, 8_ck, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, q1, ierr)
    call MPI_PSEND_INIT(a2, 2, 32_ck, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, q2, ierr)
  else if (rank == 1) then
    call MPI_PRECV_INIT(a1, 2, 16_ck, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, q1, ierr)
    call MPI_PRECV_INIT(a2, 4, 16_ck, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, q2, ierr)
  end if
  parrived = 0
  do it = 0, ITERS - 1
    if (it == LATE_ITER) call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      do i = 1, 32
        a1(i) = 1000 * it + i - 1
      end do
      do i = 1, 64
        a2(i) = -1000 * it - (i - 1)
      end do
      call MPI_START(q2, ierr)
      call MPI_START(q1, ierr)
      if (it /= LATE_ITER) call spin_ms(POLL_MS) ! rank 1 polls MPI_Parrived meanwhile
      call MPI_PREADY_RANGE(0, 1, q2, ierr)
      call MPI_PREADY(0, q1, ierr)
      list = [2, 1]
      call MPI_PREADY_LIST(2, list, q1, ierr)
      if (it == LATE_ITER) call spin_ms(LATE_MS)
      call MPI_PREADY(3, q1, ierr)
      call MPI_WAIT(q2, MPI_STATUS_IGNORE, ierr)
      call MPI_WAIT(q1, MPI_STATUS_IGNORE, ierr)
    else if (rank == 1) then
      call MPI_START(q1, ierr)
      call MPI_START(q2, ierr)
      flag = .false.
      if (it /= LATE_ITER) then
        do
          call MPI_PARRIVED(q1, 0, flag, ierr)
          parrived = parrived + 1
          if (flag) exit
          i = usleep(20_c_int)
        end do
        do i = 1, 16
          call need(a1(i) == 1000 * it + i - 1, 'partition 0 of R1 arrived with the wrong data')
        end do
      end if
      call MPI_WAIT(q1, MPI_STATUS_IGNORE, ierr)
      call MPI_WAIT(q2, MPI_STATUS_IGNORE, ierr)
      do i = 1, 32
        call need(a1(i) == 1000 * it + i - 1, 'R1 received the wrong data')
      end do
      do i = 1, 64
        call need(a2(i) == -1000 * it - (i - 1), 'R2 received the wrong data')
      end do
      if (it == LATE_ITER) call spin_ms(AFTER_MS)
    end if
    if (it == LATE_ITER) call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do
  if (rank <= 1) then
    call MPI_REQUEST_FREE(q1, ierr)
    call MPI_REQUEST_FREE(q2, ierr)
  end if

  if (rank == 1) then
    do i = 1, 10
      d(i) = i - 1
    end do
    call MPI_PSEND_INIT(d, 1, 10_ck, MPI_DOUBLE_PRECISION, 0, 9, rev, MPI_INFO_NULL, q, ierr) ! local 0: world 2
    call MPI_START(q, ierr)
    call MPI_PREADY(0, q, ierr)
    call MPI_WAIT(q, MPI_STATUS_IGNORE, ierr)
    call MPI_REQUEST_FREE(q, ierr)
  else if (rank == 2) then
    call MPI_PRECV_INIT(d, 1, 10_ck, MPI_DOUBLE_PRECISION, 1, 9, rev, MPI_INFO_NULL, q, ierr) ! local 1: world 1
    call MPI_START(q, ierr)
    call MPI_WAIT(q, MPI_STATUS_IGNORE, ierr)
    call need(d(10) == 9.0d0, 'the rev transfer received the wrong data')
    call MPI_REQUEST_FREE(q, ierr)
  end if
  if (rank == 1) print '(a,i0)', 'parrived calls ', parrived
  call MPI_COMM_FREE(rev, ierr)
  call MPI_FINALIZE(ierr)

contains

  ! need aborts the job unless ok.
  subroutine need(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'fpartitioned: rank ', rank, ': ', what
      call MPI_ABORT(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine need

  ! spin_ms busy-waits ms milliseconds (no MPI call).
  subroutine spin_ms(ms)
    integer, intent(in) :: ms
    integer(kind=8) :: c0, c, rate
    call system_clock(c0, rate)
    do
      call system_clock(c)
      if ((c - c0) * 1000 >= int(ms, 8) * rate) exit
    end do
  end subroutine spin_ms
end program fpartitioned
