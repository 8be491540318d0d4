"""PyTorch's time for the memory-bound steps around ConvNeXt-T's convs (FP16, CUDA graph replay of
50 back-to-back calls, best of 5): LayerNorm over channels last, the layer scale and
residual (scale * y + x), an add and a copy, at each stage's shape. Convs and GEMMs are
perf_layers.py's (bench_models.py --layers convnext_tiny,vit_b_16), against jetplan's own steps.
Run on the GPU machine: python3 tests/perf/torch_layer_peers.py
(Session 18's torch_layer_peers_h200_s18.txt was recorded by an earlier form of this script, 34002f2,
that also timed cuBLAS linears and cuDNN's depthwise 7x7 at those shapes.)
"""
import torch


def graph_us(fn, reps=50):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
    best = 1e9
    for _ in range(5):
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1000 / reps)
    return best


def main():
    h = torch.float16
    for n, c, hw in [(8, 96, 56), (8, 192, 28), (8, 384, 14), (8, 768, 7), (1, 96, 56), (1, 768, 7)]:
        x = torch.randn(n, c, hw, hw, device="cuda", dtype=h).to(memory_format=torch.channels_last)
        xl = x.permute(0, 2, 3, 1).contiguous()
        ln = torch.nn.LayerNorm(c).to("cuda", h)
        g = torch.randn(c, 1, 1, device="cuda", dtype=h)
        r = torch.randn_like(x)
        with torch.no_grad():
            t_ln = graph_us(lambda: ln(xl))
            t_ma = graph_us(lambda: g * x + r)
            t_add = graph_us(lambda: x + r)
            t_copy = graph_us(lambda: x.clone())
        print(f"n={n} c={c:4d} hw={hw:3d}: layernorm {t_ln:6.2f} us  scale*y+r {t_ma:6.2f} us  "
              f"add {t_add:6.2f} us  copy {t_copy:6.2f} us  ({x.numel() * 2 / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
