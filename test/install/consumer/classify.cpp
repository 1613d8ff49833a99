// Classifies the bundled digit with a model compiled at build time
// (symc_compile_model) through an installed libsymrt; prints the class.
#include <symc/Executor.h>
#include <symc/Npy.h>

#include <algorithm>
#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: classify DIGIT.npy\n");
    return 2;
  }
  try {
    auto exec = symc::Executor::simpleBind(symc::Artifact::load(LENET_ARTIFACT), symc::Context::cpu(), {}, "null");
    const symc::NDArray &probs = exec.forward(false, {{"data", symc::loadNpy(argv[1])}})[0];
    const float *p = probs.data<float>();
    std::printf("class %ld\n", static_cast<long>(std::max_element(p, p + probs.size()) - p));
  } catch (const symc::Error &e) {
    std::fprintf(stderr, "%s: %s\n", e.kind().c_str(), e.what());
    return 1;
  }
  return 0;
}
