# CPack: `cpack -G DEB` (or TGZ) in a build directory packages what
# `cmake --install` installs. Included last from the top-level CMakeLists.txt.
set(CPACK_PACKAGE_NAME nicq)
set(CPACK_PACKAGE_VENDOR "nicq")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MPI-compatible communication library whose persistent and queued operations run on the NIC")
set(CPACK_PACKAGE_CONTACT "nicq developers <nicq@localhost>")
set(CPACK_GENERATOR "TGZ")
set(CPACK_SOURCE_GENERATOR "")
# Debian: the library's run-time dependencies come from dpkg-shlibdeps; the
# wrappers also need a C compiler to wrap.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gcc | c-compiler")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
