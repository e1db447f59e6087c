# Multi-process MPI programs of the API layer (C, one C++), run under nicqrun
# on every loopback provider. Test names: mp.api_<program>.<provider>.n<ranks>.
foreach(p order pingpong persistent completion errors fatal threads)
  nicq_add_mp_program(api_mp_${p} SOURCES mp_${p}.c)
endforeach()
target_link_libraries(api_mp_threads PRIVATE Threads::Threads)
nicq_add_mp_program(api_mp_cxx SOURCES mp_cxx.cc)
nicq_add_mp_program(api_mp_complex SOURCES mp_complex.c)
nicq_add_mp_program(api_mp_persistent_restart SOURCES mp_persistent_restart.c)
nicq_add_mp_program(api_mp_fast_paths SOURCES mp_fast_paths.c)

set(_api_providers sockets tcp tcp+ofi_rxm shm)
nicq_add_mp_test(api_order PROGRAM api_mp_order RANKS 2 3 4 PROVIDERS ${_api_providers}
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_pingpong PROGRAM api_mp_pingpong RANKS 2 3 PROVIDERS ${_api_providers}
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_persistent PROGRAM api_mp_persistent RANKS 2 4 PROVIDERS ${_api_providers}
                 LABELS api TIMEOUT 60)
# 10^4 restarts of persistent requests (named and wildcard receives), and
# start / cancel / free of active and inactive ones.
nicq_add_mp_test(api_persistent_restart PROGRAM api_mp_persistent_restart RANKS 2 3
                 PROVIDERS shm tcp+ofi_rxm LABELS api TIMEOUT 180)
# The short paths of small messages (one-pass nonblocking post, the
# same-node one-frame send, an unexpected eager message completing a
# receive without an op, inline completion) interleaved with the general
# ones: data, order, status, truncation.
nicq_add_mp_test(api_fast_paths PROGRAM api_mp_fast_paths RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 120)
nicq_add_mp_test(api_completion PROGRAM api_mp_completion RANKS 3 4 PROVIDERS ${_api_providers}
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_errors PROGRAM api_mp_errors RANKS 2 3 PROVIDERS ${_api_providers}
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_cxx PROGRAM api_mp_cxx RANKS 2 PROVIDERS ${_api_providers}
                 ARGS --expect-size 2 LABELS api TIMEOUT 60)
# The complex types and MPI_CXX_BOOL: reductions with exact expected values.
nicq_add_mp_test(api_complex PROGRAM api_mp_complex RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_threads PROGRAM api_mp_threads RANKS 2 3 PROVIDERS tcp shm
                 LABELS api TIMEOUT 60)
# The same under ThreadSanitizer with the host progress thread forced on:
# application threads and the progress thread share the engine.
nicq_add_mp_test(api_threads_progress PROGRAM api_mp_threads RANKS 2 PROVIDERS tcp
                 LABELS api tsan ENV NICQ_PROGRESS_THREAD=1 TIMEOUT 120)

# MPI_ERRORS_ARE_FATAL: the job must abort with the message, not hang.
foreach(prov tcp shm)
  string(REPLACE "+" ";" _prov_real "${prov}")
  add_test(NAME mp.api_fatal.${prov}.n3
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_fatal.sh ${CMAKE_BINARY_DIR}/bin/nicqrun 3
                   ${CMAKE_BINARY_DIR}/tests/api_mp_fatal "invalid destination rank 4")
  set_tests_properties(mp.api_fatal.${prov}.n3 PROPERTIES ENVIRONMENT "NICQ_PROVIDER=${_prov_real}"
                       LABELS "mp;api" TIMEOUT 90)
endforeach()

# Singleton: started without nicqrun, the program is a world of one.
foreach(p pingpong persistent)
  add_test(NAME api.singleton.${p} COMMAND ${CMAKE_BINARY_DIR}/tests/api_mp_${p})
  set_tests_properties(api.singleton.${p} PROPERTIES LABELS "api" TIMEOUT 60)
endforeach()
add_test(NAME api.singleton.cxx COMMAND ${CMAKE_BINARY_DIR}/tests/api_mp_cxx --expect-size 1)
set_tests_properties(api.singleton.cxx PROPERTIES LABELS "api" TIMEOUT 60)

# A request slot reused by another kind of request keeps nothing of the
# first (the engine's kind and ops are reset at allocation).
nicq_add_mp_program(api_mp_request_reuse SOURCES mp_request_reuse.c)
nicq_add_mp_test(api_request_reuse PROGRAM api_mp_request_reuse RANKS 2 3 PROVIDERS tcp+ofi_rxm shm
                 sockets LABELS api TIMEOUT 60)

