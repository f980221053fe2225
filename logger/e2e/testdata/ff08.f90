! ff08.f90: Fortran end-to-end test program for the cpath logger through
! the Fortran 2008 binding (use mpi_f08): the same calls, in the same
! order, as fbody.inc (fmpi.f90, fuse.f90), so that the Go test
! (logger/e2e/fortran_test.go) holds all three bindings to one table.
! Handles are TYPE(MPI_Comm), TYPE(MPI_Request), TYPE(MPI_Status); most
! calls leave out the OPTIONAL ierror, some pass it. Run with exactly 4
! ranks. Keep this file, fbody.inc and expectFortran in step.
program ff08
  use mpi_f08
  implicit none
  integer :: ierr, rank, nprocs, right, left, i, it, srank, color
  type(MPI_Status) :: status, stats(4)
  type(MPI_Request) :: req(4), preq(2)
  type(MPI_Comm) :: sub
  integer :: ib(64), ir(64)
  double precision :: db(64), dr(64)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 4) then
    if (rank == 0) print *, 'fortran test: run with 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do i = 1, 64
    ib(i) = rank * 100 + i
    db(i) = rank + i / 8.0d0
  end do

  ! 1. Blocking ring, tag 1: 10 integers (40 B); Recv with a status.
  if (mod(rank, 2) == 0) then
    call MPI_Send(ib, 10, MPI_INTEGER, right, 1, MPI_COMM_WORLD)
    call MPI_Recv(ir, 10, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(ir, 10, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status)
    call MPI_Send(ib, 10, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)
  end if
  if (status%MPI_SOURCE /= left .or. ir(1) /= left * 100 + 1) call fail(1)

  ! 2. Non-blocking, tag 2: 6 doubles (48 B) to and from both neighbours,
  ! completed by one Waitall with MPI_STATUSES_IGNORE.
  call MPI_Irecv(dr, 6, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, req(1))
  call MPI_Irecv(dr(7), 6, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, req(2))
  call MPI_Isend(db, 6, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, req(3))
  call MPI_Isend(db, 6, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, req(4), ierr)
  call MPI_Waitall(4, req, MPI_STATUSES_IGNORE)

  ! 3. Persistent, tag 3: 5 integers (20 B) right, from left. Iteration 1
  ! uses Start + Wait, iterations 2 and 3 Startall + Waitall.
  call MPI_Recv_init(ir, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, preq(1))
  call MPI_Send_init(ib, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD, preq(2))
  do it = 1, 3
    if (it == 1) then
      call MPI_Start(preq(1))
      call MPI_Start(preq(2))
      call MPI_Wait(preq(1), status)
      call MPI_Wait(preq(2), MPI_STATUS_IGNORE)
    else
      call MPI_Startall(2, preq)
      call MPI_Waitall(2, preq, stats, ierr)
    end if
  end do
  if (stats(1)%MPI_SOURCE /= left) call fail(3)
  call MPI_Request_free(preq(1))
  call MPI_Request_free(preq(2))

  ! 4. MPI_ANY_SOURCE with MPI_STATUS_IGNORE, tag 4: ranks 1..3 send 2(r+1)
  ! integers (8(r+1) B) to rank 0. The program cannot see the source; the
  ! logger must still record it.
  if (rank == 0) then
    do i = 1, 3
      call MPI_Recv(ir, 64, MPI_INTEGER, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end do
  else
    call MPI_Send(ib, 2 * (rank + 1), MPI_INTEGER, 0, 4, MPI_COMM_WORLD)
  end if

  ! 5. Wildcard Irecv completed by Wait with MPI_STATUS_IGNORE, tag 5: rank 2
  ! sends 3 doubles (24 B) to rank 1.
  if (rank == 1) then
    call MPI_Irecv(dr, 64, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, req(1))
    call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
  end if
  if (rank == 2) call MPI_Send(db, 3, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD)

  ! 6. Collectives on MPI_COMM_WORLD: Seq 1..8.
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Bcast(ir, 4, MPI_INTEGER, 1, MPI_COMM_WORLD)
  call MPI_Reduce(db, dr, 3, MPI_DOUBLE_PRECISION, MPI_SUM, 2, MPI_COMM_WORLD)
  ir(1) = rank
  ir(2) = 1
  call MPI_Allreduce(MPI_IN_PLACE, ir, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ir(1) /= 6 .or. ir(2) /= 4) call fail(6)
  call MPI_Allreduce(db, dr, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call MPI_Gather(ib, 2, MPI_INTEGER, ir, 2, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Allgather(db, 1, MPI_DOUBLE_PRECISION, dr, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
  call MPI_Alltoall(ib, 3, MPI_INTEGER, ir, 3, MPI_INTEGER, MPI_COMM_WORLD)

  ! 7. Comm_split into {0,2} and {1,3} (world Seq 9); on it Allreduce,
  ! Bcast from local rank 1, a Send/Recv pair (tag 6, 7 integers, 28 B) from
  ! local rank 0 to local rank 1, and Comm_free (sub Seq 1..3).
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, sub)
  call MPI_Comm_rank(sub, srank)
  call MPI_Allreduce(ib, ir, 1, MPI_INTEGER, MPI_SUM, sub)
  call MPI_Bcast(db, 2, MPI_DOUBLE_PRECISION, 1, sub)
  if (srank == 0) then
    call MPI_Send(ib, 7, MPI_INTEGER, 1, 6, sub)
  else
    call MPI_Recv(ir, 7, MPI_INTEGER, 0, 6, sub, status)
    if (status%MPI_SOURCE /= 0) call fail(7)
  end if
  call MPI_Comm_free(sub)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize()

contains

  subroutine fail(what)
    integer, intent(in) :: what
    print *, 'fortran test: rank', rank, 'check failed in part', what
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end subroutine fail
end program ff08
