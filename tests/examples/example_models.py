"""Tiny models with fixed weights for the detect and segment example tests, so that what they
must find is known by hand, and the numpy reference of the detector's decode and NMS.

detector: input [1, 3, 32, 32] in [0, 1]; one 8x8 stride-8 conv to the grid head of
  tests/accuracy's detector, [1, 7, 4, 4] (2 classes, stride 8): objectness 10 (R + G) - 5 over
  the cell's mean, centre logits 0.5 and -0.5, log sizes log 1.5 and log 2 (boxes 12 x 16),
  class logits +-10 (R - G): a red cell is class 0, a green one class 1.
segmenter: input [1, 3, 32, 32]; a 2x2 stride-2 conv to [1, 4, 16, 16] logits: class 0 a
  constant 0.5 (black), classes 1-3 10 x the mean of R, G, B.
Either with channels_last gets a final transpose to [1, H, W, C].

    example_models.py FOLDER   writes detector.onnx, segmenter.onnx and the pictures there
"""
import math
import os
import sys

import numpy as np
import torch
from torch import nn

STRIDE = 8


class Head(nn.Module):
    def __init__(self, conv, channels_last):
        super().__init__()
        self.conv, self.channels_last = conv, channels_last

    def forward(self, x):
        y = self.conv(x)
        return y.permute(0, 2, 3, 1) if self.channels_last else y


def detector(channels_last=False):
    conv = nn.Conv2d(3, 7, STRIDE, STRIDE)
    with torch.no_grad():
        conv.weight.zero_()
        mean = 1.0 / (STRIDE * STRIDE)
        conv.weight[0, 0:2] = 10 * mean                # objectness: 10 (R + G) - 5
        conv.weight[5, 0], conv.weight[5, 1] = 10 * mean, -10 * mean
        conv.weight[6, 0], conv.weight[6, 1] = -10 * mean, 10 * mean
        conv.bias.copy_(torch.tensor([-5, 0.5, -0.5, math.log(1.5), math.log(2), 0, 0]))
    return Head(conv, channels_last).eval()


def segmenter(channels_last=False):
    conv = nn.Conv2d(3, 4, 2, 2)
    with torch.no_grad():
        conv.weight.zero_()
        for c in range(3):
            conv.weight[c + 1, c] = 10 / 4
        conv.bias.copy_(torch.tensor([0.5, 0, 0, 0]))
    return Head(conv, channels_last).eval()


def export(model, path):
    x = torch.zeros(1, 3, 32, 32)
    torch.onnx.export(model, x, path, input_names=['images'], output_names=['out'],
                      opset_version=13)


def run(model, picture):
    """The model on a [H, W, 3] uint8 picture of twice the input's size, resized as the
    examples' stretch does: 2x2 blocks averaged (bilinear, half-pixel centres, halving)."""
    h, w, _ = picture.shape
    x = picture.astype(np.float64).reshape(h // 2, 2, w // 2, 2, 3).mean((1, 3)) / 255
    x = torch.from_numpy(x.transpose(2, 0, 1)[None].astype(np.float32))
    with torch.no_grad():
        return model(x).numpy()


def cells_picture():
    """64x64: red cells (1, 0) and (1, 1) (vertically adjacent: their boxes' IoU is 1/3), green
    cells (2, 1) and (3, 3), of decreasing brightness; 16x16 picture pixels a cell."""
    p = np.zeros((64, 64, 3), np.uint8)
    cells = {(1, 0): (0, 255), (1, 1): (0, 230), (2, 1): (1, 204), (3, 3): (1, 179)}
    for (gx, gy), (channel, value) in cells.items():
        p[gy * 16:(gy + 1) * 16, gx * 16:(gx + 1) * 16, channel] = value
    return p


def quadrants_picture():
    """64x64: black top left, red bottom left, green top right, blue bottom right."""
    p = np.zeros((64, 64, 3), np.uint8)
    p[32:, :32, 0] = 255
    p[:32, 32:, 1] = 255
    p[32:, 32:, 2] = 255
    return p


def write_ppm(path, picture):
    h, w, _ = picture.shape
    with open(path, 'wb') as f:
        f.write(b'P6\n%d %d\n255\n' % (w, h))
        f.write(picture.astype(np.uint8).tobytes())


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def decode(head, image_size, score_min):
    """[5 + C, G, G] -> [K, 7]: x0, y0, x1, y1, score, class, candidate index (cell * C + class),
    as tests/accuracy/int8_accuracy.py's decode, in float64."""
    h = head.astype(np.float64)
    classes, g = h.shape[0] - 5, h.shape[1]
    gy, gx = np.mgrid[0:g, 0:g]
    cx, cy = (gx + sigmoid(h[1])) * STRIDE, (gy + sigmoid(h[2])) * STRIDE
    w, hh = np.exp(h[3]) * STRIDE, np.exp(h[4]) * STRIDE
    boxes = np.stack([cx - w / 2, cy - hh / 2, cx + w / 2, cy + hh / 2], -1).reshape(-1, 4)
    boxes = np.clip(boxes, 0.0, float(image_size))
    logits = h[5:].reshape(classes, -1).T
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    scores = sigmoid(h[0]).reshape(-1, 1) * p
    cell, cls = np.nonzero(scores >= score_min)
    return np.column_stack([boxes[cell], scores[cell, cls], cls, cell * classes + cls])


def iou(box, boxes):
    ix = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    iy = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = ix * iy
    union = (box[2] - box[0]) * (box[3] - box[1]) + \
        (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def nms(dets, iou_max, max_detections):
    """Greedy per-class NMS in the order score descending, then candidate index ascending (the
    runtime's documented tie rule); IoU > iou_max suppresses."""
    order = np.lexsort((dets[:, 6], -dets[:, 4]))
    dets = dets[order]
    keep, suppressed = [], np.zeros(len(dets), bool)
    for i in range(len(dets)):
        if suppressed[i]:
            continue
        keep.append(dets[i])
        same = dets[:, 5] == dets[i, 5]
        later = np.arange(len(dets)) > i
        suppressed |= same & later & (iou(dets[i, :4], dets[:, :4]) > iou_max)
    return np.array(keep[:max_detections]).reshape(-1, 7)


def main(folder):
    """Writes the models and pictures of the examples' quick start (README.md) into folder."""
    os.makedirs(folder, exist_ok=True)
    export(detector(), os.path.join(folder, 'detector.onnx'))
    export(segmenter(), os.path.join(folder, 'segmenter.onnx'))
    write_ppm(os.path.join(folder, 'cells.ppm'), cells_picture())
    write_ppm(os.path.join(folder, 'quadrants.ppm'), quadrants_picture())
    print(f'wrote detector.onnx, segmenter.onnx, cells.ppm, quadrants.ppm in {folder}')


if __name__ == '__main__':
    main(sys.argv[1])
