# Helpers for the test suite.
find_package(GTest REQUIRED)
include(GoogleTest)

# nicq_add_unit_test(name SOURCES a.cc b.cc [LINK layer...] [LABELS l1 l2])
# A gtest binary linked against the given layer libraries (default: libnicq).
function(nicq_add_unit_test name)
  cmake_parse_arguments(A "" "" "SOURCES;LABELS;LINK" ${ARGN})
  if(NOT A_LINK)
    set(A_LINK nicq_internal)
  endif()
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_LINK} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  # The label list must reach the test properties as one value: escape its ';'.
  set(_labels unit ${A_LABELS})
  string(REPLACE ";" "\\;" _labels "${_labels}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${_labels}" TIMEOUT 300)
endfunction()

# nicq_add_mp_program(name SOURCES a.c ... [LINK layer...]): a program for
# multi-process tests (default: linked to libnicq).
function(nicq_add_mp_program name)
  cmake_parse_arguments(A "" "" "SOURCES;LINK" ${ARGN})
  if(NOT A_LINK)
    set(A_LINK nicq_internal)
  endif()
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_LINK})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endfunction()

# nicq_tsan_program(target...): programs that tests labelled `tsan` run. The
# TSan phase of scripts/test.sh builds only these (target
# nicq_tsan_programs, made in tests/CMakeLists.txt), not every test.
function(nicq_tsan_program)
  set_property(GLOBAL APPEND PROPERTY NICQ_TSAN_PROGRAMS ${ARGN})
endfunction()

