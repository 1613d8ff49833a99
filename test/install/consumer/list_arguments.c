/* A C program built with `pkg-config --cflags --libs symc`: lists an
   artifact's arguments through the C API. */
#include <stdio.h>
#include <symc/c_api.h>

int main(int argc, char **argv) {
  SymcArtifactHandle artifact;
  int count;
  if (argc != 2 || SymcArtifactLoad(argv[1], NULL, &artifact) != 0 ||
      SymcArtifactNumTensors(artifact, SYMC_ARGUMENTS, &count) != 0) {
    fprintf(stderr, "error: %s\n", argc == 2 ? SymcGetLastError() : "usage: list_arguments MODEL.so");
    return 1;
  }
  for (int i = 0; i < count; ++i) {
    const char *name;
    SymcArtifactGetTensor(artifact, SYMC_ARGUMENTS, i, &name, NULL, NULL, NULL);
    printf("%s\n", name);
  }
  SymcArtifactFree(artifact);
  return 0;
}
