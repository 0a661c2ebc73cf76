/** CONV_2D, DEPTHWISE_CONV_2D and MediaPipe's Convolution2DTransposeBias. */
import { permute } from '../constants.ts';
import type { GraphBuilder } from '../graph-builder.ts';
import type { TfliteOperator } from '../tflite-model.ts';
import { samePads, type OpConverter } from './types.ts';

function convolution(op: TfliteOperator, g: GraphBuilder, depthwise: boolean): void {
  const [input, filter, bias] = op.inputs as [number, number, number | undefined];
  const o = op.options;
  const w = g.requireConst(filter, op.op);
  const [, kh, kw] = w.dims as [number, number, number, number];
  // TFLite filters: conv OHWI → OIHW; depthwise [1,H,W,C·M] → [C·M,1,H,W] (ONNX group = C).
  const weights = permute(w, depthwise ? [3, 0, 1, 2] : [0, 3, 1, 2]);
  const [, inH, inW, inC] = g.shape(input) as [number, number, number, number];
  const [, outH, outW] = g.shape(op.outputs[0]!) as [number, number, number, number];
  const stride: [number, number] = [o.strideH ?? 1, o.strideW ?? 1];
  const dilation: [number, number] = [o.dilationH ?? 1, o.dilationW ?? 1];
  const pads = o.padding === 'VALID' ? [0, 0, 0, 0] : samePads([inH, inW], [outH, outW], [kh, kw], stride, dilation);
  const inputs = [g.input(input), g.floatInitializer(g.fresh('W'), weights)];
  if (bias !== undefined && bias >= 0) inputs.push(g.input(bias));
  const attributes = { kernel_shape: [kh, kw], strides: stride, dilations: dilation, pads, group: depthwise ? inC : 1 };
  g.withActivation(op, o.activation, (out) => g.node('Conv', inputs, [out], attributes));
}

export const conv2d: OpConverter = (op, g) => convolution(op, g, false);
export const depthwiseConv2d: OpConverter = (op, g) => convolution(op, g, true);

/**
 * MediaPipe's transpose convolution with bias. Its custom options are a raw
 * TfLiteTransposeConvParams struct (int32 padding: 1 SAME / 2 VALID,
 * stride_w, stride_h), not flexbuffers.
 */
export const convolution2dTransposeBias: OpConverter = (op, g) => {
  const [input, filter, bias] = op.inputs as [number, number, number];
  const raw = op.customOptions;
  if (!raw || raw.byteLength < 12) throw new Error(`${op.op}: custom options missing`);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const same = view.getInt32(0, true) === 1;
  const stride = [view.getInt32(8, true), view.getInt32(4, true)] as [number, number];
  const w = g.requireConst(filter, op.op);
  const [, kh, kw] = w.dims as [number, number, number, number];
  const [, inH, inW] = g.shape(input) as [number, number, number, number];
  const [, outH, outW] = g.shape(op.outputs[0]!) as [number, number, number, number];
  // Same arithmetic as a forward conv from the output back to the input.
  const pads = same ? samePads([outH, outW], [inH, inW], [kh, kw], stride) : [0, 0, 0, 0];
  const expected = [0, 1].map((a) => ([inH, inW][a]! - 1) * stride[a]! + [kh, kw][a]! - pads[a]! - pads[a + 2]!);
  if (expected[0] !== outH || expected[1] !== outW) throw new Error(`${op.op}: output ${outH}x${outW} does not follow from the options`);
  const weights = permute(w, [3, 0, 1, 2]); // OHWI → ConvTranspose's [I, O, H, W]
  g.node('ConvTranspose', [g.input(input), g.floatInitializer(g.fresh('Wt'), weights), g.input(bias)], [g.name(op.outputs[0]!)], {
    kernel_shape: [kh, kw],
    strides: stride,
    pads,
  });
};
