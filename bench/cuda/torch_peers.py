"""PyTorch's side of bench/cuda/gpu_bench.sh, on the same GPU in the same run:
ResNet-50 inference (batch 1, 32) and training step (batch 32), the MLP's
training step, a 4096^3 float32 GEMM (cuBLAS, TF32 off), a device-to-device
copy and an eager elementwise chain relu(2x + 1). Each time is the median of
CUDA-event-timed repetitions after warm-up; prints `name ms` lines."""
import statistics
import sys

import torch
import torchvision

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False  # symc computes in float32
torch.backends.cudnn.benchmark = True


def median_ms(fn, repeat, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def report(name, ms, extra=""):
    print("torch %-22s %10.3f ms %s" % (name, ms, extra))
    sys.stdout.flush()


def main():
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    net = torchvision.models.resnet50().to(dev)
    net.eval()
    with torch.no_grad():
        for batch in (1, 32):
            x = torch.randn(batch, 3, 224, 224, device=dev, generator=gen)
            report("r50-b%d" % batch, median_ms(lambda: net(x), 20))
    net.train()
    x = torch.randn(32, 3, 224, 224, device=dev, generator=gen)
    label = torch.randint(0, 1000, (32,), device=dev, generator=gen)
    loss = torch.nn.CrossEntropyLoss()

    def step(model, data, target):
        model.zero_grad(set_to_none=False)
        loss(model(data), target).backward()

    report("r50-train-b32", median_ms(lambda: step(net, x, label), 10))
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 4)).to(dev)
    xm = torch.randn(64, 784, device=dev, generator=gen)
    lm = torch.randint(0, 4, (64,), device=dev, generator=gen)
    report("mlp-train", median_ms(lambda: step(mlp, xm, lm), 200))
    a = torch.randn(4096, 4096, device=dev, generator=gen)
    b = torch.randn(4096, 4096, device=dev, generator=gen)
    ms = median_ms(lambda: a @ b.t(), 20)
    report("gemm", ms, "%.1f TFLOP/s" % (2 * 4096 ** 3 / ms / 1e9))
    x = torch.randn(8192, 8192, device=dev, generator=gen)
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x), 50)
    report("copy", ms, "%.0f GB/s read+write" % (2 * x.numel() * 4 / ms / 1e6))
    ms = median_ms(lambda: torch.relu(x * 2 + 1), 50)
    report("ew", ms, "%.0f GB/s (one read, one write)" % (2 * x.numel() * 4 / ms / 1e6))


if __name__ == "__main__":
    main()
