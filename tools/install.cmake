# Install rules: libnicq, the public headers, the tools and wrappers, a
# pkg-config file and a CMake package (find_package(nicq) -> nicq::nicq).
# libnicq is defined after tools/ in the top-level CMakeLists.txt, so its
# rules are deferred to the end of the top-level directory.
include(CMakePackageConfigHelpers)

install(TARGETS nicqrun nicq_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/install/mpicc ${CMAKE_CURRENT_BINARY_DIR}/install/mpicxx
        DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "
  foreach(alias mpiexec mpirun)
    execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink nicqrun
                    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\${alias}\")
  endforeach()")
install(FILES ${CMAKE_SOURCE_DIR}/include/mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} OPTIONAL)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/nicq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# pkg-config: paths relative to the .pc file (${pcfiledir}) unless the
# install dirs are absolute, so `cmake --install --prefix` anywhere works.
set(_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(NICQ_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." _up "${_pcdir}")
  set(NICQ_PC_PREFIX "\${pcfiledir}/${_up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(NICQ_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(NICQ_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(nicq.pc.in ${CMAKE_CURRENT_BINARY_DIR}/install/nicq.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/install/nicq.pc DESTINATION ${_pcdir})

# CMake package: nicqConfig.cmake + version file beside the exported targets.
set(_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/nicq)
configure_package_config_file(nicqConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/install/nicqConfig.cmake
                              INSTALL_DESTINATION ${_cmakedir}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/install/nicqConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/install/nicqConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/install/nicqConfigVersion.cmake
        DESTINATION ${_cmakedir})

function(nicq_install_library)
  install(TARGETS nicq EXPORT nicqTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT nicqTargets NAMESPACE nicq:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nicq)
  # nicq_sim (offload/) is defined after tools/ too; the collectives
  # researcher's simulator ships with the rest.
  if(TARGET nicq_sim)
    install(TARGETS nicq_sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL nicq_install_library)
