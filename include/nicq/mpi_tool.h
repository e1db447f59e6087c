/* nicq: the MPI tool information interface (MPI_T_*, MPI-4.1 chapter 15.3).
 * Control variables are nicq's NICQ_* environment variables (read-only),
 * performance variables a few of its gauges and counters; no events.
 * Every call returns MPI_SUCCESS or an MPI_T_ERR_* class and calls no error
 * handler. Included by mpi.h; do not include directly. */
#ifndef NICQ_MPI_TOOL_H_INCLUDED
#define NICQ_MPI_TOOL_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* ---- error classes (returned, never raised through an error handler) ---- */
#define MPI_T_ERR_MEMORY 72
#define MPI_T_ERR_NOT_INITIALIZED 73
#define MPI_T_ERR_CANNOT_INIT 74
#define MPI_T_ERR_INVALID_INDEX 75
#define MPI_T_ERR_INVALID_ITEM 76
#define MPI_T_ERR_INVALID_HANDLE 77
#define MPI_T_ERR_OUT_OF_HANDLES 78
#define MPI_T_ERR_OUT_OF_SESSIONS 79
#define MPI_T_ERR_INVALID_SESSION 80
#define MPI_T_ERR_CVAR_SET_NOT_NOW 81
#define MPI_T_ERR_CVAR_SET_NEVER 82
#define MPI_T_ERR_PVAR_NO_STARTSTOP 83
#define MPI_T_ERR_PVAR_NO_WRITE 84
#define MPI_T_ERR_PVAR_NO_ATOMIC 85
#define MPI_T_ERR_INVALID_NAME 86
#define MPI_T_ERR_INVALID 87
#define MPI_T_ERR_NOT_SUPPORTED 88
#define MPI_T_ERR_NOT_ACCESSIBLE 89

/* ---- verbosity, binding, scope, classes ---- */
#define MPI_T_VERBOSITY_USER_BASIC 221
#define MPI_T_VERBOSITY_USER_DETAIL 222
#define MPI_T_VERBOSITY_USER_ALL 223
#define MPI_T_VERBOSITY_TUNER_BASIC 224
#define MPI_T_VERBOSITY_TUNER_DETAIL 225
#define MPI_T_VERBOSITY_TUNER_ALL 226
#define MPI_T_VERBOSITY_MPIDEV_BASIC 227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 228
#define MPI_T_VERBOSITY_MPIDEV_ALL 229

#define MPI_T_BIND_NO_OBJECT 9700
#define MPI_T_BIND_MPI_COMM 9701
#define MPI_T_BIND_MPI_DATATYPE 9702
#define MPI_T_BIND_MPI_ERRHANDLER 9703
#define MPI_T_BIND_MPI_FILE 9704
#define MPI_T_BIND_MPI_GROUP 9705
#define MPI_T_BIND_MPI_OP 9706
#define MPI_T_BIND_MPI_REQUEST 9707
#define MPI_T_BIND_MPI_WIN 9708
#define MPI_T_BIND_MPI_MESSAGE 9709
#define MPI_T_BIND_MPI_INFO 9710
#define MPI_T_BIND_MPI_SESSION 9711

#define MPI_T_SCOPE_CONSTANT 60438
#define MPI_T_SCOPE_READONLY 60439
#define MPI_T_SCOPE_LOCAL 60440
#define MPI_T_SCOPE_GROUP 60441
#define MPI_T_SCOPE_GROUP_EQ 60442
#define MPI_T_SCOPE_ALL 60443
#define MPI_T_SCOPE_ALL_EQ 60444

#define MPI_T_PVAR_CLASS_STATE 240
#define MPI_T_PVAR_CLASS_LEVEL 241
#define MPI_T_PVAR_CLASS_SIZE 242
#define MPI_T_PVAR_CLASS_PERCENTAGE 243
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 244
#define MPI_T_PVAR_CLASS_LOWWATERMARK 245
#define MPI_T_PVAR_CLASS_COUNTER 246
#define MPI_T_PVAR_CLASS_AGGREGATE 247
#define MPI_T_PVAR_CLASS_TIMER 248
#define MPI_T_PVAR_CLASS_GENERIC 249