# Point-to-point beyond the basics: cancel of receives and sends, matched
# probe, MPI_Isendrecv, MPI_Request_get_status_*, generalized requests,
# MPI_BOTTOM, MPI-4.1 buffers, large counts.
foreach(p cancel mprobe p2p_more)
  nicq_add_mp_program(api_mp_${p} SOURCES mp_${p}.c)
  nicq_add_mp_test(api_${p} PROGRAM api_mp_${p} RANKS 2 4 PROVIDERS shm tcp+ofi_rxm
                   LABELS api TIMEOUT 60)
  nicq_add_mp_test(api_${p} PROGRAM api_mp_${p} RANKS 3 PROVIDERS sockets LABELS api TIMEOUT 90)
endforeach()
# One message of INT_MAX + 17 bytes through the _c calls (about 4 GiB of memory).
nicq_add_mp_program(api_mp_large_count SOURCES mp_large_count.c)
nicq_add_mp_test(api_large_count PROGRAM api_mp_large_count RANKS 2 PROVIDERS shm
                 LABELS api slow TIMEOUT 120)
# Intercommunicators: creation, merge order, split/dup/create, p2p over the
# remote group, every collective in its three forms, on groups of unequal
# size (odd world sizes, rank 0 against the rest) and interleaved ranks.
nicq_add_mp_program(api_mp_intercomm SOURCES mp_intercomm.c mp_intercomm_coll.c mp_intercomm_args.c)
nicq_add_mp_test(api_intercomm PROGRAM api_mp_intercomm RANKS 2 3 4 5 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_intercomm PROGRAM api_mp_intercomm RANKS 3 PROVIDERS sockets
                 LABELS api TIMEOUT 90)

# Handles freed while operations use them: a communicator with a pending
# receive keeps its context id, an active persistent receive still gets its
# data, a datatype and op outlive their handles in a nonblocking reduction.
nicq_add_mp_program(api_mp_lifetimes SOURCES mp_lifetimes.c)
nicq_add_mp_test(api_lifetimes PROGRAM api_mp_lifetimes RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_lifetimes PROGRAM api_mp_lifetimes RANKS 2 PROVIDERS sockets LABELS api
                 TIMEOUT 90)
# Communicator, group, error-class and session calls of MPI-4.1 (idup,
# hints, groups, split_type, user error classes, session handlers).
nicq_add_mp_program(api_mp_comm_more SOURCES mp_comm_more.c)
nicq_add_mp_test(api_comm_more PROGRAM api_mp_comm_more RANKS 1 3 4 PROVIDERS shm tcp+ofi_rxm sockets
                 LABELS api TIMEOUT 60)
nicq_add_mp_test(api_comm_more_vnode PROGRAM api_mp_comm_more RANKS 3 4 PROVIDERS tcp
                 ENV NICQ_SHM=auto NICQ_NODE_RANKS=2 LABELS api vnode TIMEOUT 60)
