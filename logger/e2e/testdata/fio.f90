! fio.f90: MPI-IO through the Fortran binding ("use mpi"). Run with exactly
! 4 ranks in a writable directory. Keep this file and TestFortranFileIO
! (logger/e2e/io_test.go) in step. The file name is a Fortran string (its
! length a hidden argument) and the offsets are INTEGER(MPI_OFFSET_KIND).
program fio
  use mpi
  implicit none
  integer :: ierr, rank, fh, req, i
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off, zero
  integer :: ib(16), ir(16)
  double precision :: db(4)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  do i = 1, 16
    ib(i) = rank * 100 + i
  end do
  db = 1.5d0
  zero = 0
  off = 64 * rank
  ! World seq 1 open, 2 set_view, 3 write_at_all, 4 read_at_all, 5 close.
  call MPI_FILE_OPEN(MPI_COMM_WORLD, 'fio.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  call MPI_FILE_SET_VIEW(fh, zero, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  call MPI_FILE_WRITE_AT(fh, off, ib, 4, MPI_INTEGER, status, ierr)              ! 16 B
  call MPI_FILE_WRITE_AT_ALL(fh, off + 256, db, rank + 1, MPI_DOUBLE_PRECISION, &
                             MPI_STATUS_IGNORE, ierr)                             ! 8(r+1) B
  call MPI_FILE_IWRITE_AT(fh, off + 512, ib, 2, MPI_INTEGER, req, ierr)          ! 8 B
  call MPI_WAIT(req, status, ierr)
  call MPI_FILE_READ_AT_ALL(fh, off, ir, 4, MPI_INTEGER, status, ierr)           ! 16 B
  if (ir(1) /= rank * 100 + 1) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  call MPI_FILE_CLOSE(fh, ierr)
  call MPI_FINALIZE(ierr)
end program fio
