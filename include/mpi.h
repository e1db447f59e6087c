/* mpi.h — nicq's MPI C interface (an MPI-4.1 subset).
 *
 * Accepted by C11 and C++ compilers. Handles are ints (MPICH style) so every
 * predefined handle is a compile-time integer constant: bits 24..31 say the
 * handle's kind (so a communicator passed where a datatype is expected is
 * caught), bits 0..23 index the kind's table; index 0 is the null handle.
 *
 * Error classes equal nicq::Code (src/core/status.h). Returned error codes
 * are class | (sequence << 8): MPI_Error_class recovers the class and
 * MPI_Error_string the message recorded for that code.
 *
 * The queue chapter's names (MPI_Queue, MPI_Enqueue_*, MPI_Match, ...) are
 * reserved for a later header section; do not declare them elsewhere.
 */
#ifndef NICQ_MPI_H_INCLUDED
#define NICQ_MPI_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NICQ_MPI 1

#define MPI_VERSION 4
#define MPI_SUBVERSION 1

/* ---- handle types ---------------------------------------------------------- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef long MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  /* private: received bytes and the cancelled flag */
  int nicq_cancelled;
  long long nicq_count;
} MPI_Status;

/* handle kinds (bits 24..31) */
#define NICQ_KIND_COMM 0x44
#define NICQ_KIND_GROUP 0x48
#define NICQ_KIND_DATATYPE 0x4c
#define NICQ_KIND_ERRHANDLER 0x54
#define NICQ_KIND_OP 0x58
#define NICQ_KIND_INFO 0x5c
#define NICQ_KIND_KEYVAL 0x64
#define NICQ_KIND_REQUEST 0x6c
#define NICQ_HANDLE(kind, index) ((int)(((kind) << 24) | (index)))

/* ---- communicators, groups ------------------------------------------------- */
#define MPI_COMM_NULL ((MPI_Comm)NICQ_HANDLE(NICQ_KIND_COMM, 0))
#define MPI_COMM_WORLD ((MPI_Comm)NICQ_HANDLE(NICQ_KIND_COMM, 1))
#define MPI_COMM_SELF ((MPI_Comm)NICQ_HANDLE(NICQ_KIND_COMM, 2))
#define MPI_GROUP_NULL ((MPI_Group)NICQ_HANDLE(NICQ_KIND_GROUP, 0))
#define MPI_GROUP_EMPTY ((MPI_Group)NICQ_HANDLE(NICQ_KIND_GROUP, 1))
#define MPI_REQUEST_NULL ((MPI_Request)NICQ_HANDLE(NICQ_KIND_REQUEST, 0))
#define MPI_INFO_NULL ((MPI_Info)NICQ_HANDLE(NICQ_KIND_INFO, 0))
#define MPI_INFO_ENV ((MPI_Info)NICQ_HANDLE(NICQ_KIND_INFO, 1))

/* results of MPI_Comm_compare / MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* ---- error handlers -------------------------------------------------------- */
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)NICQ_HANDLE(NICQ_KIND_ERRHANDLER, 0))
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)NICQ_HANDLE(NICQ_KIND_ERRHANDLER, 1))
#define MPI_ERRORS_RETURN ((MPI_Errhandler)NICQ_HANDLE(NICQ_KIND_ERRHANDLER, 2))
#define MPI_ERRORS_ABORT ((MPI_Errhandler)NICQ_HANDLE(NICQ_KIND_ERRHANDLER, 3))

