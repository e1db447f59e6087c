# Install rules: libnicq, the public headers, the tools and wrappers.
# libnicq is defined after tools/ in the top-level CMakeLists.txt, so its
# rule is deferred to the end of the top-level directory.
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

function(nicq_install_library)
  install(TARGETS nicq LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL nicq_install_library)
