! funwrapped.f90: unwrapped.c's MPI 3.1 calls from Fortran (use mpi), a
! known number of times, on 2 ranks; usage: funwrapped FILE. Rank r:
! MPI_Buffer_detach r+1 times (recorded, since op 198), MPI_Comm_set_info
! twice, MPI_File_set_size and MPI_File_preallocate once each.
program funwrapped
  use mpi
  implicit none
  integer :: ierr, rank, info, fh, k, bsize
  integer(kind=MPI_OFFSET_KIND) :: sz
  character(len=1) :: buf(4096)
  character(len=4096) :: path
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, path)
  do k = 0, rank
    call MPI_Buffer_attach(buf, 4096, ierr)
    call MPI_Buffer_detach(buf, bsize, ierr)
    if (ierr /= MPI_SUCCESS) stop 2
  end do
  call MPI_Info_create(info, ierr)
  call MPI_Comm_set_info(MPI_COMM_WORLD, info, ierr)
  call MPI_Comm_set_info(MPI_COMM_WORLD, info, ierr)
  if (ierr /= MPI_SUCCESS) stop 2
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  sz = 1024
  call MPI_File_set_size(fh, sz, ierr)
  if (ierr /= MPI_SUCCESS) stop 2
  sz = 2048
  call MPI_File_preallocate(fh, sz, ierr)
  if (ierr /= MPI_SUCCESS) stop 2
  call MPI_File_close(fh, ierr)
  call MPI_Info_free(info, ierr)
  call MPI_Finalize(ierr)
end program
