! fmprobe.f90: mprobe.c through the Fortran binding ("use mpi"): the same
! matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv) beside
! MPI_Iprobe, on 3 ranks, with the same counts, peers, tags and sizes, so
! that mprobe_test.go holds both programs to one table. Keep the two in
! step (see mprobe.c for the design):
!
!  1. rank 1 sends rank 0 400 B (tag 5), 80 B (tag 6), 4 B (tag 5); rank 0
!     takes them with Mprobe+Mrecv, Improbe (polled, MPI_ANY_SOURCE)+
!     Imrecv+Wait, Iprobe (polled)+Recv.
!  2. on "rev" (ranks reversed) rank 2 sends rank 0 16 B (tag 7):
!     Mprobe(MPI_ANY_SOURCE)+Mrecv.
!  3. rank 0 probes MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, received by Mrecv.
!  4. rank 2 computes LATE_MS ms, then sends 8 B (tag 9) into rank 0's
!     waiting Mprobe.
!
! Prints "improbe polls N" and "iprobe polls N".
program fmprobe
  use mpi
  implicit none
  integer, parameter :: LATE_MS = 60
  integer :: ierr, rank, nprocs, rev, msg, req, n, one, none(1)
  integer :: st(MPI_STATUS_SIZE)
  integer :: a(100)
  double precision :: d(10), late
  character(len=16) :: s16
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 3) then
    if (rank == 0) print *, 'fmprobe: run with 3 ranks'
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, nprocs - 1 - rank, rev, ierr)
  a = 0
  d = 0
  s16 = ' '
  one = 1
  late = 0

  ! 1.
  if (rank == 1) then
    call MPI_SEND(a, 100, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, ierr)
    call MPI_SEND(d, 10, MPI_DOUBLE_PRECISION, 0, 6, MPI_COMM_WORLD, ierr)
    call MPI_SEND(one, 1, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, ierr)
  else if (rank == 0) then
    call MPI_MPROBE(1, 5, MPI_COMM_WORLD, msg, st, ierr)
    call MPI_MRECV(a, 100, MPI_INTEGER, msg, st, ierr)
    flag = .false.
    n = 0
    do while (.not. flag)
      call MPI_IMPROBE(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, flag, msg, st, ierr)
      if (.not. flag) n = n + 1
    end do
    call MPI_IMRECV(d, 10, MPI_DOUBLE_PRECISION, msg, req, ierr)
    call MPI_WAIT(req, st, ierr)
    print '(a,i0)', 'improbe polls ', n
    flag = .false.
    n = 0
    do while (.not. flag)
      call MPI_IPROBE(1, 5, MPI_COMM_WORLD, flag, st, ierr)
      if (.not. flag) n = n + 1
    end do
    call MPI_RECV(one, 1, MPI_INTEGER, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    print '(a,i0)', 'iprobe polls ', n
  end if

  ! 2. rank 2 is local 0 of rev, rank 0 local 2.
  if (rank == 2) then
    call MPI_SEND(s16, 16, MPI_CHARACTER, 2, 7, rev, ierr)
  else if (rank == 0) then
    call MPI_MPROBE(MPI_ANY_SOURCE, 7, rev, msg, st, ierr)
    call MPI_MRECV(s16, 16, MPI_CHARACTER, msg, MPI_STATUS_IGNORE, ierr)
  end if

  ! 3.
  if (rank == 0) then
    call MPI_MPROBE(MPI_PROC_NULL, 3, MPI_COMM_WORLD, msg, st, ierr)
    if (msg /= MPI_MESSAGE_NO_PROC) print *, 'fmprobe: MPI_PROC_NULL gave no MPI_MESSAGE_NO_PROC'
    call MPI_MRECV(none, 0, MPI_INTEGER, msg, st, ierr)
  end if

  ! 4.
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 2) then
    call spin_ms(LATE_MS)
    call MPI_SEND(late, 1, MPI_DOUBLE_PRECISION, 0, 9, MPI_COMM_WORLD, ierr)
  else if (rank == 0) then
    call MPI_MPROBE(2, 9, MPI_COMM_WORLD, msg, MPI_STATUS_IGNORE, ierr)
    call MPI_MRECV(late, 1, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE, ierr)
  end if

  call MPI_COMM_FREE(rev, ierr)
  call MPI_FINALIZE(ierr)

contains

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
end program fmprobe
