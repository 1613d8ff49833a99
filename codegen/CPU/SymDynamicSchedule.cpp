//===- SymDynamicSchedule.cpp - the sym-dynamic-schedule pass -------------===//
#include "codegen/CPU/Passes.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMDYNAMICSCHEDULE
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

struct SymDynamicSchedulePass : impl::SymDynamicScheduleBase<SymDynamicSchedulePass> {
  void runOnOperation() override {
    getOperation().walk([](omp::WsloopOp loop) {
      if (!loop.getScheduleVal())
        loop.setScheduleVal(omp::ClauseScheduleKind::Dynamic);
    });
  }
};

} // namespace
} // namespace symc::cpu