/* ---- datatypes ------------------------------------------------------------- */
#define NICQ_DT(i) ((MPI_Datatype)NICQ_HANDLE(NICQ_KIND_DATATYPE, (i)))
#define MPI_DATATYPE_NULL NICQ_DT(0)
#define MPI_CHAR NICQ_DT(1)
#define MPI_SIGNED_CHAR NICQ_DT(2)
#define MPI_UNSIGNED_CHAR NICQ_DT(3)
#define MPI_BYTE NICQ_DT(4)
#define MPI_SHORT NICQ_DT(5)
#define MPI_UNSIGNED_SHORT NICQ_DT(6)
#define MPI_INT NICQ_DT(7)
#define MPI_UNSIGNED NICQ_DT(8)
#define MPI_LONG NICQ_DT(9)
#define MPI_UNSIGNED_LONG NICQ_DT(10)
#define MPI_LONG_LONG_INT NICQ_DT(11)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG NICQ_DT(12)
#define MPI_FLOAT NICQ_DT(13)
#define MPI_DOUBLE NICQ_DT(14)
#define MPI_LONG_DOUBLE NICQ_DT(15)
#define MPI_C_BOOL NICQ_DT(16)
#define MPI_WCHAR NICQ_DT(17)
#define MPI_INT8_T NICQ_DT(18)
#define MPI_INT16_T NICQ_DT(19)
#define MPI_INT32_T NICQ_DT(20)
#define MPI_INT64_T NICQ_DT(21)
#define MPI_UINT8_T NICQ_DT(22)
#define MPI_UINT16_T NICQ_DT(23)
#define MPI_UINT32_T NICQ_DT(24)
#define MPI_UINT64_T NICQ_DT(25)
#define MPI_AINT NICQ_DT(26)
#define MPI_COUNT NICQ_DT(27)
#define MPI_OFFSET NICQ_DT(28)
#define MPI_PACKED NICQ_DT(29)
#define MPI_FLOAT_INT NICQ_DT(30)
#define MPI_DOUBLE_INT NICQ_DT(31)
#define MPI_LONG_INT NICQ_DT(32)
#define MPI_2INT NICQ_DT(33)
#define MPI_SHORT_INT NICQ_DT(34)
#define MPI_LONG_DOUBLE_INT NICQ_DT(35)
/* Complex types: a real and an imaginary part of the C type, laid out as C's
 * `float _Complex` etc. (and as std::complex<float> etc., which C++ defines to
 * match). MPI_C_COMPLEX is a second name for MPI_C_FLOAT_COMPLEX. The MPI_CXX_
 * types are distinct handles with the same layouts, usable from C too. */
#define MPI_C_FLOAT_COMPLEX NICQ_DT(36)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX NICQ_DT(37)
#define MPI_C_LONG_DOUBLE_COMPLEX NICQ_DT(38)
#define MPI_CXX_BOOL NICQ_DT(39)
#define MPI_CXX_FLOAT_COMPLEX NICQ_DT(40)
#define MPI_CXX_DOUBLE_COMPLEX NICQ_DT(41)
#define MPI_CXX_LONG_DOUBLE_COMPLEX NICQ_DT(42)
/* Fortran's named types, usable from C (MPI-4.1 3.2.2, 19.3.10): each has
 * the layout of the C type gfortran gives it (INTEGER, LOGICAL: int; REAL:
 * float; DOUBLE PRECISION: double; COMPLEX: two floats; CHARACTER: char).
 * MPI_2REAL and MPI_2DOUBLE_PRECISION are value-index pairs of one type.
 * The optional sized types this machine has no C type for are
 * MPI_DATATYPE_NULL, as the standard allows. */
#define MPI_INTEGER NICQ_DT(43)
#define MPI_REAL NICQ_DT(44)
#define MPI_DOUBLE_PRECISION NICQ_DT(45)
#define MPI_COMPLEX NICQ_DT(46)
#define MPI_DOUBLE_COMPLEX NICQ_DT(47)
#define MPI_LOGICAL NICQ_DT(48)
#define MPI_CHARACTER NICQ_DT(49)
#define MPI_2INTEGER NICQ_DT(50)
#define MPI_2REAL NICQ_DT(51)
#define MPI_2DOUBLE_PRECISION NICQ_DT(52)
#define MPI_INTEGER1 NICQ_DT(53)
#define MPI_INTEGER2 NICQ_DT(54)
#define MPI_INTEGER4 NICQ_DT(55)
#define MPI_INTEGER8 NICQ_DT(56)
#define MPI_REAL4 NICQ_DT(57)
#define MPI_REAL8 NICQ_DT(58)
#define MPI_COMPLEX8 NICQ_DT(59)
#define MPI_COMPLEX16 NICQ_DT(60)
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL2 MPI_DATATYPE_NULL
#define MPI_REAL16 MPI_DATATYPE_NULL
#define MPI_COMPLEX4 MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL
#define NICQ_DT_PREDEFINED_COUNT 61 /* indices 1..60 are predefined */

