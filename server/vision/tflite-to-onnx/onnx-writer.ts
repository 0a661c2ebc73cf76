/** The converter's view of the shared ONNX writer (server/onnx/writer.ts). */
export * from '../../onnx/writer.ts';
