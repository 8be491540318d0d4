# Peer timings (PyTorch FP16, CUDA graph replay of 50 back-to-back calls, best of 5) at the layer
# shapes of ConvNeXt-T and ViT-B/16: cuBLAS linear (+ a separate GELU), cuDNN depthwise 7x7,
# LayerNorm, scale * y + residual, add, copy. Run on the GPU machine: python3 torch_layer_peers.py
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = True
dev = "cuda"
def gt(fn, reps=50):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps): fn()
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
    best = 1e9
    for _ in range(5):
        e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1000 / reps)
    return best
h = torch.float16
for (M, K, N, gelu) in [(25088, 96, 384, 1), (25088, 384, 96, 0), (6272, 192, 768, 1), (6272, 768, 192, 0),
                        (1568, 384, 1536, 1), (1568, 1536, 384, 0), (392, 768, 3072, 1), (392, 3072, 768, 0),
                        (3136, 96, 384, 1), (3136, 384, 96, 0), (49, 768, 3072, 1), (49, 3072, 768, 0),
                        (1576, 768, 2304, 0), (1576, 768, 768, 0), (1576, 768, 3072, 1), (1576, 3072, 768, 0),
                        (197, 768, 2304, 0), (197, 768, 3072, 1)]:
    a = torch.randn(M, K, device=dev, dtype=h); w = torch.randn(N, K, device=dev, dtype=h); b = torch.randn(N, device=dev, dtype=h)
    t_mm = gt(lambda: F.linear(a, w, b))
    y = F.linear(a, w, b)
    t_gelu = gt(lambda: F.gelu(y)) if gelu else 0
    print(f"linear M={M:6d} K={K:5d} N={N:5d}  cublas {t_mm:7.2f} us  {2*M*K*N/t_mm*1e-6:6.1f} TFLOP/s   gelu {t_gelu:6.2f} us")
for (n, c, hw) in [(8, 96, 56), (8, 192, 28), (8, 384, 14), (8, 768, 7), (1, 96, 56), (1, 768, 7)]:
    x = torch.randn(n, c, hw, hw, device=dev, dtype=h).to(memory_format=torch.channels_last)
    conv = torch.nn.Conv2d(c, c, 7, padding=3, groups=c).to(dev, h).to(memory_format=torch.channels_last)
    xl = x.permute(0, 2, 3, 1).contiguous()
    ln = torch.nn.LayerNorm(c).to(dev, h)
    g = torch.randn(c, 1, 1, device=dev, dtype=h)
    r = torch.randn_like(x)
    with torch.no_grad():
        t_dw = gt(lambda: conv(x))
        t_ln = gt(lambda: ln(xl))
        t_ma = gt(lambda: g * x + r)
        t_add = gt(lambda: x + r)
        t_copy = gt(lambda: x.clone())
    print(f"n={n} c={c:4d} hw={hw:3d}: dw7 {t_dw:6.2f} us  layernorm {t_ln:6.2f} us  scale*y+r {t_ma:6.2f} us  add {t_add:6.2f} us  copy {t_copy:6.2f} us  ({x.numel()*2/1e6:.2f} MB)")