/* ---- reduction operations ------------------------------------------------- */
#define MPI_OP_NULL ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 0))
#define MPI_MAX ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 1))
#define MPI_MIN ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 2))
#define MPI_SUM ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 3))
#define MPI_PROD ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 4))
#define MPI_LAND ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 5))
#define MPI_BAND ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 6))
#define MPI_LOR ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 7))
#define MPI_BOR ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 8))
#define MPI_LXOR ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 9))
#define MPI_BXOR ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 10))
#define MPI_MINLOC ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 11))
#define MPI_MAXLOC ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 12))
#define MPI_REPLACE ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 13))
#define MPI_NO_OP ((MPI_Op)NICQ_HANDLE(NICQ_KIND_OP, 14))

typedef void(MPI_User_function)(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm* comm, int* error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;

/* ---- special values --------------------------------------------------------- */
#define MPI_ANY_SOURCE (-2)
#define MPI_ANY_TAG (-1)
#define MPI_PROC_NULL (-1)
#define MPI_ROOT (-3)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID NICQ_HANDLE(NICQ_KIND_KEYVAL, 0)
#define MPI_BOTTOM ((void*)0)
#define MPI_IN_PLACE ((void*)-1)
#define MPI_STATUS_IGNORE ((MPI_Status*)1)
#define MPI_STATUSES_IGNORE ((MPI_Status*)1)
#define MPI_BSEND_OVERHEAD 96

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* predefined attribute keys (MPI_Comm_get_attr) */
#define MPI_TAG_UB NICQ_HANDLE(NICQ_KIND_KEYVAL, 1)
#define MPI_HOST NICQ_HANDLE(NICQ_KIND_KEYVAL, 2)
#define MPI_IO NICQ_HANDLE(NICQ_KIND_KEYVAL, 3)
#define MPI_WTIME_IS_GLOBAL NICQ_HANDLE(NICQ_KIND_KEYVAL, 4)

/* ---- error classes (equal to nicq::Code) ------------------------------------ */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_INFO 28
#define MPI_ERR_FILE_EXISTS 29
#define MPI_ERR_FILE_IN_USE 30
#define MPI_ERR_FILE 31
#define MPI_ERR_INFO_KEY 32
#define MPI_ERR_INFO_NOKEY 33
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_INFO_VALUE 35
#define MPI_ERR_IO 36
#define MPI_ERR_KEYVAL 37
#define MPI_ERR_LOCKTYPE 38
#define MPI_ERR_NAME 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC 47
#define MPI_ERR_SERVICE 48
#define MPI_ERR_SIZE 49
#define MPI_ERR_SPAWN 50
#define MPI_ERR_UNSUPPORTED_DATAREP 51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN 53
#define MPI_ERR_PROC_FAILED 54
#define MPI_ERR_RMA_RANGE 55
#define MPI_ERR_RMA_ATTACH 56
#define MPI_ERR_RMA_SHARED 57
#define MPI_ERR_RMA_FLAVOR 58
#define MPI_ERR_SESSION 59
#define MPI_ERR_PROC_ABORTED 60
#define MPI_ERR_REVOKED 61
#define MPI_ERR_VALUE_TOO_LARGE 62
#define MPI_ERR_ERRHANDLER 63
/* 70, 71: reserved for the queue chapter's classes. */
#define MPI_ERR_LASTCODE 0x3fffffff

/* ---- environment ------------------------------------------------------------ */
int MPI_Init(int* argc, char*** argv);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Finalize(void);
int MPI_Initialized(int* flag);
int MPI_Finalized(int* flag);
int MPI_Query_thread(int* provided);
int MPI_Is_thread_main(int* flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Get_processor_name(char* name, int* resultlen);
int MPI_Get_version(int* version, int* subversion);
int MPI_Get_library_version(char* version, int* resultlen);
int MPI_Get_address(const void* location, MPI_Aint* address);

/* ---- errors -------------------------------------------------------------------- */
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Errhandler_free(MPI_Errhandler* errhandler);
int MPI_Error_string(int errorcode, char* string, int* resultlen);
int MPI_Error_class(int errorcode, int* errorclass);
int MPI_Add_error_class(int* errorclass);
int MPI_Add_error_code(int errorclass, int* errorcode);
int MPI_Add_error_string(int errorcode, const char* string);
int MPI_Remove_error_class(int errorclass);
int MPI_Remove_error_code(int errorcode);
int MPI_Remove_error_string(int errorcode);

/* ---- info ---------------------------------------------------------------------- */
int MPI_Info_create(MPI_Info* info);
int MPI_Info_set(MPI_Info info, const char* key, const char* value);
int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag);
int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag);
int MPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag);
int MPI_Info_get_nkeys(MPI_Info info, int* nkeys);
int MPI_Info_get_nthkey(MPI_Info info, int n, char* key);
int MPI_Info_delete(MPI_Info info, const char* key);
int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo);
int MPI_Info_free(MPI_Info* info);
int MPI_Info_create_env(int argc, char* argv[], MPI_Info* info);
int MPI_Get_hw_resource_info(MPI_Info* hw_info);

