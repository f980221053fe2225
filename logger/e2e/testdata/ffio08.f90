! ffio08.f90: MPI-IO through the Fortran 2008 binding (use mpi_f08): the
! calls of fio.f90 and a split collective write (_begin/_end). Run with
! exactly 4 ranks in a writable directory. Keep this file and
! TestFortran08FileIO (logger/e2e/iosplit_test.go) in step. The file name is a
! Fortran string (its length a hidden argument), the offsets are
! INTEGER(MPI_OFFSET_KIND), the handles TYPE(MPI_File), TYPE(MPI_Request).
program ffio08
  use mpi_f08
  implicit none
  integer :: ierr, rank, i
  type(MPI_File) :: fh
  type(MPI_Request) :: req
  type(MPI_Status) :: status
  integer(kind=MPI_OFFSET_KIND) :: off, zero
  integer :: ib(16), ir(16)
  double precision :: db(4)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  do i = 1, 16
    ib(i) = rank * 100 + i
  end do
  db = 1.5d0
  zero = 0
  off = 64 * rank
  ! World seq 1 open, 2 set_view, 3 write_at_all, 4 write_at_all_begin,
  ! 5 read_at_all, 6 close.
  call MPI_File_open(MPI_COMM_WORLD, 'ffio08.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 2)
  call MPI_File_set_view(fh, zero, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
  call MPI_File_write_at(fh, off, ib, 4, MPI_INTEGER, status)                   ! 16 B
  call MPI_File_write_at_all(fh, off + 256, db, rank + 1, MPI_DOUBLE_PRECISION, &
                             MPI_STATUS_IGNORE)                                   ! 8(r+1) B
  call MPI_File_iwrite_at(fh, off + 512, ib, 2, MPI_INTEGER, req)               ! 8 B
  call MPI_Wait(req, status)
  call MPI_File_write_at_all_begin(fh, off + 768, ib, 3, MPI_INTEGER)           ! 12 B
  call MPI_File_write_at_all_end(fh, ib, status, ierr)
  call MPI_File_read_at_all(fh, off, ir, 4, MPI_INTEGER, status)                ! 16 B
  if (ir(1) /= rank * 100 + 1) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_File_close(fh)
  call MPI_Finalize()
end program ffio08
