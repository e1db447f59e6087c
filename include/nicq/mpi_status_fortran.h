/* nicq: MPI-4.1's status field accessors and the Fortran conversions of
 * handles and statuses (included by mpi.h; do not include directly).
 * Handles are ints in both languages; a Fortran status holds the C
 * status's bytes. */
#ifndef NICQ_MPI_STATUS_FORTRAN_H_INCLUDED
#define NICQ_MPI_STATUS_FORTRAN_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

#define MPI_F_STATUS_SIZE 6
#define MPI_F_SOURCE 0
#define MPI_F_TAG 1
#define MPI_F_ERROR 2

int MPI_Status_get_source(MPI_Status* status, int* source);
int MPI_Status_get_tag(MPI_Status* status, int* tag);
int MPI_Status_get_error(MPI_Status* status, int* error);
int MPI_Status_set_source(MPI_Status* status, int source);
int MPI_Status_set_tag(MPI_Status* status, int tag);
int MPI_Status_set_error(MPI_Status* status, int error);
int MPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status);
int MPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status);

MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_File_c2f(MPI_File file);
MPI_File MPI_File_f2c(MPI_Fint file);
MPI_Fint MPI_Win_c2f(MPI_Win win);
MPI_Win MPI_Win_f2c(MPI_Fint win);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);
MPI_Fint MPI_Session_c2f(MPI_Session session);
MPI_Session MPI_Session_f2c(MPI_Fint session);

#ifdef __cplusplus
}
#endif
#endif /* NICQ_MPI_STATUS_FORTRAN_H_INCLUDED */