# nicq_add_mp_test(name PROGRAM prog RANKS 2 3 4 PROVIDERS sockets tcp ... [ARGS ...] [LABELS ...]
#                  [ENV VAR=value ...] [TIMEOUT s] [LAUNCH_ARGS nicqrun-option...]
#                  [PERSONA_ARGS ...] [PERSONA_RANKS ...] [NO_PERSONA])
# One ctest per (provider, ranks): nicqrun -n R prog args, with NICQ_PROVIDER set
# (and NICQ_SHM=off except in the shm column).
# Provider names with ';' are written with '+' (e.g. tcp+ofi_rxm) in test names.
function(nicq_add_mp_test name)
  cmake_parse_arguments(A "NO_PERSONA" "PROGRAM;TIMEOUT"
                        "RANKS;PROVIDERS;ARGS;PERSONA_ARGS;PERSONA_RANKS;LABELS;ENV;LAUNCH_ARGS"
                        ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  if("tsan" IN_LIST A_LABELS)
    nicq_tsan_program(${A_PROGRAM})
  endif()
  # The sockets provider's progress thread polls without sleeping for
  # FI_SOCKETS_PE_WAITTIME ms (default 10) after each wake-up; with several
  # ranks and their provider threads on CI's 2 cores those polls take the
  # cores from the ranks that have work (docs/user-guide.md). 1 ms cut the
  # heaviest sockets and cxi-persona tests' CPU time by 31 % and their time
  # by 24 % here (docs/performance.md, Run 61). A test's ENV may override it;
  # the provider tests outside this function keep the provider's default.
  set(_sockets_env "FI_SOCKETS_PE_WAITTIME=1;")
  # ctest waits a little longer than nicqrun so nicqrun can name the ranks
  # still running when its --timeout ends the job.
  math(EXPR _ctest_timeout "${A_TIMEOUT} + 15")
  foreach(prov IN LISTS A_PROVIDERS)
    # "tcp+ofi_rxm" names the provider string "tcp;ofi_rxm": the semicolon is
    # escaped, or ENVIRONMENT (a list) would split it into NICQ_PROVIDER=tcp
    # and a stray "ofi_rxm" entry.
    string(REPLACE "+" "\\;" prov_real "${prov}")
    # The provider columns test libfabric's providers, so same-node peers
    # use them too (NICQ_SHM=off); the shm column runs nicq's own
    # shared-memory transport instead of libfabric's shm (which stays
    # reachable with NICQ_SHM=off). A test's own ENV may still override it.
    if(prov STREQUAL "shm")
      set(_shm_env "")
    else()
      set(_shm_env "NICQ_SHM=off;")
    endif()
    if(prov STREQUAL "sockets")
      string(APPEND _shm_env "${_sockets_env}")
    endif()
    foreach(n IN LISTS A_RANKS)
      set(tname "mp.${name}.${prov}.n${n}")
      add_test(NAME ${tname}
               COMMAND ${CMAKE_BINARY_DIR}/bin/nicqrun -n ${n} --timeout ${A_TIMEOUT} ${A_LAUNCH_ARGS}
                       ${CMAKE_BINARY_DIR}/tests/${A_PROGRAM} ${A_ARGS})
      set_tests_properties(${tname} PROPERTIES
        ENVIRONMENT "NICQ_PROVIDER=${prov_real};${_shm_env}${A_ENV}"
        LABELS "mp;${prov};${A_LABELS}"
        TIMEOUT ${_ctest_timeout})
    endforeach()
  endforeach()
  # The same test on the contract-faithful test providers (providers/persona):
  # what runs on sockets runs on the cxi persona (native backend, triggered
  # ops under cxi's rules), what runs on tcp;ofi_rxm on the verbs persona
  # (emulated backend under verbs;ofi_rxm's rules). Label `persona`.
  # NO_PERSONA: the test checks something of the core provider itself.
  # PERSONA_ARGS: the program's arguments there instead of ARGS (a smaller
  # sample where the persona's manual progress makes every step slower).
  # PERSONA_RANKS: the rank counts there instead of RANKS (the persona's
  # rules at the counts whose plans differ; the provider column keeps all).
  if(NOT A_PERSONA_ARGS)
    set(A_PERSONA_ARGS ${A_ARGS})
  endif()
  if(NOT A_PERSONA_RANKS)
    set(A_PERSONA_RANKS ${A_RANKS})
  endif()
  if(NICQ_PERSONA_TESTS AND NOT A_NO_PERSONA)
    set(_personas "")
    if("sockets" IN_LIST A_PROVIDERS)
      list(APPEND _personas cxi_persona)
    endif()
    if("tcp+ofi_rxm" IN_LIST A_PROVIDERS)
      list(APPEND _personas verbs_persona)
    endif()
    foreach(prov IN LISTS _personas)
      set(_persona_env "")
      if(prov STREQUAL "cxi_persona")  # over the sockets provider
        set(_persona_env "${_sockets_env}")
      endif()
      foreach(n IN LISTS A_PERSONA_RANKS)
        set(tname "mp.${name}.${prov}.n${n}")
        add_test(NAME ${tname}
                 COMMAND ${CMAKE_BINARY_DIR}/bin/nicqrun -n ${n} --timeout ${A_TIMEOUT} ${A_LAUNCH_ARGS}
                         ${CMAKE_BINARY_DIR}/tests/${A_PROGRAM} ${A_PERSONA_ARGS})
        set_tests_properties(${tname} PROPERTIES
          ENVIRONMENT "NICQ_PROVIDER=${prov};NICQ_SHM=off;${_persona_env}${A_ENV}"
          LABELS "mp;${prov};persona;${A_LABELS}"
          TIMEOUT ${_ctest_timeout})
      endforeach()
    endforeach()
  endif()
endfunction()

# The longest tests' seconds in the normal phase on CI's two cores, as
# their COST: ctest -j starts the costliest first, so no long test starts
# late and runs alone at the end while the other job slot idles (a fresh
# build directory, as on CI, has no cost data of earlier runs, and the
# other tests start in the order they are defined). A COST set here wins
# over the measured averages ctest keeps in Testing/Temporary; the values
# are the tests' own times (docs/performance.md, the test-suite runs), to
# be updated when a test's time moves by much. Each tests/ folder that
# defines some calls nicq_apply_test_costs() at its end (a COST can only
# be set in the folder that adds the test).
set(NICQ_TEST_COSTS
    mp.mpi_coll_sweep.shm.n5=60 mp.mpi_coll_sweep.shm.n4=25 mp.mpi_coll_sweep.shm.n3=24
    mp.mpi_coll_sweep.tcp+ofi_rxm.n3=34 mp.mpi_coll_sweep.sockets.n2=30
    mp.mpi_coll_sweep.sockets.n3=15 mp.mpi_coll_sweep.cxi_persona.n2=20
    mp.mpi_coll_sweep.cxi_persona.n3=15 mp.mpi_coll_sweep_vnode.tcp.n5=10
    mp.coll_offload_types.sockets.n3=40 mp.coll_offload_types.sockets.n2=18
    mp.coll_persistent_quick.sockets.n5=44 mp.coll_persistent_quick.cxi_persona.n5=27
    mp.hier_node_async2.sockets.n5=41 mp.coll_start_posts.sockets.n3=14
    mp.coll_start_posts.sockets.n2=11 mp.queue_many_rebase.sockets.n2=30
    mp.queue_many_rebase.cxi_persona.n2=20 mp.queue_many.cxi_persona.n2=22
    mp.queue_p2p_start_posts_native.sockets.n2=25 mp.api_persistent_restart.shm.n3=25
    mp.dense_asleep.sockets.n3=15 mp.dense_asleep.sockets.n4=12 mp.dense_asleep.sockets.n2=10
    mp.neighbor_asleep_plain.sockets.n4=20 mp.neighbor_asleep_v.sockets.n4=10
    mp.neighbor_asleep_w.sockets.n4=10 mp.coll_neighbor.sockets.n4=22
    mp.coll_neighbor.sockets.n5=13
    mp.coll_semantics.sockets.n5=13 mp.host_fold_scan.sockets.n3=15
    mp.host_fold_scan.cxi_persona.n2=14 mp.host_fold.sockets.n3=12 mp.host_fold.cxi_persona.n3=12)

function(nicq_apply_test_costs)
  foreach(entry IN LISTS NICQ_TEST_COSTS)
    string(REPLACE "=" ";" kv "${entry}")
    list(GET kv 0 name)
    list(GET kv 1 cost)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES COST ${cost})
    endif()
  endforeach()
endfunction()
