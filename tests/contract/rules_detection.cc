// Contract rules of Nms (schemas/plan.fbs NmsParams): boxes [B, N, 4] and scores [B, C, N],
// float32; outputs the selection [capacity, 3] and its run-time row count [1], both int64; a
// workspace. RoiPool (RoiPoolParams): X [N, C, H, W], rois [R, 4] Float32 and batch indices [R]
// Int64 (RoiAlign) or rois [R, 5] (MaxRoiPool); Y [R, C, out_h, out_w] of X's dtype.
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

void contract_roi_pool(StepContract& c) {
  const auto* p = c.step->params_as_RoiPoolParams();
  const bool align = p && p->mode() != fb::RoiPoolMode::Max;
  if (!p || c.in.size() != (align ? 3u : 2u)) return c.bad("step ", c.name, " roi_pool inputs");
  const Shape& x = c.in[0];
  const Shape& rois = c.in[1];
  bool ok = x.size() == 4 && c.y.size() == 4 && rois.size() == 2 &&
            rois[1] == (align ? 4 : 5) && c.y[0] == rois[0] && c.y[1] == x[1];
  if (align) ok = ok && c.in[2] == Shape{rois[0]};
  c.expect(ok, "roi_pool shapes X " + str(x) + " rois " + str(rois) + " y " + str(c.y));
  c.expect(c.in_dtype(1) == fb::DType::Float32 &&
               (!align || c.in_dtype(2) == fb::DType::Int64) && c.dtype_of(0) == c.in_dtype(0) &&
               (c.in_dtype(0) == fb::DType::Float32 ||
                (!c.cpu && c.in_dtype(0) == fb::DType::Float16)),
           "roi_pool dtypes");
  c.expect(p->sampling_ratio() >= 0 && p->sampling_ratio() <= 1024, "roi_pool sampling_ratio");
}

}  // namespace jetplan::converter::testing::contract
