/**
 * The smallest useful ONNX model, written out byte by byte: y = x + x with x, y float32 [PROBE_WIDTH].
 * Probing an execution provider means creating a session of it on that provider and running it once; keeping the
 * model in code (not a file) means the probe works wherever the sidecar runs, before any real model is installed.
 *
 * The bytes are an ONNX ModelProto in protobuf wire format (onnx.proto field numbers below), IR version 8, opset 17.
 */

/** Length of the probe's input and output vectors. */
export const PROBE_WIDTH = 4;

/** Protobuf wire types used here. */
const VARINT = 0;
const LENGTH_DELIMITED = 2;

/** One protobuf field: its tag, then a varint or length-prefixed bytes. */
type Field = number[];

/** A non-negative integer (< 2^31 here) as a protobuf varint. */
function varint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return out;
}

function intField(field: number, value: number): Field {
  return [...varint((field << 3) | VARINT), ...varint(value)];
}

function bytesField(field: number, bytes: number[]): Field {
  return [...varint((field << 3) | LENGTH_DELIMITED), ...varint(bytes.length), ...bytes];
}

function stringField(field: number, text: string): Field {
  return bytesField(field, [...new TextEncoder().encode(text)]);
}

function message(...fields: Field[]): number[] {
  return fields.flat();
}

/** onnx.ValueInfoProto of a float32 vector [width]: name=1, type=2 → TypeProto.tensor_type=1 → elem_type=1, shape=2 → dim=1 → dim_value=1. */
function floatVector(name: string, width: number): number[] {
  const FLOAT = 1;
  const shape = message(bytesField(1, message(intField(1, width))));
  const tensorType = message(intField(1, FLOAT), bytesField(2, shape));
  return message(stringField(1, name), bytesField(2, message(bytesField(1, tensorType))));
}

/**
 * The probe model's bytes (82): ModelProto { ir_version=1: 8, producer_name=2, graph=7, opset_import=8: {version=2: 17} }
 * with GraphProto { node=1: Add(x, x) → y, name=2, input=11: x, output=12: y }.
 */
export function probeModelBytes(): Uint8Array {
  // NodeProto: input=1 (twice), output=2, op_type=4
  const add = message(stringField(1, 'x'), stringField(1, 'x'), stringField(2, 'y'), stringField(4, 'Add'));
  const graph = message(
    bytesField(1, add),
    stringField(2, 'autorig_probe'),
    bytesField(11, floatVector('x', PROBE_WIDTH)),
    bytesField(12, floatVector('y', PROBE_WIDTH)),
  );
  const model = message(
    intField(1, 8),
    stringField(2, 'autorig'),
    bytesField(7, graph),
    bytesField(8, message(intField(2, 17))),
  );
  return Uint8Array.from(model);
}

/** The probe's fixed input, and what a working provider must answer for it (x + x, exact in float32). */
export function probeCase(): { input: Float32Array; expected: Float32Array } {
  const input = Float32Array.from({ length: PROBE_WIDTH }, (_, i) => 0.5 + i);
  return { input, expected: input.map((v) => v + v) };
}