#define MPI_T_CB_REQUIRE_NONE 0
#define MPI_T_CB_REQUIRE_MPI_RESTRICTED 1
#define MPI_T_CB_REQUIRE_THREAD_SAFE 2
#define MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE 3

#define MPI_T_SOURCE_ORDERED 0
#define MPI_T_SOURCE_UNORDERED 1

/* ---- handles ---- */
typedef struct nicq_T_enum* MPI_T_enum;
typedef struct nicq_T_cvar_handle* MPI_T_cvar_handle;
typedef struct nicq_T_pvar_handle* MPI_T_pvar_handle;
typedef struct nicq_T_pvar_session* MPI_T_pvar_session;
typedef struct nicq_T_event_registration* MPI_T_event_registration;
typedef struct nicq_T_event_instance* MPI_T_event_instance;
typedef int MPI_T_cb_safety;
typedef int MPI_T_source_order;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
typedef void(MPI_T_event_cb_function)(MPI_T_event_instance event_instance,
                                      MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, void* user_data);
typedef void(MPI_T_event_free_cb_function)(MPI_T_event_registration event_registration,
                                           MPI_T_cb_safety cb_safety, void* user_data);
typedef void(MPI_T_event_dropped_cb_function)(MPI_Count count,
                                              MPI_T_event_registration event_registration,
                                              int source_index, MPI_T_cb_safety cb_safety,
                                              void* user_data);
int MPI_T_category_changed(int* update_number);
int MPI_T_category_get_categories(int cat_index, int len, int indices[]);
int MPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_events(int cat_index, int len, int indices[]);
int MPI_T_category_get_index(const char* name, int* cat_index);
int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                            int* num_cvars, int* num_pvars, int* num_categories);
int MPI_T_category_get_num(int* num_cat);
int MPI_T_category_get_num_events(int cat_index, int* num_events);
int MPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int MPI_T_cvar_get_index(const char* name, int* cvar_index);
int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* scope);
int MPI_T_cvar_get_num(int* num_cvar);
int MPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                            int* count);
int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle);
int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf);
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf);
int MPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len);
int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int* value, char* name, int* name_len);
int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info* info_used);
int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info);
int MPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer);
int MPI_T_event_get_index(const char* name, int* event_index);
int MPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                         int* num_elements, MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                         int* desc_len, int* bind);
int MPI_T_event_get_num(int* num_events);
int MPI_T_event_get_source(MPI_T_event_instance event_instance, int* source_index);
int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count* event_timestamp);
int MPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                             MPI_T_event_registration* event_registration);
int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void* user_data,
                            MPI_T_event_free_cb_function* free_cb_function);
int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info* info_used);
int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info);
int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void* buffer);
int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info, void* user_data,
                                  MPI_T_event_cb_function* event_cb_function);
int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function* dropped_cb_function);
int MPI_T_finalize(void);
int MPI_T_init_thread(int required, int* provided);
int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index);
int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* readonly, int* continuous, int* atomic);
int MPI_T_pvar_get_num(int* num_pvar);
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                            MPI_T_pvar_handle* handle, int* count);
int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle);
int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf);
int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf);
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_session_create(MPI_T_pvar_session* session);
int MPI_T_pvar_session_free(MPI_T_pvar_session* session);
int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf);
int MPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc, int* desc_len,
                          MPI_T_source_order* ordering, MPI_Count* ticks_per_second,
                          MPI_Count* max_ticks, MPI_Info* info);
int MPI_T_source_get_num(int* num_sources);
int MPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp);

#ifdef __cplusplus
}
#endif
#endif /* NICQ_MPI_TOOL_H_INCLUDED */
