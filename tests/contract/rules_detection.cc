// Contract rule of Nms (schemas/plan.fbs NmsParams): boxes [B, N, 4] and scores [B, C, N],
// float32; outputs the selection [capacity, 3] and its run-time row count [1], both int64; a
// workspace.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

void contract_nms(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  if (!c.step->params_as_NmsParams() || c.in.size() != 2 || c.step->outputs()->size() != 2)
    return c.bad("step ", c.name, " nms inputs/outputs");
  const Shape &boxes = c.in[0], &scores = c.in[1];
  const bool shapes = boxes.size() == 3 && boxes[2] == 4 && scores.size() == 3 &&
                      scores[0] == boxes[0] && scores[2] == boxes[1];
  c.expect(shapes, "nms boxes " + str(boxes) + " and scores " + str(scores));
  const Shape& y = c.y;
  c.expect(y.size() == 2 && y[1] == 3 && c.dtype_of(0) == fb::DType::Int64 &&
               c.shape(c.step->outputs()->Get(1)) == Shape{1} &&
               c.dtype_of(1) == fb::DType::Int64,
           "nms outputs");
  c.expect(c.step->workspace_bytes() > 0, "nms workspace");
}

}  // namespace jetplan::converter::testing::contract