/* ---- communicators and groups ----------------------------------------------------- */
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result);
int MPI_Comm_group(MPI_Comm comm, MPI_Group* group);
int MPI_Comm_set_name(MPI_Comm comm, const char* name);
int MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen);
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag);
int MPI_Comm_test_inter(MPI_Comm comm, int* flag);
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request);
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used);
int MPI_Comm_get_parent(MPI_Comm* parent);
int MPI_Comm_disconnect(MPI_Comm* comm);
int MPI_Group_size(MPI_Group group, int* size);
int MPI_Group_rank(MPI_Group group, int* rank);
int MPI_Group_free(MPI_Group* group);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result);

/* ---- datatypes and operations ------------------------------------------------------- */
int MPI_Type_size(MPI_Datatype datatype, int* size);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent);
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype* newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype* newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype);
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype* newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype* newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype* newtype);
int MPI_Type_commit(MPI_Datatype* datatype);
int MPI_Type_free(MPI_Datatype* datatype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count);
int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count);
int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count);
int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count);
int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count);
int MPI_Status_set_cancelled(MPI_Status* status, int flag);
int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
             int* position, MPI_Comm comm);
int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size);
/* array constructors, contents, true extent, "external32", type attributes */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL 2
#define MPI_TYPECLASS_COMPLEX 3
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent);
int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype);
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype* newtype);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]);
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype);
int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                             MPI_Datatype* pair_type);
int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                      void* outbuf, MPI_Aint outsize, MPI_Aint* position);
int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                        MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype);
int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint* size);
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                         void* attribute_val_in, void* attribute_val_out,
                                         int* flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval,
                                           void* attribute_val, void* extra_state);
int MPI_TYPE_NULL_COPY_FN(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                          void* attribute_val_in, void* attribute_val_out, int* flag);
int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                    void* attribute_val_in, void* attribute_val_out, int* flag);
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                            void* extra_state);
int MPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                           MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                           void* extra_state);
int MPI_Type_free_keyval(int* type_keyval);
int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val);
int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag);
int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
/* large-count (_c) forms */
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                      MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype* newtype);
int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype* newtype);
int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype);
int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype* newtype);
int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[],
                             const MPI_Datatype array_of_types[], MPI_Datatype* newtype);
int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                               const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype* newtype);
int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[],
                             const int array_of_psizes[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype);
int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                              MPI_Datatype* newtype);
int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent);
int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent);
int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size);
int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                            MPI_Count* num_addresses, MPI_Count* num_large_counts,
                            MPI_Count* num_datatypes, int* combiner);
int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes,
                            int array_of_integers[], MPI_Aint array_of_addresses[],
                            MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]);
int MPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count);
int MPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
               MPI_Count outsize, MPI_Count* position, MPI_Comm comm);
int MPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                 MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size);
int MPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount,
                        MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                        MPI_Count* position);
int MPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize,
                          MPI_Count* position, void* outbuf, MPI_Count outcount,
                          MPI_Datatype datatype);
int MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                             MPI_Count* size);
int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int MPI_Op_free(MPI_Op* op);
int MPI_Op_commutative(MPI_Op op, int* commute);
int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op);

