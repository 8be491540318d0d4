// Contract rules of the families that move or resample elements without computing on them
// (schemas/plan.fbs ConcatParams, CopyParams, TransposeParams, SliceParams, GatherParams,
// GatherElementsParams, ScatterParams, PadParams, BroadcastParams, ResizeParams): any dtype, the
// output of the data input's dtype (Resize interpolates, Scatter's reductions compute); every
// element read lies inside its input.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

// 1..64 inputs equal to y except along the axis, whose extents sum to y's.
void contract_concat(StepContract& c) {
  const auto* p = c.step->params_as_ConcatParams();
  if (!p || c.in.empty() || c.in.size() > 64) return c.bad("step ", c.name, " concat");
  const Shape& y = c.y;
  const int64_t r = static_cast<int64_t>(y.size());
  const int64_t axis = p->axis() < 0 ? p->axis() + r : p->axis();
  int64_t sum = 0;
  for (const Shape& x : c.in) {
    bool same = x.size() == y.size();
    for (int64_t d = 0; same && d < r; ++d) same = d == axis || x[d] == y[d];
    c.expect(same, "concat input " + str(x));
    if (same) sum += x[axis];
  }
  c.expect(sum == y[axis], "concat axis sum");
}

// A byte copy between tensors of equal size.
void contract_copy(StepContract& c) {
  c.expect(c.step->params_as_CopyParams() && c.in.size() == 1 &&
               c.tensor(c.step->inputs()->Get(0))->size_bytes() ==
                   c.tensor(c.step->outputs()->Get(0))->size_bytes(),
           "copy sizes");
}

// y[d] = x[perm[d]], perm a permutation of x's dims.
void contract_transpose(StepContract& c) {
  const auto* p = c.step->params_as_TransposeParams();
  if (!p || !p->perm() || c.in.size() != 1) return c.bad("step ", c.name, " transpose");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  std::vector<bool> seen(x.size(), false);
  bool ok = p->perm()->size() == x.size() && y.size() == x.size();
  for (uint32_t d = 0; ok && d < p->perm()->size(); ++d) {
    const int32_t from = p->perm()->Get(d);
    ok = from >= 0 && static_cast<size_t>(from) < x.size() && !seen[from] && y[d] == x[from];
    if (ok) seen[from] = true;
  }
  c.expect(ok && c.dtype_of(0) == c.in_dtype(0), "transpose perm/output " + str(y));
}

// Every element read lies inside x: starts[d] + i * steps[d] for i in [0, y[d]).
void contract_slice(StepContract& c) {
  const auto* p = c.step->params_as_SliceParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " slice");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  const Shape st = vec(p->starts()), sp = vec(p->steps());
  bool ok = st.size() == x.size() && sp.size() == x.size() && y.size() == x.size();
  for (size_t d = 0; ok && d < x.size(); ++d) {
    const int64_t last = st[d] + (y[d] - 1) * sp[d];
    ok = sp[d] != 0 && st[d] >= 0 && st[d] < x[d] && last >= 0 && last < x[d];
  }
  c.expect(ok && c.dtype_of(0) == c.in_dtype(0), "slice reads outside x " + str(x));
}

// Inputs data, indices (int32 or int64); y is data's shape with the axis replaced by indices'.
void contract_gather(StepContract& c) {
  const auto* p = c.step->params_as_GatherParams();
  if (!p || c.in.size() != 2) return c.bad("step ", c.name, " gather");
  const Shape& data = c.in[0];
  const int64_t axis = p->axis();
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()))
    return c.bad("step ", c.name, " gather axis ", axis);
  Shape want(data.begin(), data.begin() + axis);
  want.insert(want.end(), c.in[1].begin(), c.in[1].end());
  want.insert(want.end(), data.begin() + axis + 1, data.end());
  c.expect(c.y == want && c.dtype_of(0) == c.in_dtype(0), "gather output " + str(c.y));
  c.expect(c.in_dtype(1) == fb::DType::Int32 || c.in_dtype(1) == fb::DType::Int64,
           "gather indices dtype");
}

// Inputs data, indices of data's rank; y is the indices' shape.
void contract_gather_elements(StepContract& c) {
  const auto* p = c.step->params_as_GatherElementsParams();
  if (!p || c.in.size() != 2) return c.bad("step ", c.name, " gather elements");
  const Shape& y = c.y;
  c.expect(y == c.in[1] && c.in[0].size() == y.size() && p->axis() >= 0 &&
               p->axis() < static_cast<int32_t>(y.size()) && c.dtype_of(0) == c.in_dtype(0),
           "gather elements output " + str(y));
}

