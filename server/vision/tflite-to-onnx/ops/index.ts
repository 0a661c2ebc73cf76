/** The ops the converter knows, by TFLite name. Anything else fails the conversion by name. */
import { densifyOp, dequantize } from './constants.ts';
import { conv2d, convolution2dTransposeBias, depthwiseConv2d } from './conv.ts';
import { add, hardSwish, logistic, mul, prelu, relu } from './elementwise.ts';
import { averagePool2d, maxPool2d } from './pool.ts';
import { resizeBilinear } from './resize.ts';
import { concatenation, depthToSpace, pad, reshape } from './shape.ts';
import type { OpConverter } from './types.ts';

export const OP_CONVERTERS: Readonly<Record<string, OpConverter>> = Object.freeze({
  ADD: add,
  AVERAGE_POOL_2D: averagePool2d,
  CONCATENATION: concatenation,
  CONV_2D: conv2d,
  DENSIFY: densifyOp,
  DEPTH_TO_SPACE: depthToSpace,
  DEPTHWISE_CONV_2D: depthwiseConv2d,
  DEQUANTIZE: dequantize,
  HARD_SWISH: hardSwish,
  LOGISTIC: logistic,
  MAX_POOL_2D: maxPool2d,
  MUL: mul,
  PAD: pad,
  PRELU: prelu,
  RELU: relu,
  RESHAPE: reshape,
  RESIZE_BILINEAR: resizeBilinear,
  'CUSTOM:Convolution2DTransposeBias': convolution2dTransposeBias,
});
