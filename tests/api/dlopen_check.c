/* A program that loads libnicq with dlopen, as a Python binding does:
 * libnicq's initial-exec thread-locals mark it STATIC_TLS, so its whole
 * thread-local block must fit in glibc's static TLS surplus, or dlopen
 * fails with "cannot allocate memory in static TLS block". Loads the
 * library named by argv[1] and calls MPI_Initialized through it.
 * Usage: dlopen_check LIBNICQ */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBNICQ\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "FAIL: dlopen(%s): %s\n", argv[1], dlerror());
    return 1;
  }
  int (*initialized)(int*) = (int (*)(int*))dlsym(lib, "MPI_Initialized");
  if (initialized == NULL) {
    fprintf(stderr, "FAIL: dlsym(MPI_Initialized): %s\n", dlerror());
    return 1;
  }
  int flag = -1;
  if (initialized(&flag) != 0 || flag != 0) {
    fprintf(stderr, "FAIL: MPI_Initialized through dlopen gave flag %d\n", flag);
    return 1;
  }
  printf("dlopen of %s: ok\n", argv[1]);
  return 0;
}
