//===- SymReassociateReductions.cpp - the sym-reassociate-reductions pass -===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMREASSOCIATEREDUCTIONS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

struct SymReassociateReductionsPass : impl::SymReassociateReductionsBase<SymReassociateReductionsPass> {
  void runOnOperation() override {
    auto flags = arith::FastMathFlagsAttr::get(&getContext(),
                                               arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
    getOperation().walk([&](linalg::GenericOp generic) {
      if (generic.getNumReductionLoops() == 0)
        return;
      generic.getBody()->walk([&](arith::ArithFastMathInterface op) {
        op->setAttr(op.getFastMathAttrName(), flags);
      });
    });
  }
};

} // namespace
} // namespace symc::cpu
