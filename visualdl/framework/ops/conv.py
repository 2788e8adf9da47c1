"""conv2d (im2col + GEMM, groups via batched GEMM) and 2-D max/average pooling, NCHW."""

from __future__ import annotations

from typing import Sequence

from .. import shapes
from ..codes import R_SUM
from ..dispatch import Op, apply, register
from ..tensor import Tensor

IntPair = int | Sequence[int]


@register("conv2d")
class Conv2D(Op):
    def forward(self, x, w, b, stride, padding, dilation, groups):
        be = self.be
        n, c, h, wd = x.shape
        oc, cg, kh, kw = w.shape
        oh = shapes.conv_out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = shapes.conv_out_size(wd, kw, stride[1], padding[1], dilation[1])
        area = oh * ow
        cols = be.im2col(x, (kh, kw), stride, padding, dilation, (oh, ow))  # (C*KK, N*L)
        kk = cg * kh * kw
        if groups == 1:
            y = be.matmul(be.reshape(w, (oc, kk)), cols)
        else:
            y = be.matmul(be.reshape(w, (groups, oc // groups, kk)),
                          be.reshape(cols, (groups, kk, n * area)))
        y = be.permute(be.reshape(y, (oc, n, area)), (1, 0, 2))  # (N, OC, L)
        if b is not None:
            be.bias_add_(y, b, 1)
        if self.recording:
            self.saved = (cols if self.needs[1] else None, w, x.shape, (oh, ow))
        return be.reshape(y, (n, oc, oh, ow))

    def backward(self, g):
        be = self.be
        cols, w, xshape, (oh, ow) = self.saved
        a = self.attrs
        groups = a["groups"]
        n = xshape[0]
        oc, cg, kh, kw = w.shape
        kk = cg * kh * kw
        nl = n * oh * ow
        g2 = be.reshape(be.permute(be.reshape(g, (n, oc, oh * ow)), (1, 0, 2)),
                        (groups, oc // groups, nl))
        gx = gw = gb = None
        if self.needs[1]:
            gw = be.reshape(be.matmul(g2, be.reshape(cols, (groups, kk, nl)), tb=True), w.shape)
        if self.needs[0]:
            gcols = be.matmul(be.reshape(w, (groups, oc // groups, kk)), g2, ta=True)
            gx = be.col2im(be.reshape(gcols, (groups * kk, nl)), xshape, (kh, kw), a["stride"],
                           a["padding"], a["dilation"], (oh, ow))
        if len(self.needs) > 2 and self.needs[2]:  # one contiguous pass over (OC, N*L)
            gb = be.reshape(be.reduce(R_SUM, be.reshape(g2, (oc, nl)), (1,)), (oc,))
        return gx, gw, gb


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
           padding: IntPair = 0, dilation: IntPair = 1, groups: int = 1) -> Tensor:
    """2-D convolution of NCHW input with (OC, C/groups, KH, KW) weight."""
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"conv2d expects 4-d input and weight, got {x.shape} and {weight.shape}")
    if x.shape[1] != weight.shape[1] * groups or weight.shape[0] % groups:
        raise ValueError(f"conv2d: input channels {x.shape[1]} / out channels {weight.shape[0]} "
                         f"do not fit weight {weight.shape} with groups={groups}")
    return apply("conv2d", x, weight, bias, stride=shapes.pair(stride),
                 padding=shapes.pair(padding), dilation=shapes.pair(dilation), groups=int(groups))


def _pool_geometry(x: Tensor, kernel_size: IntPair, stride: IntPair | None, padding: IntPair):
    if x.ndim != 4:
        raise ValueError(f"pooling expects NCHW input, got shape {x.shape}")
    k = shapes.pair(kernel_size)
    s = shapes.pair(stride if stride is not None else kernel_size)
    p = shapes.pair(padding)
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise ValueError("pooling padding must be at most half the kernel size")
    out = (shapes.conv_out_size(x.shape[2], k[0], s[0], p[0], 1),
           shapes.conv_out_size(x.shape[3], k[1], s[1], p[1], 1))
    return k, s, p, out


@register("max_pool2d")
class MaxPool2D(Op):
    def forward(self, x, kernel_size, stride, padding, out_hw):
        y, arg = self.be.max_pool2d(x, kernel_size, stride, padding, out_hw)
        if self.recording:
            self.saved = (arg, x.shape)
        return y

    def backward(self, g):
        arg, xshape = self.saved
        return (self.be.max_pool2d_grad(g, arg, xshape),)


@register("avg_pool2d")
class AvgPool2D(Op):
    def forward(self, x, kernel_size, stride, padding, out_hw, count_include_pad):
        if self.recording:
            self.saved = x.shape
        return self.be.avg_pool2d(x, kernel_size, stride, padding, out_hw, count_include_pad)

    def backward(self, g):
        a = self.attrs
        return (self.be.avg_pool2d_grad(g, self.saved, a["kernel_size"], a["stride"],
                                        a["padding"], a["count_include_pad"]),)


def max_pool2d(x: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
               padding: IntPair = 0) -> Tensor:
    k, s, p, out = _pool_geometry(x, kernel_size, stride, padding)
    return apply("max_pool2d", x, kernel_size=k, stride=s, padding=p, out_hw=out)


def avg_pool2d(x: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
               padding: IntPair = 0, count_include_pad: bool = True) -> Tensor:
    k, s, p, out = _pool_geometry(x, kernel_size, stride, padding)
    return apply("avg_pool2d", x, kernel_size=k, stride=s, padding=p, out_hw=out,
                 count_include_pad=bool(count_include_pad))