add_test(NAME api.singleton.comm_more COMMAND ${CMAKE_BINARY_DIR}/tests/api_mp_comm_more)
set_tests_properties(api.singleton.comm_more PROPERTIES LABELS "api" TIMEOUT 60)
# Large-count (_c) collectives: data through each form, MPI_ERR_COUNT above INT_MAX.
nicq_add_mp_program(api_mp_coll_large SOURCES mp_coll_large.c)
nicq_add_mp_test(api_coll_large PROGRAM api_mp_coll_large RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 sockets LABELS api TIMEOUT 60)
# The declared rest of MPI 4.1: unsupported calls' errors, the small calls.
nicq_add_mp_program(api_mp_coverage SOURCES mp_coverage.c)
nicq_add_mp_test(api_coverage PROGRAM api_mp_coverage RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
# MPI-IO on a shared POSIX file: views (contiguous, vector, tiled), every
# read/write form, sizes, positions, short reads; and each error class.
nicq_add_mp_program(api_mp_file SOURCES mp_file.c)
nicq_add_mp_test(api_file PROGRAM api_mp_file RANKS 1 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
nicq_add_mp_program(api_mp_file_shared SOURCES mp_file_shared.c)
nicq_add_mp_test(api_file_shared PROGRAM api_mp_file_shared RANKS 1 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
nicq_add_mp_program(api_mp_file_errors SOURCES mp_file_errors.c)
nicq_add_mp_test(api_file_errors PROGRAM api_mp_file_errors RANKS 1 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
# A profiling tool's view (MPI_Send, MPI_Isend and MPI_Waitall defined by
# the program, passed on with dlsym): every user call seen, no internal one.
nicq_add_mp_program(api_mp_interpose SOURCES mp_interpose.c)
nicq_add_mp_test(api_interpose PROGRAM api_mp_interpose RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
# The profiling interface: a tool defining MPI_ functions and calling their
# PMPI_ names sees exactly the program's calls, none of the library's own.
nicq_add_mp_program(api_mp_pmpi SOURCES mp_pmpi.c mp_pmpi_cxx.cc)
nicq_add_mp_test(api_pmpi PROGRAM api_mp_pmpi RANKS 2 3 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)
# The tool information interface: control and performance variables,
# sessions, categories, errors.
nicq_add_mp_program(api_mp_tool SOURCES mp_tool.c)
nicq_add_mp_test(api_tool PROGRAM api_mp_tool RANKS 1 2 PROVIDERS shm tcp+ofi_rxm LABELS api
                 TIMEOUT 60)
# Graph and distributed graph topologies: queries, weights, MPI_Topo_test,
# and the creators' errors (collective verdicts on every rank).
nicq_add_mp_program(api_mp_topo_graph SOURCES mp_topo_graph.c)
nicq_add_mp_test(api_topo_graph PROGRAM api_mp_topo_graph RANKS 1 2 3 5
                 PROVIDERS shm tcp+ofi_rxm sockets LABELS api TIMEOUT 60)

# MPI_Comm_idup runs as a nonblocking agreement: blocking collectives on the
# parent before the wait, ranks waiting at different points, several idups
# outstanding, an idup overlapping a blocking dup of another communicator.
nicq_add_mp_program(api_mp_comm_idup SOURCES mp_comm_idup.c)
nicq_add_mp_test(api_comm_idup PROGRAM api_mp_comm_idup RANKS 2 3 4 PROVIDERS shm tcp+ofi_rxm
                 LABELS api TIMEOUT 60)

# Buffered sends on communicators of two sessions use their own session's
# buffer; world uses the process buffer (tests/api/mp_session_buffers.c).
nicq_add_mp_program(api_mp_session_buffers SOURCES mp_session_buffers.c)
nicq_add_mp_test(api_session_buffers PROGRAM api_mp_session_buffers RANKS 2 3
                 PROVIDERS shm tcp+ofi_rxm LABELS api TIMEOUT 60)

# A leader refuses MPI_Intercomm_create's arguments: its group fails with
# it, the other group's leader gives up waiting after NICQ_INTERCOMM_TIMEOUT
# seconds and its group fails too; then a correct creation works.
nicq_add_mp_program(api_mp_intercomm_refused SOURCES mp_intercomm_refused.c)
# Not on the verbs persona: the refusal and the timeout are the API
# layer's, the same over tcp;ofi_rxm (each run waits the timeout out).
nicq_add_mp_test(api_intercomm_refused PROGRAM api_mp_intercomm_refused RANKS 2 3 4
                 PROVIDERS shm tcp+ofi_rxm ENV NICQ_INTERCOMM_TIMEOUT=3 LABELS api TIMEOUT 60
                 NO_PERSONA)
# A rank exits while the other ranks split, merge or duplicate an
# intercommunicator it belongs to: every survivor gets MPI_ERR_PROC_FAILED
# (after NICQ_PEER_TIMEOUT) naming the call, instead of waiting forever.
# (--enable-recovery: nicqrun would otherwise end the job at the exit.)
foreach(call split merge dup)
  nicq_add_mp_test(api_intercomm_deadpeer_${call} PROGRAM api_mp_intercomm_refused
                   ARGS deadpeer ${call} RANKS 2 4 PROVIDERS shm LABELS api TIMEOUT 60
                   ENV NICQ_PEER_TIMEOUT=1 LAUNCH_ARGS --enable-recovery)
  nicq_add_mp_test(api_intercomm_deadpeer_${call} PROGRAM api_mp_intercomm_refused
                   ARGS deadpeer ${call} RANKS 4 PROVIDERS tcp+ofi_rxm LABELS api TIMEOUT 60 NO_PERSONA
                   ENV NICQ_PEER_TIMEOUT=1 LAUNCH_ARGS --enable-recovery)
  # Every rank on a virtual node of its own: the peer is reached through
  # libfabric only, yet its process is visible by pid on this host.
  nicq_add_mp_test(api_intercomm_deadpeer_vnode_${call} PROGRAM api_mp_intercomm_refused
                   ARGS deadpeer ${call} RANKS 4 PROVIDERS tcp LABELS api TIMEOUT 60
                   ENV NICQ_PEER_TIMEOUT=1 NICQ_NODE_RANKS=1 LAUNCH_ARGS --enable-recovery)
  foreach(t shm.n2 shm.n4 tcp+ofi_rxm.n4 vnode:tcp.n4)
    string(REPLACE ":" "_${call}." _name "api_intercomm_deadpeer_${t}")
    if(NOT t MATCHES ":")
      set(_name "api_intercomm_deadpeer_${call}.${t}")
    endif()
    set_tests_properties(mp.${_name} PROPERTIES
      PASS_REGULAR_EXPRESSION "INTERCOMM-DEADPEER-OK"
      FAIL_REGULAR_EXPRESSION "timeout after|exited with status [1-9]|killed by signal|check failed")
  endforeach()
endforeach()
