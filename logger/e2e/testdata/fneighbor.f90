! fneighbor.f90: neighbor.c through the Fortran binding ("use mpi"): the
! same topologies, neighbourhood collectives and byte counts, so that
! neighbor_test.go holds both programs to one table. Run with exactly 4
! ranks; keep this file and neighbor.c in step.
!
! Communicators, in creation order (no reordering):
!   ring  Cart_create 1-D, 4, periodic        neighbours r-1, r+1
!   grid  Cart_create 2-D, 2x2, non-periodic  MPI_PROC_NULL at the edges
!   row   Cart_sub(grid, keep dim 1)          {0,1} and {2,3}, non-periodic
!   star  Graph_create: 0 - {1,2,3}
!   dring Dist_graph_create_adjacent: source r-1, destination r+1
!   dnext Dist_graph_create: edge r -> r+1 (given by r), in-neighbour r-1
!   dup   Comm_dup(ring): the topology is duplicated
! The count, displacement and type arrays are variables, not array
! constructors: a non-blocking collective may read them until it completes.
program fneighbor
  use mpi
  implicit none
  integer, parameter :: N = 4
  integer, parameter :: ak = MPI_ADDRESS_KIND
  integer :: ierr, rank, nprocs, i
  integer :: sbuf(64), rbuf(256)
  double precision :: dbuf(8), drbuf(32)
  integer :: ring, grid, row, star, dring, dnext, dup
  integer :: one(1), two(2), index(N), edges(6), src(1), dst(1), me(1), deg(1)
  logical :: per1(1), per2(2), keep(2)
  integer :: c2(2), d2(2), rc2(2), rd2(2), w2(2), tw(2), rtw(2), ag(2), agd(2)
  integer(kind=ak) :: ad2(2), ard2(2), adi(2), ardi(2)
  integer :: c4(4), d4(4), rc4(4)
  integer :: g1(1), g1d(1), cr(2), crd(2), rcr(2), rcrd(2), w21(2), rw21(2), ti(2)
  integer :: rq(5)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= N) then
    if (rank == 0) print *, 'fneighbor: run with 4 ranks'
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  do i = 1, 64
    sbuf(i) = rank * 100 + i - 1
  end do
  dbuf = 0

  one = [N]
  per1 = [.true.]
  two = [2, 2]
  per2 = [.false., .false.]
  keep = [.false., .true.]
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, one, per1, .false., ring, ierr)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, two, per2, .false., grid, ierr)
  call MPI_CART_SUB(grid, keep, row, ierr)
  index = [3, 4, 5, 6]
  edges = [1, 2, 3, 0, 0, 0]
  call MPI_GRAPH_CREATE(MPI_COMM_WORLD, N, index, edges, .false., star, ierr)
  src = [mod(rank + N - 1, N)]
  dst = [mod(rank + 1, N)]
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., dring, ierr)
  me = [rank]
  deg = [1]
  call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, me, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dnext, ierr)
  call MPI_COMM_DUP(ring, dup, ierr)
  call check(ierr)

  ! ring: 2 out-neighbours each. What a rank receives in a slot is what
  ! that neighbour sent the other way.
  c2 = [1, 2]
  d2 = [0, 4]
  rc2 = [2, 1]
  rd2 = [0, 8]
  ad2 = [0_ak, 16_ak]
  ard2 = [0_ak, 64_ak]
  tw = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  rtw = [MPI_DOUBLE_PRECISION, MPI_INTEGER]
  w2 = [1, 1]
  call MPI_NEIGHBOR_ALLGATHER(sbuf, 3, MPI_INTEGER, rbuf, 3, MPI_INTEGER, ring, ierr)             ! 2 x 12
  ag = [2, 2]
  agd = [0, 2]
  call MPI_NEIGHBOR_ALLGATHERV(sbuf, 2, MPI_INTEGER, rbuf, ag, agd, MPI_INTEGER, ring, ierr)      ! 2 x 8
  call MPI_NEIGHBOR_ALLTOALL(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, ring, ierr)              ! 2 x 4
  call MPI_NEIGHBOR_ALLTOALLV(sbuf, c2, d2, MPI_INTEGER, rbuf, rc2, rd2, MPI_INTEGER, ring, ierr) ! 4 + 8
  call MPI_NEIGHBOR_ALLTOALLW(sbuf, w2, ad2, tw, rbuf, w2, ard2, rtw, ring, ierr)                 ! 4 + 8
  call check(ierr)

  ! grid: 4 slots, 2 of them MPI_PROC_NULL on every rank.
  c4 = [1, 2, 3, 4]
  d4 = [0, 4, 8, 12]
  rc4 = [2, 1, 4, 3]
  call MPI_NEIGHBOR_ALLTOALL(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, grid, ierr)              ! 2 x 4
  call MPI_NEIGHBOR_ALLTOALLV(sbuf, c4, d4, MPI_INTEGER, rbuf, rc4, d4, MPI_INTEGER, grid, ierr)  ! the real slots' counts
  call check(ierr)

  ! Non-blocking forms, completed by one Waitall.
  call MPI_INEIGHBOR_ALLGATHER(dbuf, 1, MPI_DOUBLE_PRECISION, drbuf, 1, MPI_DOUBLE_PRECISION, star, rq(1), ierr) ! degree x 8
  g1 = [5]
  g1d = [0]
  call MPI_INEIGHBOR_ALLGATHERV(sbuf, 5, MPI_INTEGER, rbuf, g1, g1d, MPI_INTEGER, dring, rq(2), ierr)           ! 20
  call MPI_INEIGHBOR_ALLTOALL(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, dnext, rq(3), ierr)                   ! 8
  cr = [3, 7]
  crd = [0, 8]
  rcr = [7, 3]
  rcrd = [0, 8]
  call MPI_INEIGHBOR_ALLTOALLV(sbuf, cr, crd, MPI_INTEGER, rbuf, rcr, rcrd, MPI_INTEGER, row, rq(4), ierr)      ! the real slot's
  w21 = [2, 1]
  rw21 = [1, 2]
  ti = [MPI_INTEGER, MPI_INTEGER]
  adi = [0_ak, 8_ak]
  ardi = [0_ak, 32_ak]
  call MPI_INEIGHBOR_ALLTOALLW(sbuf, w21, adi, ti, rbuf, rw21, ardi, ti, dup, rq(5), ierr)                      ! 8 + 4
  call MPI_WAITALL(5, rq, MPI_STATUSES_IGNORE, ierr)
  call check(ierr)

  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_FREE(dnext, ierr)
  call MPI_COMM_FREE(dring, ierr)
  call MPI_COMM_FREE(star, ierr)
  call MPI_COMM_FREE(row, ierr)
  call MPI_COMM_FREE(grid, ierr)
  call MPI_COMM_FREE(ring, ierr)
  call MPI_FINALIZE(ierr)

contains

  ! check aborts the job if an MPI call failed.
  subroutine check(e)
    integer, intent(in) :: e
    integer :: e2
    if (e /= MPI_SUCCESS) then
      print *, 'fneighbor: rank', rank, ': an MPI call failed with', e
      call MPI_ABORT(MPI_COMM_WORLD, 2, e2)
    end if
  end subroutine check
end program fneighbor
