/** RESIZE_BILINEAR → Resize(linear) with TFLite's coordinate convention. */
import type { OpConverter } from './types.ts';

export const resizeBilinear: OpConverter = (op, g) => {
  const [input] = op.inputs as [number];
  const [n, , , c] = g.shape(input) as [number, number, number, number];
  const [, outH, outW] = g.shape(op.outputs[0]!) as [number, number, number, number];
  const mode = op.options.alignCorners ? 'align_corners' : op.options.halfPixelCenters ? 'half_pixel' : 'asymmetric';
  g.node('Resize', [g.input(input), '', '', g.int64s([n, c, outH, outW])], [g.name(op.outputs[0]!)], {
    mode: 'linear',
    coordinate_transformation_mode: mode,
  });
};