// data, indices (Int32 or Int64), updates of data's dtype; y of data's shape and dtype.
// ScatterElements: indices and updates of one shape, of data's rank, no larger off the axis.
// ScatterND: indices [.., k] with 1 <= k <= data's rank; updates the indices' dims but the last,
// then data's from k on. A reduction needs Float16, Float32, Float64, Int32 or Int64.
void contract_scatter(StepContract& c) {
  const auto* p = c.step->params_as_ScatterParams();
  if (!p || c.in.size() != 3) return c.bad("step ", c.name, " scatter");
  const Shape &data = c.in[0], &idx = c.in[1], &upd = c.in[2];
  const fb::DType t = c.in_dtype(0);
  c.expect(c.y == data && c.dtype_of(0) == t && c.in_dtype(2) == t &&
               (c.in_dtype(1) == fb::DType::Int32 || c.in_dtype(1) == fb::DType::Int64),
           "scatter output " + str(c.y));
  c.expect(p->reduction() == fb::ScatterReduction::None || t == fb::DType::Float16 ||
               t == fb::DType::Float32 ||
               t == fb::DType::Float64 || t == fb::DType::Int32 || t == fb::DType::Int64,
           "scatter reduction dtype");
  const int64_t r = static_cast<int64_t>(data.size());
  if (p->nd()) {
    const int64_t k = idx.empty() ? 0 : idx.back();
    bool ok = k >= 1 && k <= r && upd.size() == idx.size() - 1 + size_t(r - k);
    for (size_t d = 0; ok && d < upd.size(); ++d)
      ok = upd[d] == (d + 1 < idx.size() ? idx[d] : data[size_t(k) + d - (idx.size() - 1)]);
    c.expect(ok, "scatter nd indices " + str(idx) + " updates " + str(upd));
  } else {
    bool ok = idx == upd && idx.size() == data.size() && p->axis() >= 0 && p->axis() < r;
    for (int64_t d = 0; ok && d < r; ++d) ok = d == p->axis() || idx[size_t(d)] <= data[size_t(d)];
    c.expect(ok, "scatter elements indices " + str(idx) + " updates " + str(upd));
  }
}

// MaxUnpool: x of a float dtype (rank 3 or more: N, C, spatial), indices (Int64) of x's shape;
// y of x's dtype and rank; index_shape empty or of y's rank within y's extents.
void contract_max_unpool(StepContract& c) {
  const auto* p = c.step->params_as_MaxUnpoolParams();
  if (!p || c.in.size() != 2) return c.bad("step ", c.name, " max_unpool");
  const fb::DType t = c.in_dtype(0);
  c.expect(c.in[1] == c.in[0] && c.in_dtype(1) == fb::DType::Int64, "max_unpool indices");
  c.expect(c.dtype_of(0) == t && c.y.size() == c.in[0].size() && c.in[0].size() >= 3 &&
               (t == fb::DType::Float32 || t == fb::DType::Float16 || t == fb::DType::Float64),
           "max_unpool output " + str(c.y));
  bool within = true;
  if (p->index_shape() != nullptr && p->index_shape()->size() > 0) {
    within = p->index_shape()->size() == c.y.size();
    for (size_t d = 0; within && d < c.y.size(); ++d) {
      const int64_t e = p->index_shape()->Get(static_cast<flatbuffers::uoffset_t>(d));
      within = e >= 1 && e <= c.y[d];
    }
  }
  c.expect(within, "max_unpool index_shape within " + str(c.y));
}

void contract_pad(StepContract& c) {
  const auto* p = c.step->params_as_PadParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " pad");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  const Shape begin = vec(p->pads_begin());
  bool ok = begin.size() == x.size() && y.size() == x.size();
  // The end pad is implied by y; either may be negative (a crop), not past x.
  for (size_t d = 0; ok && d < x.size(); ++d) ok = -begin[d] < x[d] && y[d] >= 1;
  c.expect(ok && c.dtype_of(0) == c.in_dtype(0), "pad output " + str(y));
}

// Expand: x broadcasts to y; Tile: each of y's extents a multiple of x's.
void contract_broadcast(StepContract& c) {
  const auto* p = c.step->params_as_BroadcastParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " broadcast");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  Shape out;
  bool ok = c.dtype_of(0) == c.in_dtype(0);
  if (p->tile()) {
    ok = ok && x.size() == y.size();
    for (size_t d = 0; ok && d < x.size(); ++d) ok = y[d] % x[d] == 0;
  } else {
    ok = ok && broadcast(x, y, &out) && out == y;
  }
  c.expect(ok, std::string(p->tile() ? "tile" : "expand") + " output " + str(y));
}

// Input x, y of its rank; one scale per dim.
void contract_resize(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_ResizeParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " resize");
  c.expect(c.y.size() == c.in[0].size() && p->scale() && p->scale()->size() == c.y.size(),
           "resize rank and scales");
}

// GridSample: X [N, C, *in] of 1 to 3 spatial dims, grid [N, *out, r] Float32, Y [N, C, *out] of
// X's dtype.
void contract_grid_sample(StepContract& c) {
  const auto* p = c.step->params_as_GridSampleParams();
  if (!p || c.in.size() != 2) return c.bad("step ", c.name, " grid_sample");
  const Shape& x = c.in[0];
  const Shape& grid = c.in[1];
  const size_t r = x.size() >= 2 ? x.size() - 2 : 0;
  bool ok = r >= 1 && r <= 3 && grid.size() == r + 2 && c.y.size() == r + 2 &&
            grid[0] == x[0] && grid.back() == static_cast<int64_t>(r) && c.y[0] == x[0] &&
            c.y[1] == x[1];
  for (size_t d = 0; ok && d < r; ++d) ok = c.y[2 + d] == grid[1 + d];
  c.expect(ok, "grid_sample shapes X " + str(x) + " grid " + str(grid) + " y " + str(c.y));
  c.expect(c.in_dtype(1) == fb::DType::Float32 && c.dtype_of(0) == c.in_dtype(0) &&
               (c.in_dtype(0) == fb::DType::Float32 ||
                (!c.cpu && c.in_dtype(0) == fb::DType::Float16)),
           "grid_sample dtypes");
}

}  // namespace jetplan::converter::testing::contract