/* ---- point-to-point ---------------------------------------------------------------- */
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request);
int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status);
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request* request);
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int MPI_Buffer_attach(void* buffer, int size);
int MPI_Buffer_detach(void* buffer_addr, int* size);
int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request);
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request);
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request);
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request);
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request);
int MPI_Start(MPI_Request* request);
int MPI_Startall(int count, MPI_Request* array_of_requests);
int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request* request);
int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request* request);

/* MPI-4.1 buffers: per communicator (sessions: nicq/mpi_dropin.h), flush, and
 * MPI_BUFFER_AUTOMATIC (nicq allocates room for each buffered message). */
#define MPI_BUFFER_AUTOMATIC ((void*)-2)
int MPI_Buffer_flush(void);
int MPI_Buffer_iflush(MPI_Request* request);
int MPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size);
int MPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size);
int MPI_Comm_flush_buffer(MPI_Comm comm);
int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request);

/* Large-count forms (MPI_Count counts). */
int MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm);
int MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm);
int MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm);
int MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm);
int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request);
int MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request);
int MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request);
int MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request);
int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request);
int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request);
int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request);
int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request);
int MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Status* status);
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Request* request);
int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Request* request);
int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int sendtag, int source, int recvtag, MPI_Comm comm,
                           MPI_Status* status);
int MPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Request* request);
int MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Request* request);
int MPI_Buffer_attach_c(void* buffer, MPI_Count size);
int MPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size);
int MPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size);
int MPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr, MPI_Count* size);
int MPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count);

/* ---- completion ---------------------------------------------------------------------- */
int MPI_Wait(MPI_Request* request, MPI_Status* status);
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int MPI_Waitall(int count, MPI_Request* array_of_requests, MPI_Status* array_of_statuses);
int MPI_Testall(int count, MPI_Request* array_of_requests, int* flag,
                MPI_Status* array_of_statuses);
int MPI_Waitany(int count, MPI_Request* array_of_requests, int* index, MPI_Status* status);
int MPI_Testany(int count, MPI_Request* array_of_requests, int* index, int* flag,
                MPI_Status* status);
int MPI_Waitsome(int incount, MPI_Request* array_of_requests, int* outcount, int* array_of_indices,
                 MPI_Status* array_of_statuses);
int MPI_Testsome(int incount, MPI_Request* array_of_requests, int* outcount, int* array_of_indices,
                 MPI_Status* array_of_statuses);
int MPI_Request_free(MPI_Request* request);
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int MPI_Cancel(MPI_Request* request);
int MPI_Test_cancelled(const MPI_Status* status, int* flag);
int MPI_Request_get_status_all(int count, MPI_Request* array_of_requests, int* flag,
                               MPI_Status* array_of_statuses);
int MPI_Request_get_status_any(int count, MPI_Request* array_of_requests, int* index, int* flag,
                               MPI_Status* status);
int MPI_Request_get_status_some(int incount, MPI_Request* array_of_requests, int* outcount,
                                int* array_of_indices, MPI_Status* array_of_statuses);

/* Generalized requests. */
typedef int(MPI_Grequest_query_function)(void* extra_state, MPI_Status* status);
typedef int(MPI_Grequest_free_function)(void* extra_state);
typedef int(MPI_Grequest_cancel_function)(void* extra_state, int complete);
int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                       MPI_Request* request);
int MPI_Grequest_complete(MPI_Request request);

#ifdef __cplusplus
}
#endif

/* Collectives (MPI-4.1 7.12/7.13) and queued communication (draft chapter 13). */
#include "nicq/mpi_coll.h"
#include "nicq/mpi_queue.h"
/* Attributes, topologies, sessions, and the declared-but-unsupported rest. */
#include "nicq/mpi_dropin.h"
/* Large-count collectives; the chapters nicq declares but does not implement. */
#include "nicq/mpi_coll_large.h"
#include "nicq/mpi_unsupported.h"
#include "nicq/mpi_tool.h"
#include "nicq/mpi_status_fortran.h"
/* Every function above under its PMPI_ name (MPI-4.1 15.2), for profiling tools. */
#include "nicq/mpi_pmpi.h"

#endif /* NICQ_MPI_H_INCLUDED */
