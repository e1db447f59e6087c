// The MPI tool information interface (MPI_T_*): declared so that tools and
// programs written for a full MPI compile and link, not implemented. Each
// returns MPI_ERR_UNSUPPORTED_OPERATION. It calls no error handler: MPI_T
// calls never do (MPI 4.1 15.3.10), and may come before MPI_Init.
#include <mpi.h>

extern "C" {

int MPI_T_category_changed(int* update_number) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_events(int cat_index, int len, int indices[]) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_index(const char* name, int* cat_index) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                            int* num_cvars, int* num_pvars, int* num_categories) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_num(int* num_cat) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_num_events(int cat_index, int* num_events) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_get_index(const char* name, int* cvar_index) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* scope) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_get_num(int* num_cvar) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                            int* count) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int* value, char* name, int* name_len) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info* info_used) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_get_index(const char* name, int* event_index) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                         int* num_elements, MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                         int* desc_len, int* bind) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_get_num(int* num_events) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_get_source(MPI_T_event_instance event_instance, int* source_index) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count* event_timestamp) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                             MPI_T_event_registration* event_registration) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void* user_data,
                            MPI_T_event_free_cb_function* free_cb_function) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info* info_used) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void* buffer) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info, void* user_data,
                                  MPI_T_event_cb_function* event_cb_function) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function* dropped_cb_function) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_finalize(void) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_init_thread(int required, int* provided) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* readonly, int* continuous, int* atomic) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_get_num(int* num_pvar) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                            MPI_T_pvar_handle* handle, int* count) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc, int* desc_len,
                          MPI_T_source_order* ordering, MPI_Count* ticks_per_second,
                          MPI_Count* max_ticks, MPI_Info* info) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_source_get_num(int* num_sources) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

int MPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

}  // extern "C"
